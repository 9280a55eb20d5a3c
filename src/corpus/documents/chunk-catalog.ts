/**
 * A namespace's chunks as the document library holds them in memory, compactly (issue 44): no object per chunk. Each
 * document holds what its chunks share (doc id, source, title, fingerprint, versions, metadata) once, and one array of
 * slots, five a chunk (text, index, heading path, anchor, the rare fields); a chunk id `<doc_id>#<index>` is not held
 * (it is rebuilt from its document and index), versions are one object per distinct triple, and a document's chunks in
 * one section share their heading path. `get` builds the `ChunkRecord` a reader asks for, the same fields a decoded
 * point gives (`decodeChunk`), in its key order.
 */
import { runSteps, type LoadSteps } from '../../providers/embedded/load-steps.js'
import type { DocumentMetadata } from '../../kernel/document-fields.js'
import { chunkId, type ChunkRecord, type IndexVersions } from '../../kernel/chunk-payload.js'

const SLOTS = 5
const TEXT = 0
const INDEX = 1
const HEADINGS = 2
const ANCHOR = 3
const RARE = 4
/** Documents between the steps of `toColumnsSteps` and `fromColumnsSteps` (a few milliseconds' work). */
const STEP_DOCUMENTS = 1024
/** Slots past which a document's array grows by push (amortised) rather than by an exact copy. */
const EXACT_UP_TO = 16 * SLOTS

/** What the chunks of one document share; a chunk whose own differ keeps its own in its rare fields. */
interface Shared {
  doc_id: string
  source: string
  title: string | undefined
  fingerprint: string | undefined
  versions: IndexVersions | undefined
  metadata: DocumentMetadata | undefined
}

/** Fields few chunks have: an id not of the form `<doc_id>#<index>`, a cut at line ends, pages, other shared fields. */
interface Rare {
  id?: string
  split?: 'lines'
  page?: number
  page_end?: number
  shared?: Shared
}

/**
 * A catalog as plain values (JSON-safe): tables of versions, shared fields and heading paths, one row per document
 * (its shared fields, its chunk count), then one column per chunk field in document order; `rare` lists the chunks
 * with rare fields by position, their `shared` as a row of the shared table.
 */
export interface CatalogColumns {
  versions: Array<[chunker: string, analyzer: string, model: string]>
  shared: Array<[docId: string, source: string, title: string | null, fingerprint: string | null, versions: number, metadata: DocumentMetadata | null]>
  headingPaths: string[][]
  docs: Array<[shared: number, chunks: number]>
  texts: string[]
  indexes: number[]
  headings: number[]
  anchors: Array<string | null>
  rare: Array<[chunk: number, rare: Omit<Rare, 'shared'> & { shared?: number }]>
}

interface DocumentEntry {
  shared: Shared
  slots: unknown[]
}

export class ChunkCatalog {
  readonly #docs = new Map<string, DocumentEntry>()
  /** Chunks whose id is not `<doc_id>#<index>`: id -> its document. */
  readonly #odd = new Map<string, string>()
  readonly #versions = new Map<string, IndexVersions>()
  #size = 0

  get size(): number { return this.#size }

  get(id: string): ChunkRecord | undefined {
    const found = this.#find(id)
    return found && recordAt(found.entry, found.at, id)
  }

  /** The ids of a document's chunks, in the order they were added; undefined when none is held. */
  idsOf(docId: string): string[] | undefined {
    const entry = this.#docs.get(docId)
    if (!entry) return undefined
    const out: string[] = []
    for (let at = 0; at < entry.slots.length; at += SLOTS) out.push(idAt(entry, at))
    return out
  }

  /** A document's chunks, in the order they were added (none when it is not held). */
  chunksOf(docId: string): ChunkRecord[] {
    const entry = this.#docs.get(docId)
    if (!entry) return []
    const out: ChunkRecord[] = []
    for (let at = 0; at < entry.slots.length; at += SLOTS) out.push(recordAt(entry, at, idAt(entry, at)))
    return out
  }

  *values(): IterableIterator<ChunkRecord> {
    for (const entry of this.#docs.values()) {
      for (let at = 0; at < entry.slots.length; at += SLOTS) yield recordAt(entry, at, idAt(entry, at))
    }
  }

  /** Each document held, in the order added: its id, and the source, title and number of its chunks (its first chunk's). */
  *documents(): IterableIterator<{ id: string; source: string; title: string | undefined; chunks: number }> {
    for (const [id, entry] of this.#docs) yield { id, source: entry.shared.source, title: entry.shared.title, chunks: entry.slots.length / SLOTS }
  }

  /** Holds `c`, in place of the chunk of the same id if any; answers whether the id is new. */
  add(c: ChunkRecord): boolean {
    const held = this.#find(c.id)
    if (held) this.#remove(held.docId, held.at)
    let entry = this.#docs.get(c.doc_id)
    const shared = this.#sharedOf(c, entry?.shared)
    if (!entry) {
      entry = { shared, slots: [] }
      this.#docs.set(c.doc_id, entry)
    }
    const odd = c.id !== chunkId(c.doc_id, c.chunk_index)
    const rare: Rare = {
      ...(odd ? { id: c.id } : {}), ...(c.split ? { split: c.split } : {}),
      ...(c.page ? { page: c.page } : {}), ...(c.page_end ? { page_end: c.page_end } : {}),
      ...(shared !== entry.shared ? { shared } : {})
    }
    const at = entry.slots.length
    const values = [c.text, c.chunk_index, c.heading_path && headingsOf(entry, at, c.heading_path), c.anchor, Object.keys(rare).length > 0 ? rare : undefined]
    if (at < EXACT_UP_TO) {
      // an array grown by push keeps room for more: a small document's slots are copied at their exact length instead
      const next = new Array<unknown>(at + SLOTS)
      for (let i = 0; i < at; i++) next[i] = entry.slots[i]
      for (let i = 0; i < SLOTS; i++) next[at + i] = values[i]
      entry.slots = next
    } else entry.slots.push(...values)
    if (odd) this.#odd.set(c.id, c.doc_id)
    this.#size += 1
    return held === undefined
  }

  /** Removes every chunk of these documents. */
  deleteDocuments(docIds: Iterable<string>): void {
    for (const docId of docIds) {
      const entry = this.#docs.get(docId)
      if (!entry) continue
      for (let at = 0; at < entry.slots.length; at += SLOTS) {
        const id = (entry.slots[at + RARE] as Rare | undefined)?.id
        if (id !== undefined) this.#odd.delete(id)
      }
      this.#size -= entry.slots.length / SLOTS
      this.#docs.delete(docId)
    }
  }

  /**
   * What the catalog holds, as plain columns in its own order (documents as added, a document's chunks as added): what
   * `fromColumns` makes the same catalog from (catalog-checkpoint.ts keeps it in a file).
   */
  toColumns(): CatalogColumns {
    return runSteps(this.toColumnsSteps())
  }

  /** `toColumns` a step every `STEP_DOCUMENTS` documents; the catalog must not change meanwhile. */
  *toColumnsSteps(): LoadSteps<CatalogColumns> {
    const versions = [...this.#versions.values()]
    const versionOf = new Map(versions.map((v, i) => [v, i]))
    const shared: CatalogColumns['shared'] = []
    const sharedOf = new Map<Shared, number>()
    const sharedAt = (s: Shared): number => {
      let n = sharedOf.get(s)
      if (n === undefined) {
        sharedOf.set(s, (n = shared.length))
        shared.push([s.doc_id, s.source, s.title ?? null, s.fingerprint ?? null, s.versions ? versionOf.get(s.versions)! : -1, s.metadata ?? null])
      }
      return n
    }
    const paths: string[][] = []
    const pathOf = new Map<readonly string[], number>()
    const out: CatalogColumns = { versions: versions.map((v) => [v.chunker, v.analyzer, v.model]), shared, headingPaths: paths, docs: [], texts: [], indexes: [], headings: [], anchors: [], rare: [] }
    let documents = 0
    for (const entry of this.#docs.values()) {
      if (++documents % STEP_DOCUMENTS === 0) yield
      out.docs.push([sharedAt(entry.shared), entry.slots.length / SLOTS])
      for (let at = 0; at < entry.slots.length; at += SLOTS) {
        const slots = entry.slots
        const path = slots[at + HEADINGS] as readonly string[] | undefined
        let p = -1
        if (path) {
          p = pathOf.get(path) ?? -1
          if (p < 0) pathOf.set(path, (p = paths.push([...path]) - 1))
        }
        const rare = slots[at + RARE] as Rare | undefined
        if (rare) {
          const { shared: own, ...rest } = rare
          out.rare.push([out.texts.length, { ...rest, ...(own ? { shared: sharedAt(own) } : {}) }])
        }
        out.texts.push(slots[at + TEXT] as string)
        out.indexes.push(slots[at + INDEX] as number)
        out.headings.push(p)
        out.anchors.push((slots[at + ANCHOR] as string | undefined) ?? null)
      }
    }
    return out
  }

  /** The catalog `toColumns` gave these columns of; throws a RangeError naming what does not fit. */
  static fromColumns(columns: CatalogColumns): ChunkCatalog {
    return runSteps(ChunkCatalog.fromColumnsSteps(columns))
  }

  /** `fromColumns` a step every `STEP_DOCUMENTS` documents. */
  static *fromColumnsSteps(columns: CatalogColumns): LoadSteps<ChunkCatalog> {
    const catalog = new ChunkCatalog()
    const bad = (why: string): never => { throw new RangeError(`catalog columns: ${why}`) }
    const versions = columns.versions.map(([chunker, analyzer, model]) => catalog.#internVersions({ chunker, analyzer, model }))
    const shared = columns.shared.map(([doc_id, source, title, fingerprint, v, metadata]): Shared => ({
      doc_id, source, title: title ?? undefined, fingerprint: fingerprint ?? undefined,
      versions: v < 0 ? undefined : (versions[v] ?? bad(`versions ${v}`)), metadata: metadata ?? undefined
    }))
    const paths = columns.headingPaths.map((p) => Object.freeze([...p]))
    const chunks = columns.texts.length
    if (columns.indexes.length !== chunks || columns.headings.length !== chunks || columns.anchors.length !== chunks) bad('columns of unequal lengths')
    const rare = new Map<number, Rare>()
    for (const [at, r] of columns.rare) {
      const s = r.shared === undefined ? undefined : (shared[r.shared] ?? bad(`shared ${r.shared}`))
      rare.set(at, { ...r, ...(s ? { shared: s } : {}) } as Rare)
    }
    let chunk = 0
    let documents = 0
    for (const [s, count] of columns.docs) {
      if (++documents % STEP_DOCUMENTS === 0) yield
      const entry: DocumentEntry = { shared: shared[s] ?? bad(`shared ${s}`), slots: new Array<unknown>(count * SLOTS) }
      if (chunk + count > chunks || catalog.#docs.has(entry.shared.doc_id)) bad(`document ${entry.shared.doc_id}`)
      for (let at = 0; at < count * SLOTS; at += SLOTS, chunk++) {
        const h = columns.headings[chunk]!
        const r = rare.get(chunk)
        entry.slots[at + TEXT] = columns.texts[chunk]
        entry.slots[at + INDEX] = columns.indexes[chunk]
        entry.slots[at + HEADINGS] = h < 0 ? undefined : (paths[h] ?? bad(`heading path ${h}`))
        entry.slots[at + ANCHOR] = columns.anchors[chunk] ?? undefined
        entry.slots[at + RARE] = r
        if (r?.id !== undefined) catalog.#odd.set(r.id, entry.shared.doc_id)
      }
      catalog.#docs.set(entry.shared.doc_id, entry)
    }
    if (chunk !== chunks) bad(`${chunks - chunk} chunks of no document`)
    catalog.#size = chunks
    return catalog
  }

  #find(id: string): { docId: string; entry: DocumentEntry; at: number } | undefined {
    const oddDoc = this.#odd.get(id)
    if (oddDoc !== undefined) {
      const entry = this.#docs.get(oddDoc)!
      for (let at = 0; at < entry.slots.length; at += SLOTS) if ((entry.slots[at + RARE] as Rare | undefined)?.id === id) return { docId: oddDoc, entry, at }
      return undefined
    }
    const hash = id.lastIndexOf('#')
    if (hash < 0) return undefined
    const docId = id.slice(0, hash)
    const entry = this.#docs.get(docId)
    const digits = id.slice(hash + 1)
    if (!entry || !/^(0|[1-9]\d*)$/.test(digits)) return undefined
    const index = Number(digits)
    const slots = entry.slots
    // chunks are mostly added in index order: try the chunk's own place first
    const guess = index * SLOTS
    if (guess < slots.length && slots[guess + INDEX] === index && (slots[guess + RARE] as Rare | undefined)?.id === undefined) return { docId, entry, at: guess }
    for (let at = 0; at < slots.length; at += SLOTS) {
      if (slots[at + INDEX] === index && (slots[at + RARE] as Rare | undefined)?.id === undefined) return { docId, entry, at }
    }
    return undefined
  }

  #remove(docId: string, at: number): void {
    const entry = this.#docs.get(docId)!
    const id = (entry.slots[at + RARE] as Rare | undefined)?.id
    if (id !== undefined) this.#odd.delete(id)
    entry.slots.splice(at, SLOTS)
    this.#size -= 1
    if (entry.slots.length === 0) this.#docs.delete(docId)
  }

  /** The document's shared fields when `c` has the same, else `c`'s own (its versions one object per triple). */
  #sharedOf(c: ChunkRecord, current: Shared | undefined): Shared {
    const versions = c.versions && this.#internVersions(c.versions)
    if (current && current.doc_id === c.doc_id && current.source === c.source && current.title === c.title &&
      current.fingerprint === c.fingerprint && current.versions === versions && sameMetadata(current.metadata, c.metadata)) return current
    return { doc_id: c.doc_id, source: c.source, title: c.title, fingerprint: c.fingerprint, versions, metadata: c.metadata }
  }

  #internVersions(v: IndexVersions): IndexVersions {
    const key = `${v.chunker}\u0000${v.analyzer}\u0000${v.model}`
    let held = this.#versions.get(key)
    if (!held) this.#versions.set(key, (held = Object.freeze({ chunker: v.chunker, analyzer: v.analyzer, model: v.model })))
    return held
  }
}

/** The heading path of another chunk of the document when equal (chunks of one section share one array). */
function headingsOf(entry: DocumentEntry, before: number, path: readonly string[]): readonly string[] {
  for (let at = before - SLOTS; at >= 0 && at >= before - 8 * SLOTS; at -= SLOTS) {
    const other = entry.slots[at + HEADINGS] as readonly string[] | undefined
    if (other && other.length === path.length && other.every((h, i) => h === path[i])) return other
  }
  return Object.freeze([...path])
}

const sameMetadata = (a: DocumentMetadata | undefined, b: DocumentMetadata | undefined): boolean =>
  a === b || (a !== undefined && b !== undefined && JSON.stringify(a) === JSON.stringify(b))

function idAt(entry: DocumentEntry, at: number): string {
  const rare = entry.slots[at + RARE] as Rare | undefined
  return rare?.id ?? chunkId((rare?.shared ?? entry.shared).doc_id, entry.slots[at + INDEX] as number)
}

/** The chunk at `at`, as `decodeChunk` gives it (the same keys, in its order). */
function recordAt(entry: DocumentEntry, at: number, id: string): ChunkRecord {
  const slots = entry.slots
  const rare = slots[at + RARE] as Rare | undefined
  const s = rare?.shared ?? entry.shared
  const headings = slots[at + HEADINGS] as readonly string[] | undefined
  const anchor = slots[at + ANCHOR] as string | undefined
  return {
    id, doc_id: s.doc_id, chunk_index: slots[at + INDEX] as number, text: slots[at + TEXT] as string, source: s.source,
    ...(s.title !== undefined ? { title: s.title } : {}),
    ...(headings ? { heading_path: [...headings] } : {}),
    ...(anchor !== undefined ? { anchor } : {}),
    ...(rare?.split ? { split: rare.split } : {}),
    ...(rare?.page ? { page: rare.page } : {}), ...(rare?.page_end ? { page_end: rare.page_end } : {}),
    ...(s.versions ? { versions: s.versions } : {}),
    ...(s.fingerprint !== undefined ? { fingerprint: s.fingerprint } : {}),
    ...(s.metadata !== undefined ? { metadata: s.metadata } : {})
  }
}

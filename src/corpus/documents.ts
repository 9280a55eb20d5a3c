import type { Embedder } from '../providers/embedder/port.js'
import type { ImageInput } from './images/image-input.js'
import type { ImagesReport } from './images/images-report.js'
import type { LexicalChange, LexicalDocument, LexicalIndex, LexicalIndexes } from '../providers/lexical-index/port.js'
import type { VectorRecord, VectorStore } from '../providers/vector-store/port.js'
import { CHUNKER_VERSION, chunkMarkdown, parseMarkdown } from './chunker.js'
import { analyzerTag } from '../kernel/analyzers.js'
import { chunkId, decodeChunk, encodeChunk, sameVersions, type ChunkRecord, type IndexVersions } from '../kernel/chunk-payload.js'
import type { DocumentMetadata } from '../kernel/document-fields.js'
import { lexicalText, passageText } from '../kernel/lexical-text.js'
import { textProblem } from './text-junk.js'
import { normaliseText } from './text-normalise.js'
import { documentFingerprint } from './fingerprint.js'
import { decodeState } from './write-window.js'
import type { Exclusive, Lease } from './write-lock.js'
import type { DocumentLibraryView, DocumentSummary } from './document-views.js'

export interface DocumentInput {
  id: string
  text: string
  source?: string
  title?: string
  metadata?: DocumentMetadata
  /** The document's pictures (src/corpus/appliers/images.ts): written beside its chunks, replacing the ones it had. */
  images?: ImageInput[]
}

/**
 * Where a re-read of some documents spent its time, in ms: `queued` behind this library's own writes, `store`
 * reading the vector store, `lexical` bringing the lexical index up to it (its copy's change applied).
 */
export type RefreshPhases = { queued?: number; store?: number; lexical?: number }

/** How many documents a catch-up applied from the write window, and how many it read back from the vector store. */
export type RefreshSources = { window: number; store: number }

export interface IngestSummary {
  documents: number
  chunks: number
  replaced: number
  /** Documents the namespace already held exactly as sent: neither embedded nor written again. */
  unchanged: number
  /** Their ids, in the order sent. */
  unchanged_ids: string[]
  /**
   * Documents that give nothing to index (no chunk: front matter, scripts or HTML components only), with the reason:
   * not written, and not counted in `documents` (a version the namespace held before stays as it was). Absent when none.
   */
  skipped?: SkippedDocument[]
  took_ms: number
  /** What the write did with the documents' pictures; absent when they had none and held none. */
  images?: ImagesReport
}

/** A document of a write that was not written, and why. */
interface SkippedDocument {
  id: string
  reason: string
}

/** Why a document whose text gives no chunk is skipped. */
export const NO_TEXT_REASON = 'no text to index: it holds only front matter, or blocks without prose (scripts, styles, HTML-only ' +
  'components, rules, link definitions), which are not indexed; not written (a version held before is kept)'

const PAGE_BREAK = '\f'

/**
 * Where each page of a paged text starts (a PDF as `formats/pdf.ts` reads it: a form feed between pages), as offsets
 * of its form feeds; undefined for a text that is not paged (no form feed, and not a PDF).
 */
function pageBreaks(text: string, metadata: DocumentMetadata | undefined): number[] | undefined {
  const breaks: number[] = []
  for (let at = text.indexOf(PAGE_BREAK); at >= 0; at = text.indexOf(PAGE_BREAK, at + 1)) breaks.push(at)
  return breaks.length > 0 || metadata?.format === 'pdf' ? breaks : undefined
}

/** The page (from 1) of an offset: one more than the page breaks before it. */
function pageAt(breaks: readonly number[], offset: number): number {
  let page = 1
  for (const at of breaks) if (at < offset) page++
  return page
}

/**
 * A chunk's pages: the one its first non-blank character is on, and the one its last is on when later.
 */
function pagesOf(text: string, breaks: readonly number[], start: number, end: number): { page: number; page_end?: number } {
  let first = start
  while (first < end && /\s/u.test(text[first]!)) first++
  let last = end - 1
  while (last > first && /\s/u.test(text[last]!)) last--
  const page = pageAt(breaks, first)
  const pageEnd = pageAt(breaks, last)
  return { page, ...(pageEnd > page ? { page_end: pageEnd } : {}) }
}

/** Turns one document into its chunk records (no I/O). */
export function chunkDocument(doc: DocumentInput): ChunkRecord[] {
  const parsed = parseMarkdown(doc.text)
  const title = doc.title ?? parsed.frontMatter.title ?? parsed.heading
  const breaks = pageBreaks(parsed.tree.text, doc.metadata)
  return chunkMarkdown(parsed).map((c) => ({
    id: chunkId(doc.id, c.index),
    doc_id: doc.id,
    chunk_index: c.index,
    text: c.text,
    source: doc.source ?? doc.id,
    ...(title ? { title } : {}),
    ...(c.headingPath.length > 0 ? { heading_path: c.headingPath } : {}),
    ...(c.anchor ? { anchor: c.anchor } : {}),
    ...(c.split ? { split: c.split } : {}),
    ...(breaks ? pagesOf(parsed.tree.text, breaks, c.start, c.end) : {}),
    ...(doc.metadata ? { metadata: doc.metadata } : {})
  }))
}

export interface IngestOptions {
  onProgress?: (embedded: number, total: number) => void
  /** Runs the store part alone among the namespace's writers (the write lock the write path passes). */
  exclusive: Exclusive
  /**
   * Told, within `exclusive` and right after the vector store answered, which documents this ingest wrote and their
   * chunks as stored (not the documents it found unchanged): the write window keeps them (docs/scale-out-state.md).
   */
  onWritten?: (docIds: readonly string[], chunks: readonly ChunkRecord[]) => void
}

export interface DocumentLibraryPorts {
  vectors: VectorStore
  embedder: Embedder
  /** The library uses its own namespace's index. */
  lexical: LexicalIndexes
}

/** Largest metadata of one document: its JSON, in UTF-8 bytes. */
export const MAX_METADATA_BYTES = 8192

/** One document of a batch and what is wrong with it, each problem naming the field, the document and the value. */
export interface DocumentProblems {
  index: number
  id: string
  problems: string[]
}

/**
 * What is wrong with each document of a batch that the schema cannot see: an id given twice (the later ones), a
 * blank text or one that is still junk past MAX_JUNK_SHARE once normalised ({@link normaliseText}, {@link
 * textProblem}), metadata over {@link MAX_METADATA_BYTES}. Only the documents with a problem, in order. `indexOf`
 * gives the place a document had in the body as sent (the messages name it), when these are some of its documents.
 */
export function problemsByDocument(documents: readonly DocumentInput[], indexOf: (i: number) => number = (i) => i): DocumentProblems[] {
  const out: DocumentProblems[] = []
  const seen = new Set<string>()
  documents.forEach((d, at) => {
    const i = indexOf(at)
    const problems: string[] = []
    if (seen.has(d.id)) problems.push(`documents[${i}].id: "${d.id}" appears twice in this request`)
    seen.add(d.id)
    const problem = textProblem(normaliseText(d.text).text)
    if (problem) problems.push(`documents[${i}].text (id "${d.id}"): ${problem}`)
    if (d.metadata) {
      const bytes = Buffer.byteLength(JSON.stringify(d.metadata), 'utf8')
      if (bytes > MAX_METADATA_BYTES) {
        problems.push(`documents[${i}].metadata (id "${d.id}"): ${bytes} bytes of JSON, over the ${MAX_METADATA_BYTES} allowed (MAX_METADATA_BYTES)`)
      }
    }
    if (problems.length > 0) out.push({ index: i, id: d.id, problems })
  })
  return out
}

/** {@link problemsByDocument}, every problem of the batch in one list; empty when it can be written. */
export function documentProblems(documents: readonly DocumentInput[]): string[] {
  return problemsByDocument(documents).flatMap((d) => d.problems)
}

/**
 * The document as it is written: its text normalised ({@link normaliseText}), and the characters that removed or
 * replaced counted in `metadata.normalised_chars` (the document as given when there were none).
 */
export function normaliseDocument(doc: DocumentInput): { document: DocumentInput; normalised: number } {
  const { text, normalised } = normaliseText(doc.text)
  if (normalised === 0) return { document: doc, normalised }
  return { document: { ...doc, text, metadata: { ...doc.metadata, normalised_chars: normalised } }, normalised }
}

/**
 * One namespace's hybrid corpus: chunks in the vector store (the source of truth, with their text in the
 * payload), the namespace's BM25 index and an in-process chunk catalog, both derived from the vector store at
 * `open()` (the lexical index reconciles its saved files with the vector store's records there, by id and
 * content hash). When its last document goes, its vectors' partition and its lexical index's files go too.
 *
 * Writes are serialised. An ingest embeds everything first, then makes one vector-store write (atomic on
 * the embedded store), then one lexical-index write, so a failed embedding or vector write changes nothing.
 * Should the lexical write fail after the vectors were written, the index is re-synced with the catalog
 * (which follows the vector store); if that fails too, the ingest answers the error and the lexical leg
 * stays behind until the next successful write or restart re-syncs it.
 */
export class DocumentLibrary implements DocumentLibraryView {
  private catalog = new Map<string, ChunkRecord>()
  private docs = new Map<string, DocumentSummary>()
  /** The document ids in order, for pages; dropped whenever a document comes or goes. */
  #sortedIds: string[] | undefined
  private chunkIds = new Map<string, string[]>()
  private queue: Promise<unknown> = Promise.resolve()
  private changes = 0
  private lexicalBehind = false

  constructor(
    private readonly ports: DocumentLibraryPorts,
    private readonly options: {
      collection: string; namespace: string; embedBatchSize?: number
    }
  ) {}

  /** The namespace's lexical index (made anew after a drop). */
  get lexical(): LexicalIndex { return this.ports.lexical.get(this.options.namespace) }

  get collection(): string { return this.options.collection }

  get namespace(): string { return this.options.namespace }

  /** Changes on every successful ingest or delete; part of response cache keys. */
  get version(): number { return this.changes }

  get chunkCount(): number { return this.catalog.size }

  get documentCount(): number { return this.docs.size }

  async open(): Promise<void> {
    await this.ports.vectors.ensureCollection(this.options.collection, this.ports.embedder.dimensions)
    const catalog = new Map<string, ChunkRecord>()
    let sliceStart = performance.now()
    for await (const { id, payload } of this.ports.vectors.scroll(this.options.collection, this.options.namespace)) {
      catalog.set(id, decodeChunk(id, payload))
      // a large corpus is read in slices, so that the process keeps answering (health checks) meanwhile
      if (performance.now() - sliceStart > 8) {
        await new Promise((resolve) => setImmediate(resolve))
        sliceStart = performance.now()
      }
    }
    await this.lexical.sync(lexicalDocuments(catalog.values()))
    this.catalog = catalog
    this.docs = new Map()
    this.#sortedIds = undefined
    this.chunkIds = new Map()
    for (const c of catalog.values()) this.track(c)
  }

  /**
   * Reads the catalog again from the vector store and re-syncs the lexical index with it, after writes made
   * elsewhere (another replica); queued behind this library's own writes.
   */
  refresh(): Promise<void> {
    return this.serialise(() => this.open())
  }

  /**
   * Brings these documents up to the shared stores (another replica wrote or deleted them: the change log said so) and
   * the lexical index up to them; queued behind this library's own writes. A document whose state the write window
   * kept (`kept`: id -> its encoded state, src/corpus/write-window.ts) is applied from it; the others' chunks are read
   * again from the vector store. Answers how many documents came from each.
   */
  refreshDocuments(docIds: readonly string[], phases: RefreshPhases = {}, kept?: ReadonlyMap<string, string>): Promise<RefreshSources> {
    const queued = performance.now()
    return this.serialise(async () => {
      const started = performance.now()
      phases.queued = started - queued
      if (docIds.length === 0) return { window: 0, store: 0 }
      const fresh: ChunkRecord[] = []
      const unknown: string[] = []
      for (const id of docIds) {
        const state = kept?.get(id)
        const chunks = state === undefined ? undefined : decodeState(id, state)
        if (chunks) fresh.push(...chunks)
        else unknown.push(id)
      }
      if (unknown.length > 0) {
        for await (const { id, payload } of this.ports.vectors.scroll(this.options.collection, this.options.namespace, unknown)) {
          fresh.push(decodeChunk(id, payload))
        }
        phases.store = performance.now() - started
      }
      // in the order a read of them all would give (the vector store's scroll answers by id)
      fresh.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      const read = performance.now()
      const removed = docIds.flatMap((id) => this.chunkIds.get(id) ?? [])
      this.forget(docIds)
      for (const c of fresh) this.track(c)
      await this.updateLexical({ delete: removed, upsert: lexicalDocuments(fresh) })
      phases.lexical = performance.now() - read
      return { window: docIds.length - unknown.length, store: unknown.length }
    })
  }

  chunk(id: string): ChunkRecord | undefined {
    return this.catalog.get(id)
  }

  list(): DocumentSummary[] {
    return [...this.docs.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
  }

  /** Up to `limit` documents in id order after the id `after` (from the first without it). */
  page(after: string | undefined, limit: number): DocumentSummary[] {
    this.#sortedIds ??= [...this.docs.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
    const ids = this.#sortedIds
    let lo = 0
    if (after !== undefined) {
      let hi = ids.length
      while (lo < hi) {
        const mid = (lo + hi) >>> 1
        if (ids[mid]! <= after) lo = mid + 1
        else hi = mid
      }
    }
    return ids.slice(lo, lo + limit).map((id) => this.docs.get(id)!)
  }

  /** The chunks the catalog holds of a document: chunk id -> text. */
  storedChunks(docId: string): Map<string, string> {
    return new Map((this.chunkIds.get(docId) ?? []).map((id) => [id, this.catalog.get(id)!.text] as const))
  }

  has(docId: string): boolean {
    return this.docs.has(docId)
  }

  summary(docId: string): DocumentSummary | undefined {
    const d = this.docs.get(docId)
    return d ? { ...d } : undefined
  }

  docIdsWithSourcePrefix(prefix: string): string[] {
    const out: string[] = []
    for (const d of this.docs.values()) if (d.source.startsWith(prefix)) out.push(d.id)
    return out
  }

  /**
   * Adds or replaces documents. `exclusive` runs the store part alone among the writers of this namespace (the
   * write path passes the write lock); `lease.assertHeld()` before each shared-store write stops it (503) once the
   * lock was lost (the lexical index written after it is this process's own, or part of the same Qdrant point write).
   */
  ingest(documents: readonly DocumentInput[], options: IngestOptions): Promise<IngestSummary> {
    const { onProgress, exclusive, onWritten } = options
    return this.serialise(async () => {
      const started = performance.now()
      const versions = this.versions
      let total = 0
      const changed: Array<{ id: string; chunks: ChunkRecord[] }> = []
      const skipped: SkippedDocument[] = []
      for (const d of documents) {
        // a document held with its fingerprint and the running versions is unchanged without being chunked again
        const fingerprint = documentFingerprint(d)
        const held = this.heldUnchanged(d.id, fingerprint)
        if (held !== undefined) {
          total += held
          continue
        }
        const chunks = chunkDocument(d).map((c) => ({ ...c, versions, fingerprint }))
        if (chunks.length === 0) {
          skipped.push({ id: d.id, reason: NO_TEXT_REASON })
          continue
        }
        total += chunks.length
        // held exactly, under another fingerprint or none (chunks written before fingerprints were kept): unchanged too
        if (!this.holdsExactly(d.id, chunks)) changed.push({ id: d.id, chunks })
      }
      const written = new Set(changed.map((d) => d.id))
      const skippedIds = new Set(skipped.map((d) => d.id))
      const unchangedIds = documents.map((d) => d.id).filter((id) => !written.has(id) && !skippedIds.has(id))
      const summary = (replaced: number): IngestSummary => ({
        documents: documents.length - skipped.length, chunks: total, replaced, unchanged: unchangedIds.length, unchanged_ids: unchangedIds,
        ...(skipped.length > 0 ? { skipped } : {}), took_ms: round(performance.now() - started)
      })
      if (changed.length === 0) return summary(0)
      const chunks = changed.flatMap((d) => d.chunks)
      const vectors = await this.vectorsFor(chunks, onProgress)
      const docIds = changed.map((d) => d.id)
      const replaced = docIds.filter((id) => this.docs.has(id)).length
      const records: VectorRecord[] = chunks.map((c, i) => ({ id: c.id, vector: vectors[i]!, payload: encodeChunk(c) }))
      await exclusive(async (lease) => {
        lease.assertHeld()
        await this.ports.vectors.write(this.options.collection, this.options.namespace, { deleteDocIds: docIds, upsert: records })
        onWritten?.(docIds, chunks)
        const removed = docIds.flatMap((id) => this.chunkIds.get(id) ?? [])
        this.forget(docIds)
        for (const c of chunks) this.track(c)
        await this.updateLexical({ delete: removed, upsert: lexicalDocuments(chunks) })
      })
      return summary(replaced)
    })
  }

  /**
   * Writes these documents' stored chunks again, read from the vector store under the lock (so that no writer changes
   * them meanwhile), with no re-parse: their points with their stored vectors (which carries the lexical leg where it
   * lives in the points), or with vectors embedded anew with `reembed`, then the lexical index. With `reembed`, a chunk
   * the catalog holds and the vector store lost is written again from the catalog. Answers the chunks written.
   */
  rebuild(docIds: readonly string[], options: { reembed: boolean; exclusive: Exclusive }): Promise<{ documents: number; chunks: number }> {
    return this.serialise(() => options.exclusive(async (lease) => {
      const { collection, namespace } = this.options
      const stored = new Map<string, ChunkRecord>()
      for await (const { id, payload } of this.ports.vectors.scroll(collection, namespace, docIds)) stored.set(id, decodeChunk(id, payload))
      if (options.reembed) {
        for (const docId of docIds) for (const id of this.chunkIds.get(docId) ?? []) if (!stored.has(id)) stored.set(id, this.catalog.get(id)!)
      }
      const chunks = [...stored.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      if (chunks.length === 0) return { documents: 0, chunks: 0 }
      const vectors = options.reembed
        ? await this.embed(chunks)
        : await this.ports.vectors.vectorsOf(collection, namespace, chunks.map((c) => c.id)).then((held) => chunks.map((c) => held.get(c.id)))
      const records: VectorRecord[] = []
      chunks.forEach((c, i) => { if (vectors[i]) records.push({ id: c.id, vector: vectors[i], payload: encodeChunk(c) }) })
      lease.assertHeld()
      await this.ports.vectors.write(collection, namespace, { upsert: records })
      const removed = docIds.flatMap((id) => this.chunkIds.get(id) ?? [])
      this.forget(docIds)
      for (const c of chunks) this.track(c)
      await this.updateLexical({ delete: removed, upsert: lexicalDocuments(chunks) })
      return { documents: new Set(chunks.map((c) => c.doc_id)).size, chunks: chunks.length }
    }))
  }

  /** The versions of the chunker, analyzer and model this library writes chunks with. */
  get versions(): IndexVersions {
    return { chunker: CHUNKER_VERSION, analyzer: analyzerTag(this.ports.lexical.analyzer ?? 'cjk-bigram'), model: this.ports.embedder.model }
  }

  /**
   * The vectors of chunks about to be written: a chunk whose embedded text (its passage text) a stored chunk of its
   * document has, embedded by the same model, keeps that chunk's stored vector; only the others are embedded.
   */
  private async vectorsFor(chunks: readonly ChunkRecord[], onProgress?: (embedded: number, total: number) => void): Promise<Float32Array[]> {
    const model = this.ports.embedder.model
    const storedByText = new Map<string, string>()
    for (const docId of new Set(chunks.map((c) => c.doc_id))) {
      for (const id of this.chunkIds.get(docId) ?? []) {
        const stored = this.catalog.get(id)!
        if (stored.versions?.model === model) storedByText.set(`${docId}\u0000${passageText(stored)}`, id)
      }
    }
    const wanted = chunks.map((c) => storedByText.get(`${c.doc_id}\u0000${passageText(c)}`))
    const reusable = wanted.some((id) => id !== undefined)
      ? await this.ports.vectors.vectorsOf(this.options.collection, this.options.namespace, wanted.filter((id): id is string => id !== undefined))
      : new Map<string, Float32Array>()
    const vectors: (Float32Array | undefined)[] = wanted.map((id) => (id === undefined ? undefined : reusable.get(id)))
    const missing = chunks.filter((_, i) => vectors[i] === undefined)
    const embedded = await this.embed(missing, onProgress)
    let next = 0
    return vectors.map((v) => v ?? embedded[next++]!)
  }

  /**
   * The number of chunks of a document when the catalog holds it made from the input of this fingerprint with the
   * running versions (every chunk of it carries both); undefined when it does not (absent, changed, other versions, or
   * written before fingerprints were kept).
   */
  heldUnchanged(docId: string, fingerprint: string): number | undefined {
    const held = this.chunkIds.get(docId)
    if (!held || held.length === 0) return undefined
    const versions = this.versions
    for (const id of held) {
      const stored = this.catalog.get(id)
      if (stored?.fingerprint !== fingerprint || !sameVersions(stored.versions, versions)) return undefined
    }
    return held.length
  }

  /** Whether the catalog holds exactly these chunks of a document: same ids, texts, title, source, metadata and versions. */
  private holdsExactly(docId: string, chunks: readonly ChunkRecord[]): boolean {
    const held = this.chunkIds.get(docId)
    if (!held || held.length !== chunks.length) return false
    return chunks.every((c) => {
      const stored = this.catalog.get(c.id)
      return stored !== undefined && stored.doc_id === c.doc_id && stored.text === c.text && stored.source === c.source &&
        stored.title === c.title && JSON.stringify(stored.metadata) === JSON.stringify(c.metadata) && sameVersions(stored.versions, c.versions)
    })
  }

  /** Removes a document's chunks from both legs; false when the id is unknown. The last document takes the namespace's files with it. */
  delete(docId: string, exclusive: Exclusive): Promise<boolean> {
    return this.serialise(() => exclusive(async (lease) => {
      if (!this.docs.has(docId)) return false
      if (this.docs.size === 1) {
        await this.dropNow(lease)
        return true
      }
      lease.assertHeld()
      await this.ports.vectors.write(this.options.collection, this.options.namespace, { deleteDocIds: [docId] })
      const removed = this.chunkIds.get(docId) ?? []
      this.forget([docId])
      await this.updateLexical({ delete: removed })
      return true
    }))
  }

  /** Removes every document: the namespace's vectors in this collection, then its lexical index and files. */
  drop(exclusive: Exclusive): Promise<void> {
    return this.serialise(() => exclusive((lease) => this.dropNow(lease)))
  }

  private async dropNow(lease: Lease): Promise<void> {
    lease.assertHeld()
    await this.ports.vectors.dropNamespace(this.options.collection, this.options.namespace)
    this.catalog = new Map()
    this.docs = new Map()
    this.#sortedIds = undefined
    this.chunkIds = new Map()
    this.changes += 1
    await this.ports.lexical.drop(this.options.namespace)
    this.lexicalBehind = false
  }

  /** Brings the lexical index up to the catalog, which already holds the vector store's new state. */
  private async updateLexical(change: LexicalChange): Promise<void> {
    this.changes += 1
    if (!this.lexicalBehind) {
      try {
        await this.lexical.write(change)
        return
      } catch {
        this.lexicalBehind = true
      }
    }
    await this.lexical.sync(lexicalDocuments(this.catalog.values()))
    this.lexicalBehind = false
  }

  private track(c: ChunkRecord): void {
    this.catalog.set(c.id, c)
    const ids = this.chunkIds.get(c.doc_id)
    if (ids) ids.push(c.id)
    else this.chunkIds.set(c.doc_id, [c.id])
    const d = this.docs.get(c.doc_id)
    if (d) d.chunks += 1
    else {
      this.docs.set(c.doc_id, { id: c.doc_id, source: c.source, chunks: 1, ...(c.title ? { title: c.title } : {}) })
      this.#sortedIds = undefined
    }
  }

  private forget(docIds: readonly string[]): void {
    for (const docId of docIds) {
      for (const id of this.chunkIds.get(docId) ?? []) this.catalog.delete(id)
      this.chunkIds.delete(docId)
      if (this.docs.delete(docId)) this.#sortedIds = undefined
    }
  }

  private async embed(chunks: ChunkRecord[], onProgress?: (embedded: number, total: number) => void): Promise<Float32Array[]> {
    const batch = this.options.embedBatchSize ?? 32
    const out: Float32Array[] = []
    for (let i = 0; i < chunks.length; i += batch) {
      out.push(...await this.ports.embedder.embedPassages(chunks.slice(i, i + batch).map(passageText)))
      onProgress?.(out.length, chunks.length)
    }
    return out
  }

  private serialise<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(task, task)
    this.queue = run.catch(() => undefined)
    return run
  }
}

function lexicalDocuments(chunks: Iterable<ChunkRecord>): LexicalDocument[] {
  const out: LexicalDocument[] = []
  for (const c of chunks) out.push({ id: c.id, text: lexicalText(c) })
  return out
}

const round = (ms: number) => Math.round(ms * 100) / 100

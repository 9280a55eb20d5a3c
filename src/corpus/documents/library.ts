import type { LexicalIndex } from '../../providers/lexical-index/port.js'
import { CHUNKER_VERSION } from '../chunker.js'
import { analyzerTag } from '../../kernel/analyzers.js'
import { decodeChunk, encodeChunk, sameVersions, type ChunkRecord, type StoredChunkPayload, type IndexVersions } from '../../kernel/chunk-payload.js'
import type { DocumentLibraryView, DocumentSummary } from '../document-views.js'
import { readCheckpoint, writeCheckpoint } from './catalog-checkpoint.js'
import { ChunkCatalog } from './chunk-catalog.js'
import { runStepsYielding, type LoadSteps } from '../../providers/embedded/load-steps.js'
import { CatalogDraft, LibraryState, lexicalDocuments, STATE, type DocumentLibraryPlace, type DocumentLibraryPorts } from './library-state.js'

/**
 * One namespace's hybrid corpus as this process reads it: chunks in the vector store (the source of truth, with their
 * text in the payload), the namespace's BM25 index and an in-process chunk catalog, both derived from the vector store
 * at `open()` (the lexical index reconciles its saved files with the vector store's records there, by id and content
 * hash). It reads and reads again; it writes nothing: its writers are the write path's, in
 * src/corpus/appliers/writers/documents.ts (ingest, rebuild, delete, drop) and document-catch-up.ts (the documents
 * another replica wrote), and they change its state (`STATE`, library-state.ts) in turn with its reads of the stores.
 */
export class DocumentLibrary implements DocumentLibraryView {
  readonly #state: LibraryState

  constructor(ports: DocumentLibraryPorts, options: DocumentLibraryPlace) {
    this.#state = new LibraryState(ports, options)
  }

  /** What the writers change; reachable only from the modules that may import library-state.ts. */
  get [STATE](): LibraryState { return this.#state }

  /** The namespace's lexical index (made anew after a drop). */
  get lexical(): LexicalIndex { return this.#state.ports.lexical.get(this.#state.place.namespace) }

  get collection(): string { return this.#state.place.collection }

  get namespace(): string { return this.#state.place.namespace }

  /** Changes on every successful ingest or delete; part of response cache keys. */
  get version(): number { return this.#state.changes }

  get chunkCount(): number { return this.#state.catalog.size }

  get documentCount(): number { return this.#state.docs.size }

  /**
   * Reads the catalog (from its checkpoint file when that holds the vector store's current state, else by a scroll of
   * the vector store) and syncs the lexical index with it; answers where the catalog came from (`checkpoint`, or
   * `scroll` with why the file was not used when one could have been).
   */
  async open(): Promise<string> {
    const { ports, place } = this.#state
    await ports.vectors.ensureCollection(place.collection, ports.embedder.dimensions)
    let unused: string | undefined
    const stamp = place.checkpointFile ? await ports.vectors.stamp?.(place.collection, place.namespace) : undefined
    if (place.checkpointFile && stamp !== undefined) {
      const read = await readCheckpoint(place.checkpointFile, { stamp, collection: place.collection, namespace: place.namespace })
      if ('catalog' in read) {
        // the lexical index kept beside it holds exactly its chunks when their digests agree: nothing to sync then
        const holds = read.lexical !== undefined && (await this.lexical.holds?.(read.lexical)) === true
        if (!holds) await this.lexical.sync(lexicalDocuments(read.catalog.values()))
        this.#state.restore(read.catalog)
        this.#state.checkpointed = stamp
        this.#state.editsAtRead = this.#state.edits
        return 'checkpoint'
      }
      unused = read.unused
    }
    await this.#scroll()
    this.#state.checkpointed = undefined
    return unused === undefined ? 'scroll' : `scroll (checkpoint: ${unused})`
  }

  async #scroll(): Promise<void> {
    const { ports, place } = this.#state
    const draft = new CatalogDraft()
    let sliceStart = performance.now()
    for await (const { id, payload } of ports.vectors.scroll(place.collection, place.namespace)) {
      draft.track(decodeChunk(id, payload))
      // a large corpus is read in slices, so that the process keeps answering (health checks) meanwhile
      if (performance.now() - sliceStart > 8) {
        await new Promise((resolve) => setImmediate(resolve))
        sliceStart = performance.now()
      }
    }
    await this.lexical.sync(lexicalDocuments(draft.catalog.values()))
    this.#state.adopt(draft)
    this.#state.editsAtRead = this.#state.edits
  }

  /**
   * Reads the catalog again from the vector store and re-syncs the lexical index with it, after writes made
   * elsewhere (another replica); queued behind this library's own writes.
   */
  refresh(): Promise<void> {
    return this.#state.serialise(async () => {
      const { ports, place } = this.#state
      await ports.vectors.ensureCollection(place.collection, ports.embedder.dimensions)
      await this.#scroll()
      this.#state.checkpointed = undefined
    })
  }

  /**
   * Keeps the catalog in its checkpoint file when the file does not already hold it: the catalog as a scroll of the
   * vector store would give it, under the stamp of the state it was read in. Only the snapshot (the stamp and the
   * catalog's columns) waits its turn behind the library's writes; the file is made and written after it, beside the
   * writes, so a checkpoint in the background (after a start-up that scrolled, when idle after writes) holds no write
   * back, and a clean stop finds little or nothing left to write. One file write at a time. Answers whether it wrote.
   */
  checkpoint(): Promise<boolean> {
    const run = this.#fileTurn.then(() => this.#checkpointNow())
    this.#fileTurn = run.catch(() => false)
    return run
  }

  #fileTurn: Promise<unknown> = Promise.resolve()

  async #checkpointNow(): Promise<boolean> {
    const state = this.#state
    const { ports, place } = state
    const file = place.checkpointFile
    if (!file) return false
    const snapshot = await state.serialiseCompaction(async () => {
      const stamp = await ports.vectors.stamp?.(place.collection, place.namespace)
      if (stamp === undefined || stamp === state.checkpointed) return undefined
      // a catalog that does not hold what the vector store holds is not kept (the next start-up scrolls instead)
      if ((await ports.vectors.count(place.collection, place.namespace)) !== state.catalog.size) return undefined
      // read whole and not written since: already in the order a scroll gives
      return { stamp, columns: state.catalog.toColumns(), scrollOrder: state.edits === state.editsAtRead }
    })
    if (!snapshot) return false
    // the writers change the library's catalog in place: what follows reads the snapshot's own copy only
    const copy = await runStepsYielding(ChunkCatalog.fromColumnsSteps(snapshot.columns))
    const catalog = snapshot.scrollOrder ? copy : await runStepsYielding(canonicalCatalog(copy))
    await nextTurn()
    const lexical = this.lexical.digest?.(lexicalDocuments(catalog.values()))
    await nextTurn()
    await writeCheckpoint(file, catalog, { stamp: snapshot.stamp, collection: place.collection, namespace: place.namespace, ...(lexical ? { lexical } : {}) })
    state.checkpointed = snapshot.stamp
    return true
  }

  chunk(id: string): ChunkRecord | undefined {
    return this.#state.catalog.get(id)
  }

  list(): DocumentSummary[] {
    return [...this.#state.docs.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
  }

  /** Up to `limit` documents in id order after the id `after` (from the first without it). */
  page(after: string | undefined, limit: number): DocumentSummary[] {
    const state = this.#state
    state.sortedIds ??= [...state.docs.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
    const ids = state.sortedIds
    let lo = 0
    if (after !== undefined) {
      let hi = ids.length
      while (lo < hi) {
        const mid = (lo + hi) >>> 1
        if (ids[mid]! <= after) lo = mid + 1
        else hi = mid
      }
    }
    return ids.slice(lo, lo + limit).map((id) => state.docs.get(id)!)
  }

  /** The chunks the catalog holds of a document: chunk id -> text. */
  storedChunks(docId: string): Map<string, string> {
    return new Map(this.#state.catalog.chunksOf(docId).map((c) => [c.id, c.text] as const))
  }

  has(docId: string): boolean {
    return this.#state.docs.has(docId)
  }

  summary(docId: string): DocumentSummary | undefined {
    const d = this.#state.docs.get(docId)
    return d ? { ...d } : undefined
  }

  docIdsWithSourcePrefix(prefix: string): string[] {
    const out: string[] = []
    for (const d of this.#state.docs.values()) if (d.source.startsWith(prefix)) out.push(d.id)
    return out
  }

  /** The versions of the chunker, analyzer and model this library writes chunks with. */
  get versions(): IndexVersions {
    const { ports } = this.#state
    return { chunker: CHUNKER_VERSION, analyzer: analyzerTag(ports.lexical.analyzer ?? 'cjk-bigram'), model: ports.embedder.model }
  }

  /**
   * The number of chunks of a document when the catalog holds it made from the input of this fingerprint with the
   * running versions (every chunk of it carries both); undefined when it does not (absent, changed, other versions, or
   * written before fingerprints were kept).
   */
  heldUnchanged(docId: string, fingerprint: string): number | undefined {
    const held = this.#state.catalog.chunksOf(docId)
    if (held.length === 0) return undefined
    const versions = this.versions
    for (const stored of held) {
      if (stored.fingerprint !== fingerprint || !sameVersions(stored.versions, versions)) return undefined
    }
    return held.length
  }
}

/** Lets the event loop run (requests, health checks) between the parts of a checkpoint made in the background. */
const nextTurn = () => new Promise((resolve) => setImmediate(resolve))

/**
 * The catalog a scroll of the vector store would build from these chunks: each as its stored point decodes (the
 * writers hold the chunks they wrote, which may differ from their decoded payload in fields the payload leaves out),
 * added in id order, as a scroll gives them.
 */
export function* canonicalCatalog(held: ChunkCatalog): LoadSteps<ChunkCatalog> {
  const chunks: ChunkRecord[] = []
  for (const chunk of held.values()) {
    if (chunks.push(chunk) % 4096 === 0) yield
  }
  // the one step left whole: every chunk's id sorted (1-2 s at 1M, bench/results/catalog-checkpoint-pieces.json)
  chunks.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
  yield
  const out = new ChunkCatalog()
  for (const [i, c] of chunks.entries()) {
    out.add(decodeChunk(c.id, JSON.parse(JSON.stringify(encodeChunk(c))) as StoredChunkPayload))
    if (i % 4096 === 4095) yield
  }
  return out
}

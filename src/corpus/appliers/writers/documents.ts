/**
 * The writers of a namespace's document library (src/corpus/documents/library.ts): ingest, rebuild, delete and drop,
 * each the vector store's write, then the library's catalog, then its lexical index, in turn with the library's other
 * writes and reads of the stores. Only the documents, rebuild and namespace appliers call them, with the lock the write
 * path took.
 *
 * An ingest embeds everything first, then makes one vector-store write (atomic on the embedded store), then one
 * lexical-index write, so a failed embedding or vector write changes nothing. Should the lexical write fail after the
 * vectors were written, the index is re-synced with the catalog (which follows the vector store); if that fails too,
 * the ingest answers the error and the lexical leg stays behind until the next successful write or restart re-syncs
 * it. When a namespace's last document goes, its vectors' partition and its lexical index's files go too.
 */
import type { LexicalChange } from '../../../providers/lexical-index/port.js'
import type { VectorRecord } from '../../../providers/vector-store/port.js'
import { decodeChunk, encodeChunk, sameVersions, type ChunkRecord } from '../../../kernel/chunk-payload.js'
import { passageText } from '../../../kernel/lexical-text.js'
import { documentFingerprint } from '../../fingerprint.js'
import type { Exclusive, Lease } from '../../write-lock.js'
import type { DocumentLibrary } from '../../documents/library.js'
import { lexicalDocuments, STATE, type LibraryState } from '../../documents/library-state.js'
import type { DocumentInput } from '../../documents/input.js'
import { NO_TEXT_REASON, type IngestSummary, type SkippedDocument } from '../../documents/ingest-summary.js'
import { chunkDocument } from '../../documents/chunking.js'

interface IngestOptions {
  onProgress?: (embedded: number, total: number) => void
  /** Runs the store part alone among the namespace's writers (the write lock the write path passes). */
  exclusive: Exclusive
  /**
   * Told, within `exclusive` and right after the vector store answered, which documents this ingest wrote and their
   * chunks as stored (not the documents it found unchanged): the write window keeps them (docs/scale-out-state.md).
   */
  onWritten?: (docIds: readonly string[], chunks: readonly ChunkRecord[]) => void
}

/**
 * Adds or replaces documents. `exclusive` runs the store part alone among the writers of this namespace (the
 * write path passes the write lock); `lease.assertHeld()` before each shared-store write stops it (503) once the
 * lock was lost (the lexical index written after it is this process's own, or part of the same Qdrant point write).
 */
export function ingestDocuments(library: DocumentLibrary, documents: readonly DocumentInput[], options: IngestOptions): Promise<IngestSummary> {
  const { onProgress, exclusive, onWritten } = options
  const state = library[STATE]
  return state.serialise(async () => {
    const started = performance.now()
    const versions = library.versions
    let total = 0
    const changed: Array<{ id: string; chunks: ChunkRecord[] }> = []
    const skipped: SkippedDocument[] = []
    for (const d of documents) {
      // a document held with its fingerprint and the running versions is unchanged without being chunked again
      const fingerprint = documentFingerprint(d)
      const held = library.heldUnchanged(d.id, fingerprint)
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
      if (!holdsExactly(state, d.id, chunks)) changed.push({ id: d.id, chunks })
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
    const vectors = await vectorsFor(state, chunks, onProgress)
    const docIds = changed.map((d) => d.id)
    const replaced = docIds.filter((id) => state.docs.has(id)).length
    const records: VectorRecord[] = chunks.map((c, i) => ({ id: c.id, vector: vectors[i]!, payload: encodeChunk(c) }))
    await exclusive(async (lease) => {
      lease.assertHeld()
      await state.ports.vectors.write(state.place.collection, state.place.namespace, { deleteDocIds: docIds, upsert: records })
      onWritten?.(docIds, chunks)
      const removed = docIds.flatMap((id) => state.chunkIdsOf(id))
      state.forget(docIds)
      for (const c of chunks) state.track(c)
      await updateLexical(library, { delete: removed, upsert: lexicalDocuments(chunks) })
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
export function rebuildDocuments(
  library: DocumentLibrary, docIds: readonly string[], options: { reembed: boolean; exclusive: Exclusive }
): Promise<{ documents: number; chunks: number }> {
  const state = library[STATE]
  return state.serialise(() => options.exclusive(async (lease) => {
    const { collection, namespace } = state.place
    const stored = new Map<string, ChunkRecord>()
    for await (const { id, payload } of state.ports.vectors.scroll(collection, namespace, docIds)) stored.set(id, decodeChunk(id, payload))
    if (options.reembed) {
      for (const docId of docIds) for (const c of state.catalog.chunksOf(docId)) if (!stored.has(c.id)) stored.set(c.id, c)
    }
    const chunks = [...stored.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    if (chunks.length === 0) return { documents: 0, chunks: 0 }
    const vectors = options.reembed
      ? await embed(state, chunks)
      : await state.ports.vectors.vectorsOf(collection, namespace, chunks.map((c) => c.id)).then((held) => chunks.map((c) => held.get(c.id)))
    const records: VectorRecord[] = []
    chunks.forEach((c, i) => { if (vectors[i]) records.push({ id: c.id, vector: vectors[i], payload: encodeChunk(c) }) })
    lease.assertHeld()
    await state.ports.vectors.write(collection, namespace, { upsert: records })
    const removed = docIds.flatMap((id) => state.chunkIdsOf(id))
    state.forget(docIds)
    for (const c of chunks) state.track(c)
    await updateLexical(library, { delete: removed, upsert: lexicalDocuments(chunks) })
    return { documents: new Set(chunks.map((c) => c.doc_id)).size, chunks: chunks.length }
  }))
}

/** Removes a document's chunks from both legs; false when the id is unknown. The last document takes the namespace's files with it. */
export function deleteDocument(library: DocumentLibrary, docId: string, exclusive: Exclusive): Promise<boolean> {
  const state = library[STATE]
  return state.serialise(() => exclusive(async (lease) => {
    if (!state.docs.has(docId)) return false
    if (state.docs.size === 1) {
      await dropNow(state, lease)
      return true
    }
    lease.assertHeld()
    await state.ports.vectors.write(state.place.collection, state.place.namespace, { deleteDocIds: [docId] })
    const removed = state.chunkIdsOf(docId)
    state.forget([docId])
    await updateLexical(library, { delete: removed })
    return true
  }))
}

/** Removes every document: the namespace's vectors in this collection, then its lexical index and files. */
export function dropDocuments(library: DocumentLibrary, exclusive: Exclusive): Promise<void> {
  const state = library[STATE]
  return state.serialise(() => exclusive((lease) => dropNow(state, lease)))
}

/** Brings the library's lexical index up to its catalog, which already holds the vector store's new state. */
export async function updateLexical(library: DocumentLibrary, change: LexicalChange): Promise<void> {
  const state = library[STATE]
  state.changes += 1
  if (!state.lexicalBehind) {
    try {
      await library.lexical.write(change)
      return
    } catch {
      state.lexicalBehind = true
    }
  }
  await library.lexical.sync(lexicalDocuments(state.catalog.values()))
  state.lexicalBehind = false
}

async function dropNow(state: LibraryState, lease: Lease): Promise<void> {
  lease.assertHeld()
  await state.ports.vectors.dropNamespace(state.place.collection, state.place.namespace)
  state.reset([])
  state.changes += 1
  await state.ports.lexical.drop(state.place.namespace)
  state.lexicalBehind = false
}

/**
 * The vectors of chunks about to be written: a chunk whose embedded text (its passage text) a stored chunk of its
 * document has, embedded by the same model, keeps that chunk's stored vector; only the others are embedded.
 */
async function vectorsFor(state: LibraryState, chunks: readonly ChunkRecord[], onProgress?: (embedded: number, total: number) => void): Promise<Float32Array[]> {
  const model = state.ports.embedder.model
  const storedByText = new Map<string, string>()
  for (const docId of new Set(chunks.map((c) => c.doc_id))) {
    for (const stored of state.catalog.chunksOf(docId)) {
      const id = stored.id
      if (stored.versions?.model === model) storedByText.set(`${docId}\u0000${passageText(stored)}`, id)
    }
  }
  const wanted = chunks.map((c) => storedByText.get(`${c.doc_id}\u0000${passageText(c)}`))
  const reusable = wanted.some((id) => id !== undefined)
    ? await state.ports.vectors.vectorsOf(state.place.collection, state.place.namespace, wanted.filter((id): id is string => id !== undefined))
    : new Map<string, Float32Array>()
  const vectors: (Float32Array | undefined)[] = wanted.map((id) => (id === undefined ? undefined : reusable.get(id)))
  const missing = chunks.filter((_, i) => vectors[i] === undefined)
  const embedded = await embed(state, missing, onProgress)
  let next = 0
  return vectors.map((v) => v ?? embedded[next++]!)
}

/** Whether the catalog holds exactly these chunks of a document: same ids, texts, title, source, metadata and versions. */
function holdsExactly(state: LibraryState, docId: string, chunks: readonly ChunkRecord[]): boolean {
  const held = new Map(state.catalog.chunksOf(docId).map((c) => [c.id, c] as const))
  if (held.size === 0 || held.size !== chunks.length) return false
  return chunks.every((c) => {
    const stored = held.get(c.id)
    return stored !== undefined && stored.doc_id === c.doc_id && stored.text === c.text && stored.source === c.source &&
      stored.title === c.title && JSON.stringify(stored.metadata) === JSON.stringify(c.metadata) && sameVersions(stored.versions, c.versions)
  })
}

async function embed(state: LibraryState, chunks: ChunkRecord[], onProgress?: (embedded: number, total: number) => void): Promise<Float32Array[]> {
  const batch = state.place.embedBatchSize ?? 32
  const out: Float32Array[] = []
  for (let i = 0; i < chunks.length; i += batch) {
    out.push(...await state.ports.embedder.embedPassages(chunks.slice(i, i + batch).map(passageText)))
    onProgress?.(out.length, chunks.length)
  }
  return out
}

const round = (ms: number) => Math.round(ms * 100) / 100

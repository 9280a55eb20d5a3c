/**
 * The replica's catch-up of some documents (step 1 of docs/write-path.md): another replica wrote or deleted them (the
 * change log said so), and this replica's catalog and lexical index are brought up to the shared stores. It writes the
 * library's in-memory state, so it is a writer; the shared catalog (src/corpus/shared-catalog.ts) runs it, before a
 * write and before a read alike (the import rule `catch-up-through-the-shared-catalog`).
 */
import type { VectorStore } from '../../../providers/vector-store/port.js'
import { checkNamespace } from '../../../providers/namespace.js'
import { decodeChunk, type ChunkRecord } from '../../../kernel/chunk-payload.js'
import { decodeState } from '../../write-window.js'
import type { DocumentLibraries } from '../../libraries.js'
import type { DocumentLibrary } from '../../documents/library.js'
import { lexicalDocuments, STATE } from '../../documents/library-state.js'
import type { RefreshPhases, RefreshSources } from '../../documents/catch-up.js'
import { updateLexical } from './documents.js'

/**
 * Brings these documents of a namespace up to the shared stores (`kept`: the states the write window kept of some,
 * id -> its encoded state, src/corpus/write-window.ts); a namespace this process has no library for is opened (read
 * whole) instead, and answers no sources.
 */
export async function refreshDocuments(
  libraries: DocumentLibraries, namespace: string, docIds: readonly string[], phases?: RefreshPhases, kept?: ReadonlyMap<string, string>
): Promise<RefreshSources | undefined> {
  const known = libraries.get(checkNamespace(namespace))
  if (known) return refreshLibrary(known, docIds, phases, kept)
  await libraries.refresh(namespace)
  return undefined
}

/**
 * Queued behind the library's own writes: a document whose state the write window kept is applied from it; the
 * others' chunks are read again from the vector store. Answers how many documents came from each.
 */
function refreshLibrary(library: DocumentLibrary, docIds: readonly string[], phases: RefreshPhases = {}, kept?: ReadonlyMap<string, string>): Promise<RefreshSources> {
  const state = library[STATE]
  const queued = performance.now()
  return state.serialise(async () => {
    const started = performance.now()
    phases.queued = started - queued
    if (docIds.length === 0) return { window: 0, store: 0 }
    const { chunks: fresh, unknown } = await currentChunks(state.ports.vectors, state.place, docIds, kept)
    if (unknown.length > 0) phases.store = performance.now() - started
    // in the order a read of them all would give (the vector store's scroll answers by id)
    fresh.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    const read = performance.now()
    const removed = docIds.flatMap((id) => state.chunkIdsOf(id))
    state.forget(docIds)
    for (const c of fresh) state.track(c)
    await updateLexical(library, { delete: removed, upsert: lexicalDocuments(fresh) })
    phases.lexical = performance.now() - read
    return { window: docIds.length - unknown.length, store: unknown.length }
  })
}

/**
 * The chunks these documents have now in the shared stores: a document whose state the write window kept (`kept`:
 * id -> its encoded state) from it, the others (`unknown`) read again from the vector store.
 */
async function currentChunks(
  vectors: VectorStore, where: { collection: string; namespace: string }, docIds: readonly string[], kept?: ReadonlyMap<string, string>
): Promise<{ chunks: ChunkRecord[]; unknown: string[] }> {
  const chunks: ChunkRecord[] = []
  const unknown: string[] = []
  for (const id of docIds) {
    const state = kept?.get(id)
    const held = state === undefined ? undefined : decodeState(id, state)
    if (held) chunks.push(...held)
    else unknown.push(id)
  }
  if (unknown.length > 0) {
    for await (const { id, payload } of vectors.scroll(where.collection, where.namespace, unknown)) chunks.push(decodeChunk(id, payload))
  }
  return { chunks, unknown }
}

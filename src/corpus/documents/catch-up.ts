import type { VectorStore } from '../../providers/vector-store/port.js'
import { decodeChunk, type ChunkRecord } from '../../kernel/chunk-payload.js'
import { decodeState } from '../write-window.js'

/**
 * Where a re-read of some documents spent its time, in ms: `queued` behind this library's own writes, `store`
 * reading the vector store, `lexical` bringing the lexical index up to it (its copy's change applied).
 */
export type RefreshPhases = { queued?: number; store?: number; lexical?: number }

/** How many documents a catch-up applied from the write window, and how many it read back from the vector store. */
export type RefreshSources = { window: number; store: number }

/**
 * The chunks these documents have now in the shared stores: a document whose state the write window kept (`kept`:
 * id -> its encoded state, src/corpus/write-window.ts) from it, the others (`unknown`) read again from the vector store.
 */
export async function currentChunks(
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

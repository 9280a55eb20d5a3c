/**
 * A document's state as the write window keeps it beside the change log (docs/scale-out-state.md, "The write window"):
 * its chunks as a write stored them, each as its point's id and payload (`encodeChunk`), so that another replica
 * decodes them with the same codec as the points it would read back from the vector store. A deleted document's state
 * is the empty list.
 */
import { randomBytes } from 'node:crypto'
import { decodeChunk, encodeChunk, type ChunkRecord } from '../kernel/chunk-payload.js'

/** What a documents write leaves for the window: its mark's token, whether every mark landed, each written document's state. */
export interface WindowDraft {
  token: string
  marked: boolean
  states: Map<string, string>
}

export function windowDraft(): WindowDraft {
  return { token: randomBytes(8).toString('hex'), marked: true, states: new Map() }
}

/** The states of the documents a write stored: each one's chunks (none: deleted), in the order written. */
export function keepStates(draft: WindowDraft, docIds: readonly string[], chunks: readonly ChunkRecord[]): void {
  const byDocument = new Map<string, ChunkRecord[]>(docIds.map((id) => [id, []]))
  for (const c of chunks) byDocument.get(c.doc_id)?.push(c)
  for (const [id, held] of byDocument) draft.states.set(id, JSON.stringify(held.map((c) => [c.id, encodeChunk(c)])))
}

/** A document's chunks from its kept state; undefined when the state is not one (read the document back instead). */
export function decodeState(docId: string, state: string): ChunkRecord[] | undefined {
  let parsed: unknown
  try {
    parsed = JSON.parse(state)
  } catch {
    return undefined
  }
  if (!Array.isArray(parsed)) return undefined
  const chunks: ChunkRecord[] = []
  for (const point of parsed) {
    if (!Array.isArray(point) || typeof point[0] !== 'string') return undefined
    const payload = point[1] as { doc_id?: unknown; text?: unknown } | null
    if (!payload || typeof payload !== 'object' || payload.doc_id !== docId || typeof payload.text !== 'string') return undefined
    try {
      chunks.push(decodeChunk(point[0], payload as { doc_id: string; text: string }))
    } catch {
      return undefined
    }
  }
  return chunks
}

/**
 * What one document's stored chunks derive, shared by the derived graph's and the derived Episodes' part of a write
 * (docs/derivation.md).
 */
import { deriveDocument } from '../derive/document.js'
import type { DerivationOptions } from '../derive/options.js'
import type { ChunkRecord } from '../kernel/chunk-payload.js'
import type { KgContribution } from '../providers/knowledge-graph/port.js'
import type { DocumentLibraryView } from './document-views.js'

/** The documents derived and not yet let go, by id, oldest first: what their chunks were (as JSON), the options, the result. */
const recent = new Map<string, { chunks: string; count: number; options: DerivationOptions; contribution: KgContribution }>()
let recentChunks = 0
/**
 * Chunks' worth of results kept at most, should a caller not let its derivations go: a bound, not a result per
 * document held for as long as the document is (11 KB a chunk at 20k chunks while ingesting).
 */
const RECENT_CHUNKS = 2048

/**
 * What one document's stored chunks derive (`deriveDocument`), derived once per stored version: a write's graph part
 * and its Episodes' part both derive the document, and the second finds the first's result. Found by what the chunks
 * hold (the catalog builds a new record on each read), so a changed document derives again; the write that derived
 * them ends the sharing with {@link forgetDerived}, and at most RECENT_CHUNKS chunks' worth is kept meanwhile (a larger
 * write derives its first documents twice).
 */
export function derivedContribution(chunks: readonly ChunkRecord[], options: DerivationOptions): KgContribution {
  if (chunks.length === 0) return deriveDocument(chunks, options)
  const docId = chunks[0]!.doc_id
  const held = JSON.stringify(chunks)
  const seen = recent.get(docId)
  if (seen && seen.options === options && seen.chunks === held) return seen.contribution
  const contribution = deriveDocument(chunks, options)
  forget(docId)
  recent.set(docId, { chunks: held, count: chunks.length, options, contribution })
  recentChunks += chunks.length
  for (const id of recent.keys()) {
    if (recentChunks <= RECENT_CHUNKS || id === docId) break
    forget(id)
  }
  return contribution
}

function forget(docId: string): void {
  const entry = recent.get(docId)
  if (!entry) return
  recent.delete(docId)
  recentChunks -= entry.count
}

/**
 * Drops what {@link derivedContribution} kept for these documents, once the write that derived them is over: kept for
 * as long as the documents were held, the contributions weighed a third of the ingesting process's heap (5.8 KB a chunk
 * at 10k chunks, bench/results/memory.log.md), which a restarted process never holds. A later derivation of the same
 * version derives again, to an equal result. (`_library`: the namespace's, which the documents are found without.)
 */
export function forgetDerived(docIds: readonly string[], _library?: DocumentLibraryView): void {
  for (const id of docIds) forget(id)
}

/** Whether a derivation of these stored chunks (a document's, in chunk order) is kept for a write to share. */
export function derivationHeld(chunks: readonly ChunkRecord[]): boolean {
  if (chunks.length === 0) return false
  return recent.get(chunks[0]!.doc_id)?.chunks === JSON.stringify(chunks)
}

/** The chunks the library stores for a document now, in chunk order (none for a document it does not hold). */
export function storedChunksOf(docId: string, library: DocumentLibraryView | undefined) {
  return [...(library?.storedChunks(docId).keys() ?? [])].map((chunkId) => library!.chunk(chunkId)!)
    .sort((a, b) => a.chunk_index - b.chunk_index)
}

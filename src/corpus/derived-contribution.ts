/**
 * What one document's stored chunks derive, shared by the derived graph's and the derived Episodes' part of a write
 * (docs/derivation.md).
 */
import { deriveDocument } from '../derive/document.js'
import type { DerivationOptions } from '../derive/options.js'
import type { ChunkRecord } from '../kernel/chunk-payload.js'
import type { KgContribution } from '../providers/knowledge-graph/port.js'
import type { DocumentLibraryView } from './document-views.js'

/** The last documents derived, by id, oldest first: what their chunks were (as JSON), the options, the result. */
const recent = new Map<string, { chunks: string; count: number; options: DerivationOptions; contribution: KgContribution }>()
let recentChunks = 0
/**
 * Chunks' worth of results kept: a write's graph part derives its documents, then its Episodes' part asks for the same
 * ones. A bound, not a result per document held for as long as the document is (12 KB a chunk at 20k chunks).
 */
const RECENT_CHUNKS = 2048

/**
 * What one document's stored chunks derive (`deriveDocument`), derived once per stored version: a write's graph part
 * and its Episodes' part both derive the document, and the second finds the first's result among the last documents
 * derived (up to RECENT_CHUNKS chunks' worth; a larger write derives its first documents twice). Found by what the
 * chunks hold (the catalog builds a new record on each read), so a changed document derives again.
 */
export function derivedContribution(chunks: readonly ChunkRecord[], options: DerivationOptions): KgContribution {
  if (chunks.length === 0) return deriveDocument(chunks, options)
  const docId = chunks[0]!.doc_id
  const held = JSON.stringify(chunks)
  const seen = recent.get(docId)
  if (seen && seen.options === options && seen.chunks === held) return seen.contribution
  const contribution = deriveDocument(chunks, options)
  if (seen) {
    recent.delete(docId)
    recentChunks -= seen.count
  }
  recent.set(docId, { chunks: held, count: chunks.length, options, contribution })
  recentChunks += chunks.length
  for (const [id, entry] of recent) {
    if (recentChunks <= RECENT_CHUNKS || id === docId) break
    recent.delete(id)
    recentChunks -= entry.count
  }
  return contribution
}

/** The chunks the library stores for a document now, in chunk order (none for a document it does not hold). */
export function storedChunksOf(docId: string, library: DocumentLibraryView | undefined) {
  return [...(library?.storedChunks(docId).keys() ?? [])].map((chunkId) => library!.chunk(chunkId)!)
    .sort((a, b) => a.chunk_index - b.chunk_index)
}

/**
 * What one document's stored chunks derive, shared by the derived graph's and the derived Episodes' part of a write
 * (docs/derivation.md).
 */
import { deriveDocument } from '../derive/document.js'
import type { DerivationOptions } from '../derive/options.js'
import type { ChunkRecord } from '../kernel/chunk-payload.js'
import type { KgContribution } from '../providers/knowledge-graph/port.js'
import type { DocumentLibraryView } from './document-views.js'

const derivedFrom = new WeakMap<ChunkRecord, { chunks: readonly ChunkRecord[]; options: DerivationOptions; contribution: KgContribution }>()

/**
 * What one document's stored chunks derive (`deriveDocument`), derived once per stored version: a write's graph part
 * and its Episodes' part both derive the document, and the second finds the first's result. Keyed by the catalog's own
 * chunk records, which a changed document replaces, so a new version derives again; the write that derived them ends
 * the sharing with {@link forgetDerived}.
 */
export function derivedContribution(chunks: readonly ChunkRecord[], options: DerivationOptions): KgContribution {
  const seen = chunks.length > 0 ? derivedFrom.get(chunks[0]!) : undefined
  if (seen && seen.options === options && seen.chunks.length === chunks.length && seen.chunks.every((c, i) => c === chunks[i])) return seen.contribution
  const contribution = deriveDocument(chunks, options)
  if (chunks.length > 0) derivedFrom.set(chunks[0]!, { chunks: [...chunks], options, contribution })
  return contribution
}

/**
 * Drops what {@link derivedContribution} kept for these documents' stored versions, once the write that derived them
 * is over: kept beside the catalog's records for as long as they are held, the contributions weighed a third of the
 * ingesting process's heap (5.8 KB a chunk at 10k chunks, bench/results/memory.log.md), which a restarted process never
 * holds. A later derivation of the same version derives again, to an equal result.
 */
export function forgetDerived(docIds: readonly string[], library: DocumentLibraryView | undefined): void {
  for (const id of docIds) {
    const first = storedChunksOf(id, library)[0]
    if (first) derivedFrom.delete(first)
  }
}

/** Whether a derivation of these stored chunks (a document's, in chunk order) is kept for a write to share. */
export function derivationHeld(chunks: readonly ChunkRecord[]): boolean {
  return chunks.length > 0 && derivedFrom.has(chunks[0]!)
}

/** The chunks the library stores for a document now, in chunk order (none for a document it does not hold). */
export function storedChunksOf(docId: string, library: DocumentLibraryView | undefined) {
  return [...(library?.storedChunks(docId).keys() ?? [])].map((chunkId) => library!.chunk(chunkId)!)
    .sort((a, b) => a.chunk_index - b.chunk_index)
}

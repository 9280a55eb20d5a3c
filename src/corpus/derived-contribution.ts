/**
 * What one document's stored chunks derive, shared by the derived graph's and the derived Episodes' part of a write
 * (docs/derivation.md).
 */
import { deriveDocument } from '../derive/document.js'
import type { DerivationOptions } from '../derive/options.js'
import type { ChunkRecord } from '../kernel/chunk-payload.js'
import type { KgContribution } from '../providers/knowledge-graph/port.js'
import type { DocumentLibraryView } from './document-views.js'

/** The last derivation of each document, by document id, until the write that made it ends ({@link forgetDerived}). */
const derivedFrom = new Map<string, { chunks: readonly ChunkRecord[]; options: DerivationOptions; contribution: KgContribution }>()

/** Whether two lists of a document's chunks give `deriveDocument` the same input: it reads id, text, title, metadata. */
const sameInput = (a: readonly ChunkRecord[], b: readonly ChunkRecord[]) =>
  a.length === b.length && a.every((c, i) => c.id === b[i]!.id && c.text === b[i]!.text && c.title === b[i]!.title && c.metadata === b[i]!.metadata)

/**
 * What one document's stored chunks derive (`deriveDocument`), derived once per stored version: a write's graph part
 * and its Episodes' part both derive the document, and the second finds the first's result. The catalog builds a
 * document's chunk records anew on each read, so a result is found by document id and kept only for chunks that give
 * the derivation the same input (ids, texts, title, the same metadata object); another version derives again. The
 * write that derived ends the sharing with {@link forgetDerived}.
 */
export function derivedContribution(chunks: readonly ChunkRecord[], options: DerivationOptions): KgContribution {
  const docId = chunks[0]?.doc_id
  const seen = docId === undefined ? undefined : derivedFrom.get(docId)
  if (seen && seen.options === options && sameInput(seen.chunks, chunks)) return seen.contribution
  const contribution = deriveDocument(chunks, options)
  if (docId !== undefined) derivedFrom.set(docId, { chunks: [...chunks], options, contribution })
  return contribution
}

/**
 * Drops what {@link derivedContribution} kept for these documents, once the write that derived them is over: kept for
 * as long as the catalog held the documents, the derivations weighed a third of the ingesting process's heap (5.8 KB a
 * chunk at 10k chunks, bench/results/memory.log.md), which a restarted process never holds. A later derivation of the
 * same version derives again, to an equal result.
 */
export function forgetDerived(docIds: readonly string[]): void {
  for (const id of docIds) derivedFrom.delete(id)
}

/** Whether a derivation of this document is kept for a write to share. */
export function derivationHeld(docId: string): boolean {
  return derivedFrom.has(docId)
}

/** The chunks the library stores for a document now, in chunk order (none for a document it does not hold). */
export function storedChunksOf(docId: string, library: DocumentLibraryView | undefined) {
  return [...(library?.storedChunks(docId).keys() ?? [])].map((chunkId) => library!.chunk(chunkId)!)
    .sort((a, b) => a.chunk_index - b.chunk_index)
}

import { EmbeddedLexicalIndexes, type EmbeddedLexicalIndexesOptions } from './indexes.js'
import type { LexicalIndexes } from './port.js'

export type {  LexicalIndexes,     } from './port.js'

/**
 * The embedded lexical backend (`LEXICAL_BACKEND=embedded`: BM25 over segments, in process, under `dir`). The other
 * backend, `qdrant` (`QdrantLexicalIndexes`, `./qdrant.ts`), keeps its postings in the vector store's chunk points,
 * so it is built with the vector store by `lexicalLegOnQdrant` (`./qdrant-wiring.ts`), not here.
 */
export function createLexicalIndexes(options: EmbeddedLexicalIndexesOptions): LexicalIndexes {
  return new EmbeddedLexicalIndexes(options)
}

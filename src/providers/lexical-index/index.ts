import { EmbeddedLexicalIndexes, type EmbeddedLexicalIndexesOptions } from './indexes.js'
import type { LexicalIndexes } from './port.js'

export type { LexicalIndex, LexicalIndexes, LexicalHit, LexicalDocument, LexicalChange, LexicalSearchOptions } from './port.js'

/** There is one lexical backend today (BM25 over segments, in process); the factory keeps the wiring uniform. */
export function createLexicalIndexes(options: EmbeddedLexicalIndexesOptions): LexicalIndexes {
  return new EmbeddedLexicalIndexes(options)
}

import { EmbeddedLexicalIndex, type EmbeddedLexicalIndexOptions } from './embedded.js'
import type { LexicalIndex } from './port.js'

export type { LexicalIndex, LexicalHit, LexicalDocument, LexicalChange, LexicalSearchOptions } from './port.js'

/** There is one lexical backend today (BM25 over segments, in process); the factory keeps the wiring uniform. */
export function createLexicalIndex(options: EmbeddedLexicalIndexOptions): LexicalIndex {
  return new EmbeddedLexicalIndex(options)
}

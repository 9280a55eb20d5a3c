import type { LexicalIndex } from './port.js'
import { WinkLexicalIndex, type WinkLexicalIndexOptions } from './wink.js'

export type { LexicalIndex, LexicalHit, LexicalDocument } from './port.js'

/** There is one lexical backend today (wink BM25 in process); the factory keeps the wiring uniform. */
export function createLexicalIndex(options: WinkLexicalIndexOptions): LexicalIndex {
  return new WinkLexicalIndex(options)
}

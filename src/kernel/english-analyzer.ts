import stem from 'wink-porter2-stemmer'
import { analyze, ENGLISH_STOP_WORDS } from './cjk-analyzer.js'

/** Changes whenever the same text can give other tokens here (beside the CJK analyzer's own version). */
export const ENGLISH_ANALYZER_VERSION = 1

const LATIN_WORD = /^[a-z]+$/
const POSSESSIVE = /'s$/

/**
 * The CJK analyzer's tokens, with English words brought to their Porter2 (Snowball English) stem: `paintings`,
 * `painted` and `painting` all give `paint`, `Caroline's` gives `carolin`. A possessive `'s` goes first (as Lucene's
 * EnglishPossessiveFilter does), then a word that is left a stop word goes too. Only words of the letters a-z are
 * stemmed: CJK bigrams, numbers, mixed tokens (`gpt4o`, `3.14`) and contractions other than `'s` pass as they are.
 * docs/lexical-index.md, "English words", has what was measured to choose it.
 */
export function analyzeEnglish(text: string): string[] {
  const tokens: string[] = []
  for (const token of analyze(text)) {
    const word = POSSESSIVE.test(token) ? token.slice(0, -2) : token
    if (!LATIN_WORD.test(word)) {
      if (word !== '') tokens.push(word)
      continue
    }
    if (ENGLISH_STOP_WORDS.has(word)) continue
    tokens.push(word.length > 2 ? stem(word) : word)
  }
  return tokens
}

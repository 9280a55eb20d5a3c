/**
 * The lexical analyzer shared by indexing and querying, after Lucene's CJKAnalyzer:
 * NFKC width folding, lowercase, runs of CJK characters as overlapping bigrams (a lone CJK character
 * stays a unigram), other letters and digits as words, and Lucene's English stop words dropped.
 * docs/lexical-index.md, "The analyzer and Lucene", lists where it differs from Lucene on purpose.
 */

/**
 * Changes whenever the same text can give other tokens; a persisted lexical index built with another
 * version is rebuilt from the vector store.
 */
export const ANALYZER_VERSION = 2

/** The 35 English stop words of Lucene's CJKAnalyzer (its stopwords.txt: no "an", with "s", "t", "www"). */
export const ENGLISH_STOP_WORDS: ReadonlySet<string> = new Set([
  'a', 'and', 'are', 'as', 'at', 'be', 'but', 'by', 'for', 'if', 'in', 'into', 'is', 'it', 'no', 'not',
  'of', 'on', 'or', 's', 'such', 't', 'that', 'the', 'their', 'then', 'there', 'these', 'they', 'this', 'to',
  'was', 'will', 'with', 'www'
])

// Katakana in Lucene's tokenizer is the Unicode Word_Break class, which also holds marks whose script is
// Common: the prolonged sound mark ー (U+30FC; half-width ｰ folds to it), ゠ (U+30A0) and the vertical
// kana repeat marks 〱–〵 (U+3031–U+3035).
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\u30fc\u30a0\u3031-\u3035]/u
const WORD = /[\p{L}\p{N}\p{M}_]/u
const DIGIT = /\p{Nd}/u
const LETTER = /\p{L}/u
const LETTER_OR_NUMBER = /[\p{L}\p{N}]/u
const SYMBOL = /\p{S}/u
const NON_SYMBOLS = /[^\p{S}]+/gu

const IS_CJK = 1
const IS_WORD = 2
const IS_DIGIT = 4
const IS_LETTER = 8
const IS_ALNUM = 16
const CLASSIFIED = 32

/** Character classes of the Basic Multilingual Plane, filled on first sight (the regexes are the slow part). */
const bmpClasses = new Uint8Array(65_536)

function classify(cp: number): number {
  if (cp < 65_536) {
    const cached = bmpClasses[cp]!
    if (cached !== 0) return cached
  }
  const ch = String.fromCodePoint(cp)
  let c = CLASSIFIED
  if (CJK.test(ch)) c |= IS_CJK | IS_ALNUM
  else if (WORD.test(ch)) c |= IS_WORD
  if (DIGIT.test(ch)) c |= IS_DIGIT
  if (LETTER.test(ch)) c |= IS_LETTER
  if (LETTER_OR_NUMBER.test(ch)) c |= IS_ALNUM
  if (cp < 65_536) bmpClasses[cp] = c
  return c
}

/**
 * NFKC, except that symbols keep their form: `℃` would become `°C` and give a stray `c` token, `™` would
 * glue `tm` to the word before it. A symbol breaks tokens, as in Lucene. Numbers do fold (`²` → `2`).
 */
function fold(text: string): string {
  return SYMBOL.test(text) ? text.replace(NON_SYMBOLS, (run) => run.normalize('NFKC')) : text.normalize('NFKC')
}

/**
 * Lowercase per character, as Java's Character.toLowerCase (and so Lucene) does: `İ` is `i` (not `i` plus a
 * combining dot) and a final `Σ` is `σ` (not `ς`). These are the only context or length changes in
 * JavaScript's default lowercasing.
 */
function lowercase(text: string): string {
  return text.replace(/[İΣ]/g, (ch) => (ch === 'İ' ? 'i' : 'σ')).toLowerCase()
}

/** Tokens of `text` in order, as the lexical index sees them. */
export function analyze(text: string): string[] {
  const folded = lowercase(fold(text))
  const chars: string[] = []
  const classes: number[] = []
  for (const ch of folded) {
    chars.push(ch)
    classes.push(classify(ch.codePointAt(0)!))
  }
  const tokens: string[] = []
  let start = -1 // first character of the current run
  let kind = 0 // IS_CJK or IS_WORD
  let alnum = false // the word run holds a letter or a digit
  let joined = false // the word run holds a folded apostrophe
  const flush = (end: number) => {
    if (start < 0) return
    if (kind === IS_CJK) {
      if (end - start === 1) tokens.push(chars[start]!)
      else for (let i = start; i + 1 < end; i++) tokens.push(chars[i]! + chars[i + 1]!)
    } else if (alnum) {
      let word = chars.slice(start, end).join('')
      if (joined) word = word.replace(/’/g, "'")
      if (!ENGLISH_STOP_WORDS.has(word)) tokens.push(word)
    }
    start = -1
  }
  for (let i = 0; i < chars.length; i++) {
    const c = classes[i]!
    const k = c & IS_CJK ? IS_CJK : c & IS_WORD ? IS_WORD : 0
    if (k === 0) {
      // Inside a word, `3.14`, `1,000` and `don't` stay one token, as in Unicode word segmentation.
      const ch = chars[i]!
      const prev = i > 0 ? classes[i - 1]! : 0
      const next = i + 1 < chars.length ? classes[i + 1]! : 0
      const joinsDigits = (ch === '.' || ch === ',') && prev & IS_DIGIT && next & IS_DIGIT
      const joinsLetters = (ch === "'" || ch === '’') && prev & IS_LETTER && next & IS_LETTER && !(prev & IS_CJK) && !(next & IS_CJK)
      if (start >= 0 && kind === IS_WORD && (joinsDigits || joinsLetters)) {
        if (ch === '’') joined = true
        continue
      }
      flush(i)
      continue
    }
    if (start >= 0 && kind !== k) flush(i)
    if (start < 0) {
      start = i
      kind = k
      alnum = false
      joined = false
    }
    if (c & IS_ALNUM) alnum = true
  }
  flush(chars.length)
  return tokens
}

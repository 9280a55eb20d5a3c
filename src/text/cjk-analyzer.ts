/**
 * The lexical analyzer shared by indexing and querying, after Lucene's CJKAnalyzer (DESIGN section 5):
 * NFKC width folding, lowercase, runs of CJK characters as overlapping bigrams (a lone CJK character
 * stays a unigram), other letters and digits as words, and Lucene's English stop words dropped.
 */

/** The 35 English stop words of Lucene's CJKAnalyzer (its stopwords.txt: no "an", with "s", "t", "www"). */
export const ENGLISH_STOP_WORDS: ReadonlySet<string> = new Set([
  'a', 'and', 'are', 'as', 'at', 'be', 'but', 'by', 'for', 'if', 'in', 'into', 'is', 'it', 'no', 'not',
  'of', 'on', 'or', 's', 'such', 't', 'that', 'the', 'their', 'then', 'there', 'these', 'they', 'this', 'to',
  'was', 'will', 'with', 'www'
])

const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u
const WORD = /[\p{L}\p{N}\p{M}_]/u
const DIGIT = /\p{Nd}/u
const LETTER = /\p{L}/u

/** Splits text into runs: `cjk` runs of touching CJK characters and `word` runs of other letters and digits. */
function* runs(text: string): Generator<{ kind: 'cjk' | 'word'; chars: string[] }> {
  const chars = [...text]
  let current: { kind: 'cjk' | 'word'; chars: string[] } | null = null
  for (let i = 0; i < chars.length; i++) {
    const ch = chars[i]!
    const kind = CJK.test(ch) ? 'cjk' : WORD.test(ch) ? 'word' : null
    if (kind === null) {
      // Inside a word, `3.14`, `1,000` and `don't` stay one token, as in Unicode word segmentation.
      const prev = chars[i - 1]
      const next = chars[i + 1]
      const joinsDigits = (ch === '.' || ch === ',') && prev && next && DIGIT.test(prev) && DIGIT.test(next)
      const joinsLetters = (ch === "'" || ch === '’') && prev && next && LETTER.test(prev) && LETTER.test(next) &&
        !CJK.test(prev) && !CJK.test(next)
      if (current?.kind === 'word' && (joinsDigits || joinsLetters)) {
        current.chars.push(ch)
        continue
      }
      if (current) yield current
      current = null
      continue
    }
    if (current && current.kind !== kind) {
      yield current
      current = null
    }
    if (!current) current = { kind, chars: [] }
    current.chars.push(ch)
  }
  if (current) yield current
}

/** Tokens of `text` in order, as the lexical index sees them. */
export function analyze(text: string): string[] {
  const folded = text.normalize('NFKC').toLowerCase()
  const tokens: string[] = []
  for (const run of runs(folded)) {
    if (run.kind === 'word') {
      const word = run.chars.join('').replace(/[’]/g, "'")
      if (!ENGLISH_STOP_WORDS.has(word)) tokens.push(word)
    } else if (run.chars.length === 1) {
      tokens.push(run.chars[0]!)
    } else {
      for (let i = 0; i + 1 < run.chars.length; i++) tokens.push(run.chars[i]! + run.chars[i + 1]!)
    }
  }
  return tokens
}

/**
 * Latin-script terms a Chinese segmenter takes apart: API paths (`/v1/chat/completions`), identifiers and model or
 * document numbers (`GPT-4o`, `Qwen2.5-14B`, `RS256`, `qh-auth`, `snake_case`), dotted names (`redis.conf`).
 */

/** A path of at least two segments, or one segment with a letter: `/v1/chat/completions`, `/health`. */
const API_PATH = String.raw`(?<![\w/])/[A-Za-z0-9_.{}:-]*[A-Za-z][A-Za-z0-9_.{}:-]*(?:/[A-Za-z0-9_.{}:-]+)*/?`
/** Letters or digits joined by `-`, `_`, `.` or `+`, with at least one letter. */
const IDENTIFIER = String.raw`(?<![\w.+-])(?=[\w.+-]*[A-Za-z])[A-Za-z0-9]+(?:[-_.+][A-Za-z0-9]+)*\+*`

const LATIN_TERM = new RegExp(`${API_PATH}|${IDENTIFIER}`, 'g')

export interface TermSpan {
  text: string
  start: number
  end: number
}

/** The Latin-script terms of a text, left to right, with their offsets. */
export function latinTerms(text: string): TermSpan[] {
  const spans: TermSpan[] = []
  for (const m of text.matchAll(LATIN_TERM)) {
    spans.push({ text: m[0], start: m.index, end: m.index + m[0].length })
  }
  return spans
}

/** Longest line taken as a title when a DOCX or a text file names none, in characters. */
const MAX_TITLE_CHARS = 50
/** A line that ends like a sentence or a clause is prose, not a title. */
const SENTENCE_END = /[。．.！!？?；;，,、：:…]$/u

/** Whether one line of text reads as a title: a letter or digit, at most {@link MAX_TITLE_CHARS} characters, not ending like a sentence. */
export function readsAsTitle(line: string): boolean {
  return /[\p{L}\p{N}]/u.test(line) && [...line].length <= MAX_TITLE_CHARS && !SENTENCE_END.test(line)
}

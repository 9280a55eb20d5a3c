/** Cutting plain text into sentences (relations and descriptions stay within one); clauses break them further. */

/** Ends a sentence: Chinese and Latin full stops, question and exclamation marks, semicolons, line breaks. */
const SENTENCE_END = /[。！？；!?;]+|\.(?=\s|$)|\n+/gu
/** Ends a clause within a sentence: commas and colons. A verb types a relation only within one clause. */
export const CLAUSE_BREAK = /[，,：:]/u

/** The non-blank sentences of a text, trimmed, in order; a sentence keeps its end mark. */
export function sentencesOf(text: string): string[] {
  const sentences: string[] = []
  let start = 0
  for (const m of text.matchAll(SENTENCE_END)) {
    const end = m[0].startsWith('\n') ? m.index : m.index + m[0].length
    const sentence = text.slice(start, end).trim()
    if (sentence !== '') sentences.push(sentence)
    start = m.index + m[0].length
  }
  const last = text.slice(start).trim()
  if (last !== '') sentences.push(last)
  return sentences
}

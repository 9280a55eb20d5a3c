import { textProblem } from '../text-junk.js'
import { normaliseText } from '../text-normalise.js'
import type { DocumentInput } from './input.js'

/** Largest metadata of one document: its JSON, in UTF-8 bytes. */
export const MAX_METADATA_BYTES = 8192

/** One document of a batch and what is wrong with it, each problem naming the field, the document and the value. */
export interface DocumentProblems {
  index: number
  id: string
  problems: string[]
}

/**
 * What is wrong with each document of a batch that the schema cannot see: an id given twice (the later ones), a
 * blank text or one that is still junk past MAX_JUNK_SHARE once normalised ({@link normaliseText}, {@link
 * textProblem}), metadata over {@link MAX_METADATA_BYTES}. Only the documents with a problem, in order. `indexOf`
 * gives the place a document had in the body as sent (the messages name it), when these are some of its documents.
 */
export function problemsByDocument(documents: readonly DocumentInput[], indexOf: (i: number) => number = (i) => i): DocumentProblems[] {
  const out: DocumentProblems[] = []
  const seen = new Set<string>()
  documents.forEach((d, at) => {
    const i = indexOf(at)
    const problems: string[] = []
    if (seen.has(d.id)) problems.push(`documents[${i}].id: "${d.id}" appears twice in this request`)
    seen.add(d.id)
    const problem = textProblem(normaliseText(d.text).text)
    if (problem) problems.push(`documents[${i}].text (id "${d.id}"): ${problem}`)
    if (d.metadata) {
      const bytes = Buffer.byteLength(JSON.stringify(d.metadata), 'utf8')
      if (bytes > MAX_METADATA_BYTES) {
        problems.push(`documents[${i}].metadata (id "${d.id}"): ${bytes} bytes of JSON, over the ${MAX_METADATA_BYTES} allowed (MAX_METADATA_BYTES)`)
      }
    }
    if (problems.length > 0) out.push({ index: i, id: d.id, problems })
  })
  return out
}

/** {@link problemsByDocument}, every problem of the batch in one list; empty when it can be written. */
export function documentProblems(documents: readonly DocumentInput[]): string[] {
  return problemsByDocument(documents).flatMap((d) => d.problems)
}

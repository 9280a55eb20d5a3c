/**
 * Text that decoded to junk: the replacement character U+FFFD (bytes the decoder could not read), C0 controls other
 * than tab, line feed, vertical tab, form feed and carriage return, DEL, C1 controls (U+0080–U+009F, what Latin-1
 * makes of stray bytes) and lone surrogates. Real prose holds almost none; a binary file or a file read in the wrong
 * encoding holds many. A text is judged after `normaliseText` (`./text-normalise.ts`) removed the C0 controls and
 * DEL, so what is counted then is what a wrong decoding leaves (bench/junk-line.ts measured the line).
 */

/** Largest share of a text's characters (code points) that may be junk once normalised: 0.5% (bench/junk-line.ts). */
export const MAX_JUNK_SHARE = 0.005

const JUNK = /[\uFFFD\u0000-\u0008\u000E-\u001F\u007F-\u009F]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g

/** How many of a text's code points are junk, and how many it has. */
export function junkCount(text: string): { junk: number; chars: number } {
  let chars = 0
  for (const _ of text) chars++
  return { junk: text.match(JUNK)?.length ?? 0, chars }
}

/** Why a text cannot be a document (blank, or junk past {@link MAX_JUNK_SHARE}); undefined when it can. */
export function textProblem(text: string): string | undefined {
  if (text.trim() === '') return 'is blank'
  const { junk, chars } = junkCount(text)
  if (junk / chars <= MAX_JUNK_SHARE) return undefined
  return `${junk} of its ${chars} characters (${percent(junk / chars)}) are replacement or control characters, over the ` +
    `${percent(MAX_JUNK_SHARE)} allowed (MAX_JUNK_SHARE): binary data, or text read in the wrong encoding`
}

const percent = (share: number) => `${Number((share * 100).toFixed(1))}%`

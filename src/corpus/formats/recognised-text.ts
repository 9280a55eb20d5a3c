/**
 * Text an OCR engine recognised, made safe for the Markdown reader every document goes through: a recognised line is
 * text, so whatever Markdown would read as structure at the start of a line is escaped with a backslash (CommonMark's
 * escape): `#` (a heading), a line of `-`, `=`, `*` or `_` (a setext underline, a rule, or front matter on the first
 * line), a code fence, an HTML block, a link reference definition (which Markdown would drop from the text).
 */
const STRUCTURE = [
  /^ {0,3}#/, // an ATX heading
  /^ {0,3}[-=*_][-=*_ \t]*$/, // a setext underline, a thematic break, a front-matter fence
  /^ {0,3}(?:```|~~~)/, // a code fence
  /^ {0,3}</, // an HTML block
  /^ {0,3}\[[^\]]*\]:/ // a link reference definition
]

export function recognisedAsMarkdown(text: string): string {
  return text.split('\n').map((line) => (STRUCTURE.some((re) => re.test(line)) ? `\\${line.trimStart()}` : line)).join('\n')
}

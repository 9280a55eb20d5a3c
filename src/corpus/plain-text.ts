/**
 * Text that is not Markdown: a `.txt` file, a PDF's text layer, an image's recognised text (docs/formats.md, "Plain
 * text"). Its only structure is its paragraphs (runs of lines between blank lines, as CommonMark's blank line: spaces
 * and tabs only) and, in a PDF, the headings its reader marked from the outline; a line starting `#`, `*`, `>`, `|`,
 * `1.` or `<` is text like any other and stays in its chunk as written.
 */
import { IMAGE_FORMATS } from '../ocr/image-formats.js'

/** The formats whose text is plain (`metadata.format`, set by the file readers): text, PDF and the image files OCR reads. */
const PLAIN_FORMATS: ReadonlySet<string> = new Set(['text', 'pdf', ...IMAGE_FORMATS])

/** Whether a document's text is plain text rather than Markdown (any document without such a format is Markdown). */
export function isPlainText(metadata: { format?: unknown } | undefined): boolean {
  return typeof metadata?.format === 'string' && PLAIN_FORMATS.has(metadata.format)
}

/** Whether the document's plain text may carry heading marks: a PDF's, whose reader marks its outline's entries. */
export const carriesHeadingMarks = (metadata: { format?: unknown } | undefined) => metadata?.format === 'pdf'

/**
 * A PDF's heading mark: `#` to `######`, a space, the heading, at the start of a line. A line of the text itself that
 * starts with `#` (after any backslashes) is written with one more backslash ({@link escapeHeadingMark}), which the
 * chunker takes off again ({@link unescapeHeadingMark}): the two are exact inverses, so every line comes back as read.
 */
export const HEADING_MARK = /^(#{1,6}) (.*)$/

const ESCAPED = /^\\+#/

/** A line of a PDF's text as its document holds it: one more backslash in front when it could read as a heading mark. */
export const escapeHeadingMark = (line: string): string => (/^\\*#/.test(line) ? `\\${line}` : line)

/** A line of a PDF's document text as it was read. */
export const unescapeHeadingMark = (line: string): string => (ESCAPED.test(line) ? line.slice(1) : line)

/** A paragraph of plain text or a heading mark, with where its source starts and ends in the text. */
export type PlainBlock =
  | { kind: 'paragraph'; text: string; start: number; end: number }
  | { kind: 'heading'; depth: number; text: string; line: string; start: number; end: number }

/**
 * The blocks of a plain text (line ends already `\n`): each paragraph with its lines as read (heading-mark escapes
 * taken off when `marks`), and, when `marks`, each heading mark.
 */
export function plainBlocks(text: string, marks: boolean): PlainBlock[] {
  const out: PlainBlock[] = []
  let lines: string[] = []
  let start = 0
  let end = 0
  const close = () => {
    if (lines.length > 0) out.push({ kind: 'paragraph', text: lines.join('\n'), start, end })
    lines = []
  }
  let at = 0
  for (const line of text.split('\n')) {
    const lineEnd = at + line.length
    const mark = marks ? HEADING_MARK.exec(line) : null
    if (/^[ \t]*$/.test(line)) {
      close()
    } else if (mark) {
      close()
      out.push({ kind: 'heading', depth: mark[1]!.length, text: mark[2]!.trim(), line, start: at, end: lineEnd })
    } else {
      if (lines.length === 0) start = at
      lines.push(marks ? unescapeHeadingMark(line) : line)
      end = lineEnd
    }
    at = lineEnd + 1
  }
  close()
  return out
}

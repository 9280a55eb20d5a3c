/**
 * How a packed passage is written in each context format. Every block ends with "\n" and starts with a
 * character that is neither whitespace nor "/" (`#`, `[`, `<`, `{`), and the same holds where the frame meets
 * a block. Neither encoding's regex (o200k_base, cl100k_base) makes a piece that crosses such a junction, so
 * a context's token count is the sum of its frame's and its blocks' counts (pack.ts relies on it, and checks
 * each junction it relies on with `splitsCleanly`).
 */
export const CONTEXT_FORMATS = ['markdown', 'xml', 'text', 'jsonl'] as const
export type ContextFormat = (typeof CONTEXT_FORMATS)[number]

/** A passage as it is written into the context. */
export interface Passage {
  /** Its citation marker, `[n]`, from 1 in the order passages were packed. */
  marker: number
  kind: 'item' | 'evidence'
  /** The recall item id, or for evidence the chunk id. */
  id: string
  source: string
  mode: string
  /** A short label for the heading: title, entity name, Episode name, or the item it is evidence for. */
  label?: string
  text: string
  /** The text was cut; `text` ends where it was cut. */
  truncated: boolean
}

/** What comes before and after the blocks. */
export function frame(format: ContextFormat): { head: string; tail: string } {
  return format === 'xml' ? { head: '<context>\n', tail: '</context>\n' } : { head: '', tail: '' }
}

/** Marks the place where a text was cut (not in jsonl, which says `"truncated": true`). */
const ELLIPSIS = '…'

const oneLine = (s: string): string => s.replace(/\s+/g, ' ').trim()

const escapeXml = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')

function heading(p: Passage): string {
  const label = p.label ? ` — ${oneLine(p.label)}` : ''
  return `[${p.marker}] ${oneLine(p.source)}${label}`
}

/**
 * Whether a token count may be split at the junction of `left` and `right`: `left` ends with "\n" and `right`
 * starts with neither whitespace nor "/". In both encodings' regexes only ` ?[^\s\p{L}\p{N}]+[\r\n/]*` and the
 * whitespace alternatives can hold a "\n", and none of them runs on into such a character, so a piece ends at
 * the junction and the count of the whole is the sum of the two counts.
 */
export function splitsCleanly(left: string, right: string): boolean {
  return left.endsWith('\n') && right !== '' && !/^[\s/]/u.test(right)
}

/**
 * The block of one passage, ending with "\n", in parts whose junctions split cleanly (see `splitsCleanly`):
 * the heading, the text (the part worth memoising: the same chunk comes back request after request) and the
 * closing tag. A text starting with whitespace or "/" stays with its heading.
 */
export function renderParts(format: ContextFormat, p: Passage): string[] {
  const body = p.truncated && format !== 'jsonl' ? `${p.text}${ELLIPSIS}` : p.text
  const joined = (head: string, text: string, ...rest: string[]): string[] =>
    splitsCleanly(head, text) ? [head, text, ...rest] : [head + text, ...rest]
  switch (format) {
    case 'markdown':
      return joined(`### ${heading(p)}\n`, `${body}\n\n`)
    case 'text':
      return joined(`${heading(p)}\n`, `${body}\n\n`)
    case 'xml': {
      const attributes = [
        `id="${p.marker}"`, `ref="${escapeXml(p.id)}"`, `source="${escapeXml(oneLine(p.source))}"`, `mode="${p.mode}"`,
        ...(p.kind === 'evidence' ? ['kind="evidence"'] : []),
        ...(p.label ? [`label="${escapeXml(oneLine(p.label))}"`] : []),
        ...(p.truncated ? ['truncated="true"'] : [])
      ]
      return joined(`<source ${attributes.join(' ')}>\n`, `${escapeXml(body)}\n`, '</source>\n')
    }
    case 'jsonl':
      return [`${JSON.stringify({
        marker: p.marker, kind: p.kind, id: p.id, source: p.source, mode: p.mode,
        ...(p.label ? { label: p.label } : {}), text: body, ...(p.truncated ? { truncated: true } : {})
      })}\n`]
  }
}

/** The block of one passage, ending with "\n". */
export function renderBlock(format: ContextFormat, p: Passage): string {
  return renderParts(format, p).join('')
}

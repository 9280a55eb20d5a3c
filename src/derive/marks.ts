/**
 * What a Markdown text marks as a term: heading parts, emphasised and bold spans, inline code and link texts; and the
 * text with that markup taken away, which is what sentences are cut from.
 */

const HEADING = /^ {0,3}#{1,6}[ \t]+(.+?)[ \t#]*$/gm
const BOLD = /\*\*([^*\n]+?)\*\*|__([^_\n]+?)__/g
// single `*x*` only: `_x_` would take snake_case identifiers apart
const EMPHASIS = /(?<![*\w])\*([^*\n]+?)\*(?![*\w])/g
const CODE = /`([^`\n]+)`/g
const LINK = /!?\[([^\]\n]+)\]\([^)\n]*\)/g
/** Outline numbering a heading starts with: `一、`, `1.`, `1.2`, `(3)`, `第二章`. */
const NUMBERING = /^(?:[（(]?[一二三四五六七八九十百\d]+(?:\.\d+)*[）)、.．:：]?|第[一二三四五六七八九十百\d]+[章节条部分篇])\s*/u
/** Where a heading breaks into parts: whitespace and punctuation other than the ones inside identifiers. */
const HEADING_BREAK = /[\s，,、：:；;（）()《》“”"'‘’【】[\]|/]+/u

/** Function words a heading part may start with (`与 v2 的差异` → `差异`). */
const LEADING_PARTICLES = /^[的与和及或对在从把被]+/u

/** The spans a text marks, in order of appearance, each once; heading parts are split at spaces and punctuation. */
export function markedTerms(markdown: string, maxLength: number): string[] {
  const terms: string[] = []
  const add = (term: string | undefined) => {
    const t = term?.trim()
    if (t && [...t].length <= maxLength && !terms.includes(t)) terms.push(t)
  }
  const found: Array<{ at: number; terms: string[] }> = []
  for (const m of markdown.matchAll(HEADING)) {
    const heading = stripInline(m[1]!).replace(NUMBERING, '')
    found.push({ at: m.index, terms: heading.split(HEADING_BREAK).map((part) => part.replace(LEADING_PARTICLES, '')).filter((part) => part !== '') })
  }
  for (const pattern of [BOLD, EMPHASIS, CODE, LINK]) {
    for (const m of markdown.matchAll(pattern)) found.push({ at: m.index, terms: [stripInline(m[1] ?? m[2] ?? '')] })
  }
  found.sort((a, b) => a.at - b.at)
  for (const f of found) for (const term of f.terms) add(term)
  return terms
}

/** The text without Markdown markup: heading marks, emphasis, code ticks and link targets go, their words stay. */
export function plainText(markdown: string): string {
  return stripInline(markdown.replace(/^ {0,3}#{1,6}[ \t]+(.+?)[ \t#]*$/gm, '$1'))
}

function stripInline(text: string): string {
  return text
    .replace(LINK, '$1')
    .replace(CODE, '$1')
    .replace(BOLD, (_m, a: string | undefined, b: string | undefined) => a ?? b ?? '')
    .replace(EMPHASIS, '$1')
}

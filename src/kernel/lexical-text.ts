/** What the indexed text of a chunk is made of, as a chunk record and a stored payload both hold it. */
export interface ChunkContext {
  text: string
  title?: string | undefined
  heading_path?: readonly string[] | undefined
}

const HEADING_LINE = /^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/gmu

/** A heading line's text without inline markup (code ticks, emphasis, link targets) or an `{#id}`. */
const headingText = (line: string) => line.replace(/\[([^\]]*)\]\([^)]*\)/gu, '$1').replace(/[`*_~]/gu, '')
  .replace(/\s*\{#[^}]*\}\s*$/u, '').replace(/\s+/gu, ' ').trim()

/**
 * A chunk's contextual header: its document's title, then the headings above it (outermost first), leaving out
 * each one the chunk holds as a heading line of its own (the first chunk its title, a section's first chunk its
 * heading), joined by ' > '; '' when nothing is left.
 */
export function contextHeader(chunk: ChunkContext): string {
  const held = new Set(Array.from(chunk.text.matchAll(HEADING_LINE), (m) => headingText(m[1]!)))
  const parts: string[] = []
  for (const part of [chunk.title, ...(chunk.heading_path ?? [])]) {
    if (part && !parts.includes(part) && !held.has(part)) parts.push(part)
  }
  return parts.join(' > ')
}

/** The chunk after its contextual header, on a line of its own. */
function withHeader(chunk: ChunkContext): string {
  const header = contextHeader(chunk)
  return header ? `${header}\n${chunk.text}` : chunk.text
}

/**
 * The text the lexical leg indexes for a chunk: the chunk after its contextual header. The embedded index and
 * the lexical leg on Qdrant take it from here; callers are given the chunk's own text.
 */
export const lexicalText = (chunk: ChunkContext): string => withHeader(chunk)

/** The text the vector leg embeds for a chunk. */
export const passageText = (chunk: ChunkContext): string => withHeader(chunk)

/**
 * Markdown and plain text into chunks (docs/api.md, "Hybrid in detail"): split on headings, then paragraphs, then
 * sentences, packing pieces up to ~480 CJK characters or ~350 words; never mid-sentence unless a single
 * sentence is itself too long. A heading with no text of its own joins the section after it.
 */

export const MAX_CJK_CHARS = 480
export const MAX_WORDS = 350

export interface Chunk {
  index: number
  text: string
}

export interface ParsedDocument {
  /** Fields of a leading `---` front-matter block (`id`, `title`, `source`, …). */
  frontMatter: Record<string, string>
  /** The first `#` heading, if any. */
  heading?: string
  body: string
}

const CJK_CHAR = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u
const NON_CJK_WORD = /[^\s\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]+/gu

/** Size in "CJK character units": a CJK character counts 1, another word 480/350 of one. */
export function chunkSize(text: string): number {
  let cjk = 0
  for (const ch of text) if (CJK_CHAR.test(ch)) cjk++
  const words = (text.match(NON_CJK_WORD) ?? []).filter((w) => /[\p{L}\p{N}]/u.test(w)).length
  return cjk + (words * MAX_CJK_CHARS) / MAX_WORDS
}

export function parseMarkdown(source: string): ParsedDocument {
  const text = source.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n')
  const frontMatter: Record<string, string> = {}
  let body = text
  const fm = /^---\n([\s\S]*?)\n---\n?/.exec(text)
  if (fm) {
    for (const line of fm[1]!.split('\n')) {
      const m = /^([A-Za-z_][\w-]*):\s*(.*)$/.exec(line)
      if (m) frontMatter[m[1]!] = m[2]!.trim().replace(/^(['"])(.*)\1$/, '$2')
    }
    body = text.slice(fm[0].length)
  }
  const h1 = /^#\s+(.+)$/m.exec(body)
  return { frontMatter, ...(h1 ? { heading: h1[1]!.trim() } : {}), body }
}

/** Splits text into sentences, keeping each terminator (and closing quotes) with its sentence. */
export function splitSentences(text: string): string[] {
  const parts = text.match(/[^。！？!?；;\n]+(?:[。！？!?；;]+[”’」』)）"']*|\n|$)|[。！？!?；;]+/gu) ?? []
  const sentences: string[] = []
  for (const p of parts) {
    // A Latin full stop ends a sentence only when followed by a space (not in 3.14 or v1.2).
    sentences.push(...p.split(/(?<=\.)\s+(?=\S)/u))
  }
  return sentences.map((s) => s.trim()).filter((s) => s.length > 0)
}

function hardSplit(sentence: string): string[] {
  const out: string[] = []
  let current = ''
  for (const ch of sentence) {
    if (current && chunkSize(current + ch) > MAX_CJK_CHARS) {
      out.push(current)
      current = ''
    }
    current += ch
  }
  if (current) out.push(current)
  return out
}

interface Piece {
  text: string
  /** Whether the piece starts a new paragraph (joined by a blank line) or continues one. */
  newParagraph: boolean
}

function joinPiece(current: string, piece: Piece): string {
  if (!current) return piece.text
  if (piece.newParagraph) return `${current}\n\n${piece.text}`
  // Sentences of one paragraph: CJK text runs on, Latin text gets a space.
  return /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}。！？；]$/u.test(current)
    ? current + piece.text
    : `${current} ${piece.text}`
}

/** Packs pieces in order into chunks no bigger than the limit. */
function pack(pieces: Piece[]): string[] {
  const out: string[] = []
  let current = ''
  for (const piece of pieces) {
    const candidate = joinPiece(current, piece)
    if (chunkSize(candidate) <= MAX_CJK_CHARS) {
      current = candidate
      continue
    }
    if (current) out.push(current)
    current = piece.text
  }
  if (current) out.push(current)
  return out
}

function splitSection(section: string): string[] {
  if (chunkSize(section) <= MAX_CJK_CHARS) return [section]
  const paragraphs = section.split(/\n\s*\n/).map((p) => p.trim()).filter(Boolean)
  const pieces: Piece[] = []
  for (const p of paragraphs) {
    if (chunkSize(p) <= MAX_CJK_CHARS) { pieces.push({ text: p, newParagraph: true }); continue }
    let first = true
    for (const s of splitSentences(p)) {
      const parts = chunkSize(s) <= MAX_CJK_CHARS ? [s] : hardSplit(s)
      for (const text of parts) {
        pieces.push({ text, newParagraph: first })
        first = false
      }
    }
  }
  return pack(pieces)
}

/** Sections of a Markdown body: text before the first heading, then each heading with its text. */
function sections(body: string): string[] {
  const lines = body.split('\n')
  const out: string[] = []
  let current: string[] = []
  let inFence = false
  for (const line of lines) {
    if (/^\s*(```|~~~)/.test(line)) inFence = !inFence
    if (!inFence && /^#{1,6}\s/.test(line) && current.some((l) => l.trim() !== '')) {
      out.push(current.join('\n').trim())
      current = []
    }
    current.push(line)
  }
  if (current.some((l) => l.trim() !== '')) out.push(current.join('\n').trim())
  // A heading with no text of its own joins the next section.
  const merged: string[] = []
  let pending = ''
  for (const s of out) {
    const isBareHeading = s.split('\n').every((l) => /^#{1,6}\s/.test(l) || l.trim() === '')
    if (isBareHeading) { pending = pending ? `${pending}\n${s}` : s; continue }
    merged.push(pending ? `${pending}\n\n${s}` : s)
    pending = ''
  }
  if (pending) merged.push(pending)
  return merged
}

/** Chunks of a Markdown body (front matter already removed) or of plain text, indexed from 0. */
export function chunkMarkdown(body: string): Chunk[] {
  return sections(body).flatMap(splitSection).map((text, index) => ({ index, text }))
}

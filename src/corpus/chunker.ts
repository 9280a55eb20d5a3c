/**
 * Markdown and plain text into chunks (docs/api.md, "Hybrid in detail"). Markdown is read as CommonMark + GFM
 * (`./markdown.ts`); plain text (`./plain-text.ts`: a `.txt` file, a PDF, an image's recognised text) as paragraphs
 * between blank lines, with a PDF's heading marks. Both are split on headings, then blocks, packing blocks up to ~480 CJK characters or ~350 words. A
 * paragraph over the limit is cut at sentence ends (mid-sentence only when one sentence alone is too long); a
 * code block, table, list item or other block is never cut unless it alone is over the limit, and then only at
 * line ends (the chunk is marked `split: 'lines'`). A heading with no text of its own joins the section after
 * it and never ends a chunk. Blocks with no prose (scripts, styles, HTML-only components, rules, link
 * definitions) are left out, and a chunk identical to an earlier one of the document is given once.
 */
import type { Heading, ListItem, Paragraph, RootContent } from 'mdast'
import { bodyBlocks, headingInfo, readMarkdown, Slugger, sourceOf, type MarkdownTree } from './markdown.js'
import { plainBlocks } from './plain-text.js'

/**
 * The chunker's version, stored with every chunk: change it whenever the same text could give other chunks (limits,
 * cuts, what is indexed), so that re-ingesting an unchanged document indexes it again.
 */
export const CHUNKER_VERSION = 'markdown@3'

export const MAX_CJK_CHARS = 480
const MAX_WORDS = 350

export interface Chunk {
  index: number
  text: string
  /** The headings above the chunk, outermost first; `[]` before the first heading. */
  headingPath: string[]
  /** The anchor of the innermost heading above the chunk: its explicit `{#id}`, else its GitHub-style slug. */
  anchor?: string
  /** `lines` when the chunk holds part of a block that, alone over the limit, was cut at line ends. */
  split?: 'lines'
  /** Where the chunk's source starts and ends in the text read (front matter included, line ends made `\n`). */
  start: number
  end: number
}

export interface ParsedDocument {
  /** Fields of a leading YAML front matter (`id`, `title`, `source`, …), scalars as strings. */
  frontMatter: Record<string, string>
  /** The plain text of the first level-1 heading, if any, anchor removed. */
  heading?: string
  /** The text after the front matter. */
  body: string
  tree: MarkdownTree
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
  const tree = readMarkdown(source)
  const h1 = bodyBlocks(tree).find((b): b is Heading => b.type === 'heading' && b.depth === 1)
  const heading = h1 ? headingInfo(tree, h1).text : ''
  return { frontMatter: tree.frontMatter, ...(heading ? { heading } : {}), body: tree.text.slice(tree.bodyStart), tree }
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
  /** How it joins the piece before it in one chunk: as a new block, a new line, or the next sentence. */
  join: 'block' | 'line' | 'sentence'
  /** A heading line: it never ends a chunk that more text follows. */
  heading?: true
  /** Part of a block cut at line ends. */
  cut?: true
  /** Where the piece's source starts and ends in the text read. */
  start: number
  end: number
}

const ENDS_IN_CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}。！？；]$/u

function joinPiece(current: string, piece: Piece): string {
  if (!current) return piece.text
  if (piece.join === 'block') return `${current}\n\n${piece.text}`
  if (piece.join === 'line') return `${current}\n${piece.text}`
  // Sentences of one paragraph: CJK text runs on, Latin text gets a space.
  return ENDS_IN_CJK.test(current) ? current + piece.text : `${current} ${piece.text}`
}

const fits = (text: string) => chunkSize(text) <= MAX_CJK_CHARS

/**
 * A paragraph starting at `start` in the text read: whole when it fits, else its sentences (a sentence over the
 * limit cut where it must), each placed where it is found in the paragraph.
 */
function prosePieces(text: string, start: number, join: Piece['join'] = 'block', cut?: true): Piece[] {
  if (fits(text)) return [{ text, join, start, end: start + text.length, ...(cut ? { cut } : {}) }]
  const pieces: Piece[] = []
  let at = 0
  for (const sentence of splitSentences(text)) {
    for (const part of fits(sentence) ? [sentence] : hardSplit(sentence)) {
      const found = text.indexOf(part, at)
      if (found >= 0) at = found
      pieces.push({ text: part, join: pieces.length === 0 ? join : 'sentence', start: start + at, end: start + at + part.length, ...(cut ? { cut } : {}) })
      if (found >= 0) at += part.length
    }
  }
  return pieces
}

/** A block starting at `start`, kept whole when it fits; else its lines, each marked as cut (a line over the limit as prose). */
function wholePieces(text: string, start: number, join: Piece['join'] = 'block'): Piece[] {
  if (fits(text)) return [{ text, join, start, end: start + text.length }]
  let at = start
  return text.split('\n').flatMap((line, i) => {
    const pieces = prosePieces(line, at, i === 0 ? join : 'line', true)
    at += line.length + 1
    return pieces
  })
}

const SCRIPT_OR_STYLE = /<(script|style)\b[\s\S]*?(?:<\/\1\s*>|$)/giu
const COMMENT = /<!--[\s\S]*?(?:-->|$)/gu

/** An HTML block without its scripts, styles and comments; empty when no prose (a letter or digit outside tags) is left. */
function htmlProse(html: string): string {
  const kept = html.replace(SCRIPT_OR_STYLE, '').replace(COMMENT, '').trim()
  return /[\p{L}\p{N}]/u.test(kept.replace(/<[^>]*>/gu, '')) ? kept : ''
}

/** A paragraph of inline HTML only (a component such as `<ClientOnly><Demo /></ClientOnly>`), its text blank or tags. */
const htmlOnly = (p: Paragraph) =>
  p.children.some((c) => c.type === 'html') && p.children.every((c) => c.type === 'html' || (c.type === 'text' && c.value.trim() === ''))

const startOf = (block: RootContent | ListItem): number => block.position!.start.offset!

function blockPieces(tree: MarkdownTree, block: RootContent): Piece[] {
  switch (block.type) {
    case 'yaml': case 'thematicBreak': case 'definition': return []
    case 'html': {
      // the prose left may be shorter than the block: its pieces are placed as if it began where the block does
      const prose = htmlProse(block.value)
      return prose ? wholePieces(prose, startOf(block)) : []
    }
    case 'paragraph': return htmlOnly(block) ? [] : prosePieces(sourceOf(tree, block), startOf(block))
    case 'list':
      return block.children.flatMap((item, i) => wholePieces(sourceOf(tree, item), startOf(item), i > 0 && !block.spread ? 'line' : 'block'))
    default: return wholePieces(sourceOf(tree, block), startOf(block))
  }
}

interface Section {
  path: string[]
  anchor?: string
  pieces: Piece[]
}

/** Sections of the body: text before the first heading, then each heading with its blocks. */
function sections(tree: MarkdownTree): Section[] {
  const headings = new Sections()
  for (const block of bodyBlocks(tree)) {
    if (block.type !== 'heading') {
      headings.add(blockPieces(tree, block))
      continue
    }
    const h = headingInfo(tree, block)
    headings.open(h.depth, h.text, h.explicitAnchor, { text: h.line, join: 'block', heading: true, start: startOf(block), end: block.position!.end.offset! })
  }
  return headings.end()
}

/** Sections of a plain text: its paragraphs as prose, under the heading marks it carries when `marks` (a PDF's). */
function plainSections(text: string, marks: boolean): Section[] {
  const headings = new Sections()
  for (const block of plainBlocks(text, marks)) {
    if (block.kind === 'paragraph') headings.add(prosePieces(block.text, block.start))
    else headings.open(block.depth, block.text, undefined, { text: block.line, join: 'block', heading: true, start: block.start, end: block.end })
  }
  return headings.end()
}

/** Sections as headings open them: each heading closes the ones at its depth or deeper; a heading with no text of its own joins the section after it. */
class Sections {
  private readonly out: Section[] = []
  private readonly stack: { depth: number; text: string }[] = []
  private readonly slugger = new Slugger()
  private current: Section = { path: [], pieces: [] }

  add(pieces: Piece[]): void {
    this.current.pieces.push(...pieces)
  }

  open(depth: number, text: string, explicitAnchor: string | undefined, line: Piece): void {
    const slug = this.slugger.slug(text)
    const anchor = explicitAnchor ?? slug
    while (this.stack.length > 0 && this.stack.at(-1)!.depth >= depth) this.stack.pop()
    this.stack.push({ depth, text })
    const bare = this.current.pieces.every((p) => p.heading)
    if (!bare) this.out.push(this.current)
    this.current = {
      path: this.stack.map((o) => o.text).filter(Boolean), ...(anchor ? { anchor } : {}),
      pieces: [...(bare ? this.current.pieces : []), line]
    }
  }

  end(): Section[] {
    if (this.current.pieces.length > 0) this.out.push(this.current)
    return this.out
  }
}

interface Packed { text: string; cut: boolean; start: number; end: number }

/** Packs a section's pieces in order into chunks no bigger than the limit; trailing headings move on with the text they head. */
function pack(pieces: readonly Piece[]): Packed[] {
  const out: Packed[] = []
  let current: Piece[] = []
  let text = ''
  const close = (held: Piece[]) => {
    if (held.length === 0) return
    const joined = held.reduce((t, p) => joinPiece(t, p), '').replace(/^\n+|\n+$/g, '')
    if (joined.trim()) out.push({ text: joined, cut: held.some((p) => p.cut), start: held[0]!.start, end: Math.max(...held.map((p) => p.end)) })
  }
  for (const piece of pieces) {
    const candidate = joinPiece(text, piece)
    if (current.length === 0 || fits(candidate)) {
      current.push(piece)
      text = candidate
      continue
    }
    const headings: Piece[] = []
    while (current.length > 0 && current.at(-1)!.heading) headings.unshift(current.pop()!)
    close(current)
    current = []
    text = ''
    const carried = headings.reduce((t, p) => joinPiece(t, p), '')
    if (headings.length > 0 && fits(joinPiece(carried, { ...piece, join: 'block' }))) {
      current = [...headings]
      text = carried
    } else {
      close(headings)
    }
    current.push(current.length === 0 ? { ...piece, join: 'block' } : piece)
    text = joinPiece(text, current.at(-1)!)
  }
  close(current)
  return out
}

/** Chunks of a Markdown document (its front matter is left out), indexed from 0. */
export function chunkMarkdown(source: string | ParsedDocument): Chunk[] {
  return chunksOf(sections(typeof source === 'string' ? readMarkdown(source) : source.tree))
}

/**
 * Chunks of a plain text (line ends already `\n`), indexed from 0: every character of its paragraphs kept as read,
 * and with `marks` (a PDF) its heading marks as headings.
 */
export function chunkPlainText(text: string, marks: boolean): Chunk[] {
  return chunksOf(plainSections(text, marks))
}

function chunksOf(sectionList: readonly Section[]): Chunk[] {
  const seen = new Set<string>()
  const chunks: Chunk[] = []
  for (const section of sectionList) {
    for (const { text, cut, start, end } of pack(section.pieces)) {
      if (seen.has(text)) continue
      seen.add(text)
      chunks.push({
        index: chunks.length, text, headingPath: section.path,
        ...(section.anchor ? { anchor: section.anchor } : {}), ...(cut ? { split: 'lines' as const } : {}), start, end
      })
    }
  }
  return chunks
}

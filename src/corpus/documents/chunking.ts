import { chunkMarkdown, chunkPlainText, parseMarkdown, type Chunk } from '../chunker.js'
import { chunkId, type ChunkRecord } from '../../kernel/chunk-payload.js'
import { carriesHeadingMarks, isPlainText } from '../plain-text.js'
import type { DocumentInput } from './input.js'
import { pageBreaks, pagesOf } from './page-breaks.js'

/**
 * Turns one document into its chunk records (no I/O): as Markdown, or as plain text when its format says it was read
 * from a file that is not Markdown (src/corpus/plain-text.ts).
 */
export function chunkDocument(doc: DocumentInput): ChunkRecord[] {
  const { text, title, chunks } = read(doc)
  const breaks = pageBreaks(text, doc.metadata)
  return chunks.map((c) => ({
    id: chunkId(doc.id, c.index),
    doc_id: doc.id,
    chunk_index: c.index,
    text: c.text,
    source: doc.source ?? doc.id,
    ...(title ? { title } : {}),
    ...(c.headingPath.length > 0 ? { heading_path: c.headingPath } : {}),
    ...(c.anchor ? { anchor: c.anchor } : {}),
    ...(c.split ? { split: c.split } : {}),
    ...(breaks ? pagesOf(text, breaks, c.start, c.end) : {}),
    ...(doc.metadata ? { metadata: doc.metadata } : {})
  }))
}

/** The text the chunks' offsets point into, the title (given, else front matter's or the first level-1 heading's) and the chunks. */
function read(doc: DocumentInput): { text: string; title: string | undefined; chunks: Chunk[] } {
  if (isPlainText(doc.metadata)) {
    const text = doc.text.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n')
    const marks = carriesHeadingMarks(doc.metadata)
    const heading = marks ? /^# (.*)$/m.exec(text)?.[1]!.trim() : undefined
    return { text, title: doc.title ?? (heading || undefined), chunks: chunkPlainText(text, marks) }
  }
  const parsed = parseMarkdown(doc.text)
  return { text: parsed.tree.text, title: doc.title ?? parsed.frontMatter.title ?? parsed.heading, chunks: chunkMarkdown(parsed) }
}

import { chunkMarkdown, parseMarkdown } from '../chunker.js'
import { chunkId, type ChunkRecord } from '../../kernel/chunk-payload.js'
import type { DocumentInput } from './input.js'
import { pageBreaks, pagesOf } from './page-breaks.js'

/** Turns one document into its chunk records (no I/O). */
export function chunkDocument(doc: DocumentInput): ChunkRecord[] {
  const parsed = parseMarkdown(doc.text)
  const title = doc.title ?? parsed.frontMatter.title ?? parsed.heading
  const breaks = pageBreaks(parsed.tree.text, doc.metadata)
  return chunkMarkdown(parsed).map((c) => ({
    id: chunkId(doc.id, c.index),
    doc_id: doc.id,
    chunk_index: c.index,
    text: c.text,
    source: doc.source ?? doc.id,
    ...(title ? { title } : {}),
    ...(c.headingPath.length > 0 ? { heading_path: c.headingPath } : {}),
    ...(c.anchor ? { anchor: c.anchor } : {}),
    ...(c.split ? { split: c.split } : {}),
    ...(breaks ? pagesOf(parsed.tree.text, breaks, c.start, c.end) : {}),
    ...(doc.metadata ? { metadata: doc.metadata } : {})
  }))
}

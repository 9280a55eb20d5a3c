import type { DocumentMetadata } from '../../kernel/document-fields.js'

const PAGE_BREAK = '\f'

/**
 * Where each page of a paged text starts (a PDF as `formats/pdf.ts` reads it: a form feed between pages), as offsets
 * of its form feeds; undefined for a text that is not paged (no form feed, and not a PDF).
 */
export function pageBreaks(text: string, metadata: DocumentMetadata | undefined): number[] | undefined {
  const breaks: number[] = []
  for (let at = text.indexOf(PAGE_BREAK); at >= 0; at = text.indexOf(PAGE_BREAK, at + 1)) breaks.push(at)
  return breaks.length > 0 || metadata?.format === 'pdf' ? breaks : undefined
}

/** The page (from 1) of an offset: one more than the page breaks before it. */
function pageAt(breaks: readonly number[], offset: number): number {
  let page = 1
  for (const at of breaks) if (at < offset) page++
  return page
}

/**
 * A chunk's pages: the one its first non-blank character is on, and the one its last is on when later.
 */
export function pagesOf(text: string, breaks: readonly number[], start: number, end: number): { page: number; page_end?: number } {
  let first = start
  while (first < end && /\s/u.test(text[first]!)) first++
  let last = end - 1
  while (last > first && /\s/u.test(text[last]!)) last--
  const page = pageAt(breaks, first)
  const pageEnd = pageAt(breaks, last)
  return { page, ...(pageEnd > page ? { page_end: pageEnd } : {}) }
}

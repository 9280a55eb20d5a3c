import { extractText, getDocumentProxy } from 'unpdf'
import { renderPdfPage } from '../../ocr/index.js'
import { ocrMetadata, recognisePages, type OcrReader } from './ocr-pages.js'
import { refused, skipped, type FileReading } from './reading.js'
import { mayHoldPictures, picturesOfPdf, placePageImages, type PageImages } from '../images/pdf-pictures.js'
import type { ImageInput, ImageProblem } from '../images/image-input.js'
import { escapeHeadingMark, HEADING_MARK, unescapeHeadingMark } from '../plain-text.js'

/** A page whose text layer holds fewer characters than this (whitespace aside: a page number, a stamp, a caption) is recognised unless it holds a figure. */
const NEAR_EMPTY_CHARS = 10

/** Longest first line taken as a PDF's title when its document information has none. */
const MAX_TITLE_CHARS = 120

/**
 * A PDF's text layer, page by page (unpdf, which bundles pdf.js): pages joined by a form feed (U+000C) on a line of
 * its own, so page N starts after the (N-1)th form feed; `metadata.pages` holds the count. The title is the
 * document information's Title, else the first line of text when it is short. When the PDF has an outline (bookmarks:
 * LibreOffice exports its headings as such), the line of each entry's page that reads as the entry's title becomes a
 * heading mark of the entry's depth (src/corpus/plain-text.ts: the text is plain, every other line starting `#` is
 * escaped), so that chunks start at sections and carry their heading path. Each page's images are placed on it
 * (src/corpus/images/pdf-pictures.ts): images covering most of the page are its scan, smaller ones its figures. A page
 * whose text layer is empty or nearly so (under {@link NEAR_EMPTY_CHARS}) is rendered by poppler and recognised when
 * `ocr` is given, unless it holds a figure (a picture with a short caption keeps its caption as its text, and the
 * figure is a picture of the document); a PDF with no text at all has every such page recognised. `ocr` is then
 * reported, and recorded in the metadata (ocr-pages.ts); `ocr` as a string says why OCR cannot run here, and a PDF
 * without text is then skipped saying so. The figures come with it (a recognised page's are its text already);
 * `pictures: false` reads without them, placing the images of near-empty pages only (bench/pdf-pictures-cost.ts).
 */
export async function readPdf(bytes: Uint8Array, ocr?: OcrReader | string, options: { pictures?: boolean } = {}): Promise<FileReading> {
  let pages: string[]
  let outline: OutlineEntry[]
  let infoTitle = ''
  const sizes = new Map<number, { width: number; height: number }>()
  let pictures: { images: ImageInput[]; problems: ImageProblem[] } = { images: [], problems: [] }
  try {
    const pdf = await getDocumentProxy(new Uint8Array(bytes))
    try {
      pages = (await extractText(pdf, { mergePages: false })).text
      outline = await outlineOf(pdf)
      const { info } = await pdf.getMetadata() as { info?: { Title?: unknown } }
      if (typeof info?.Title === 'string') infoTitle = info.Title.trim()
      const nearEmpty = pages.flatMap((p, i) => (squeezed(p).length < NEAR_EMPTY_CHARS ? [i + 1] : []))
      let layouts = new Map<number, PageImages>()
      // the pictures are read while the document is open; their headings from the text layer (an OCR page has none yet)
      if (mayHoldPictures(bytes)) {
        if (options.pictures !== false) {
          const found = await picturesOfPdf(pdf, markHeadings(pages.map((p) => p.trim()), outline))
          pictures = found
          layouts = found.layouts
        } else layouts = await placedOnly(pdf, nearEmpty)
      }
      const withoutText = pages.every((p) => squeezed(p) === '')
      for (const n of nearEmpty) {
        if (!withoutText && (layouts.get(n)?.figures.length ?? 0) > 0) continue
        const [x0, y0, x1, y1] = (await pdf.getPage(n)).view as [number, number, number, number]
        sizes.set(n, { width: Math.abs(x1 - x0), height: Math.abs(y1 - y0) })
      }
    } finally {
      await pdf.loadingTask.destroy()
    }
  } catch (error) {
    return refused(`not a readable PDF: ${(error as Error).message}`)
  }
  const texts = markHeadings(pages.map((p) => p.trim()), outline)
  let recognised: Awaited<ReturnType<typeof recognisePages>> | undefined
  if (typeof ocr === 'object' && sizes.size > 0) {
    recognised = await recognisePages([...sizes.keys()], async (page) => ({
      bytes: await renderPdfPage(bytes, page, sizes.get(page)!, { dpi: ocr.dpi, timeoutMs: ocr.pageTimeoutMs, maxPixels: ocr.maxImagePixels }),
      dpi: ocr.dpi
    }), ocr)
    for (const [page, { text }] of recognised.texts) texts[page - 1] = text.trim().split('\n').map(escapeHeadingMark).join('\n')
  }
  if (texts.every((t) => t === '')) {
    const why = recognised ? 'OCR read no text in them' : typeof ocr === 'string' ? `a scanned PDF needs OCR, which cannot run here: ${ocr}` : 'a scanned PDF needs OCR'
    const failed = recognised?.report.failed.map((f) => `page ${f.page}: ${f.reason}`).join('; ')
    return skipped(`no text in its ${pages.length} pages (${why})${failed ? `; ${failed}` : ''}`)
  }
  const first = texts.find((t) => t !== '')!.split('\n')[0]!
  const firstLine = (HEADING_MARK.exec(first)?.[2] ?? unescapeHeadingMark(first)).trim()
  const title = infoTitle || (firstLine.length <= MAX_TITLE_CHARS ? firstLine : '')
  const metadata = { format: 'pdf', pages: pages.length, ...(recognised ? ocrMetadata(recognised.report) : {}) }
  const { problems } = pictures
  const read = new Set(recognised?.report.pages)
  const images = pictures.images.filter((image) => !read.has(image.page!))
  return {
    outcome: 'read', text: texts.join('\n\f\n'), ...(title ? { title } : {}), metadata, ...(recognised ? { ocr: recognised.report } : {}),
    ...(images.length > 0 ? { images } : {}), ...(problems.length > 0 ? { imageProblems: problems } : {})
  }
}

/** The images of the given pages placed, without decoding any (a page whose operator list cannot be read has none). */
async function placedOnly(pdf: PdfProxy, pages: readonly number[]): Promise<Map<number, PageImages>> {
  const layouts = new Map<number, PageImages>()
  for (const n of pages) {
    try {
      layouts.set(n, await placePageImages(pdf, n))
    } catch {
      // read as a page without pictures: recognised, as before pictures were placed
    }
  }
  return layouts
}

/** An outline entry: its title, its depth (0 for a top-level entry) and the page (from 0) it points to, when known. */
export interface OutlineEntry {
  title: string
  depth: number
  page?: number
}

type PdfProxy = Awaited<ReturnType<typeof getDocumentProxy>>
type OutlineNode = { title: string; dest: string | unknown[] | null; items: OutlineNode[] }

/** The outline of a PDF, depth first, each entry with the page its destination names (none when it cannot be read). */
async function outlineOf(pdf: PdfProxy): Promise<OutlineEntry[]> {
  const out: OutlineEntry[] = []
  const visit = async (nodes: readonly OutlineNode[], depth: number): Promise<void> => {
    for (const node of nodes) {
      const page = await pageOf(pdf, node.dest)
      out.push({ title: node.title, depth, ...(page !== undefined ? { page } : {}) })
      await visit(node.items ?? [], depth + 1)
    }
  }
  await visit(((await pdf.getOutline()) ?? []) as OutlineNode[], 0)
  return out
}

async function pageOf(pdf: PdfProxy, dest: string | unknown[] | null): Promise<number | undefined> {
  try {
    const explicit = typeof dest === 'string' ? await pdf.getDestination(dest) : dest
    const target = explicit?.[0]
    if (typeof target === 'number') return target
    if (target && typeof target === 'object') return await pdf.getPageIndex(target as { num: number; gen: number })
  } catch {
    // a destination that does not resolve: the entry is looked for from the page of the entry before it
  }
  return undefined
}

const squeezed = (s: string) => s.replace(/\s+/g, '')

/**
 * The pages with each outline entry's title line made a heading mark (`#` for a top-level entry, `##` below it, at most
 * six) and every other line that could read as one escaped (src/corpus/plain-text.ts): the entries are taken in order, each looked for on its page (or from the last match on when its page is
 * unknown), after the line the entry before it matched; a line matches when it reads as the title, whitespace aside.
 * An entry whose title no line reads as is left out.
 */
export function markHeadings(pages: readonly string[], outline: readonly OutlineEntry[]): string[] {
  const lines = pages.map((p) => p.split('\n'))
  const marked = new Set<string>()
  let at = { page: 0, line: -1 }
  for (const entry of outline) {
    const title = squeezed(entry.title)
    if (title === '') continue
    const from = entry.page === undefined || entry.page === at.page ? at : entry.page > at.page ? { page: entry.page, line: -1 } : undefined
    if (!from) continue
    const last = entry.page ?? lines.length - 1
    search: for (let p = from.page; p <= last && p < lines.length; p++) {
      const pageLines = lines[p]!
      for (let l = p === from.page ? from.line + 1 : 0; l < pageLines.length; l++) {
        if (squeezed(pageLines[l]!) !== title) continue
        pageLines[l] = `${'#'.repeat(Math.min(entry.depth + 1, 6))} ${pageLines[l]!.trim()}`
        marked.add(`${p}:${l}`)
        at = { page: p, line: l }
        break search
      }
    }
  }
  return lines.map((pageLines, p) => pageLines.map((line, l) => (marked.has(`${p}:${l}`) ? line : escapeHeadingMark(line))).join('\n'))
}

import { extractText, getDocumentProxy } from 'unpdf'
import { refused, skipped, type FileReading } from './reading.js'

/** Longest first line taken as a PDF's title when its document information has none. */
const MAX_TITLE_CHARS = 120

/**
 * A PDF's text layer, page by page (unpdf, which bundles pdf.js): pages joined by a form feed (U+000C) on a line of
 * its own, so page N starts after the (N-1)th form feed; `metadata.pages` holds the count. The title is the
 * document information's Title, else the first line of text when it is short. A PDF without text (a scan) is skipped:
 * recall does no OCR.
 */
export async function readPdf(bytes: Uint8Array): Promise<FileReading> {
  let pages: string[]
  let infoTitle = ''
  try {
    const pdf = await getDocumentProxy(new Uint8Array(bytes))
    try {
      pages = (await extractText(pdf, { mergePages: false })).text
      const { info } = await pdf.getMetadata() as { info?: { Title?: unknown } }
      if (typeof info?.Title === 'string') infoTitle = info.Title.trim()
    } finally {
      await pdf.loadingTask.destroy()
    }
  } catch (error) {
    return refused(`not a readable PDF: ${(error as Error).message}`)
  }
  const texts = pages.map((p) => p.trim())
  if (texts.every((t) => t === '')) return skipped(`no text in its ${pages.length} pages (a scanned PDF needs OCR, which recall does not do)`)
  const firstLine = texts.find((t) => t !== '')!.split('\n')[0]!.trim()
  const title = infoTitle || (firstLine.length <= MAX_TITLE_CHARS ? firstLine : '')
  return { outcome: 'read', text: texts.join('\n\f\n'), ...(title ? { title } : {}), metadata: { format: 'pdf', pages: pages.length } }
}

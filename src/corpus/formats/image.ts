import sharp from 'sharp'
import { OcrError, readImageHeader } from '../../ocr/index.js'
import { ocrMetadata, recognisePages, type OcrReader } from './ocr-pages.js'
import { refused, skipped, type FileReading } from './reading.js'

/** Bytes of an image file sent as its picture as they are (8 MiB of base64, what a document's picture may hold); a larger file is sent as a WebP of at most 1,600 px a side. */
const MAX_PICTURE_BYTES = 6 * 1024 * 1024

/** Characters of an image file's recognised text its image record is embedded from (the model reads 512 tokens). */
const RECORD_OCR_CHARS = 2000

/**
 * An image file as text, by OCR: every page of a multi-page TIFF in order, pages joined by a form feed on a line of
 * its own as a PDF's are (`metadata.pages`). The header is read first: an unsupported format, or an image over
 * `OCR_MAX_IMAGE_PIXELS` (an image bomb), is refused before any decoding; a page that cannot be recognised is
 * reported with its reason and the other pages are kept. Without OCR (`ocr` says why), the file is refused. The file
 * is also the document's one picture (`images`): an image record holding its bytes (or a thumbnail) and its recognised
 * text, which `image_items` answers (of a multi-page TIFF, the first page is stored).
 */
export async function readImage(bytes: Uint8Array, ocr: OcrReader | string | undefined): Promise<FileReading> {
  if (typeof ocr !== 'object') return refused(`an image needs OCR, which cannot run here${typeof ocr === 'string' ? `: ${ocr}` : ''}`)
  let header
  try {
    header = await readImageHeader(bytes, ocr.maxImagePixels)
  } catch (error) {
    if (error instanceof OcrError) return refused(error.reason)
    throw error
  }
  const pages = Array.from({ length: header.pages }, (_, i) => i + 1)
  const { texts, report } = await recognisePages(pages, async (page) => ({ bytes, page: page - 1 }), ocr)
  const failed = report.failed.map((f) => `page ${f.page}: ${f.reason}`).join('; ')
  if (report.pages.length === 0) return refused(header.pages === 1 ? report.failed[0]!.reason : `no page could be recognised: ${failed}`)
  const text = pages.map((p) => texts.get(p)?.text.trim() ?? '').join('\n\f\n')
  if (text.replace(/\s+/g, '') === '') return skipped(`OCR read no text in its ${header.pages === 1 ? 'image' : `${header.pages} pages`}`)
  return {
    outcome: 'read', text, ocr: report,
    images: [{ data: (await pictureBytes(bytes, ocr.maxImagePixels)).toString('base64'), ocr_text: text.replace(/\n\f\n/g, '\n\n').slice(0, RECORD_OCR_CHARS) }],
    metadata: { format: header.format, ...(header.pages > 1 ? { pages: header.pages } : {}), ...ocrMetadata(report) }
  }
}

async function pictureBytes(bytes: Uint8Array, maxPixels: number): Promise<Buffer> {
  if (bytes.length <= MAX_PICTURE_BYTES) return Buffer.from(bytes)
  return sharp(bytes, { limitInputPixels: maxPixels }).resize(1600, 1600, { fit: 'inside', withoutEnlargement: true }).webp({ quality: 80 }).toBuffer()
}

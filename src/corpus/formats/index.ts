import { readFile } from 'node:fs/promises'
import { basename, dirname, extname, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { refused, skipped, type FileReading } from './reading.js'
import type { OcrReader } from './ocr-pages.js'
import { readText } from './text.js'
import { textProblem } from '../text-junk.js'
import { normaliseText } from '../text-normalise.js'
import { picturesOfMarkdown } from '../images/markdown-pictures.js'

export type { FileReading,  } from './reading.js'

/** The image files read by OCR (a folder walk reads them too). */
const IMAGE_EXTENSIONS: ReadonlySet<string> = new Set(['.png', '.jpg', '.jpeg', '.webp', '.tif', '.tiff'])

/** The extensions a folder walk reads, lower case; a file named alone is read whatever its extension. */
export const DOCUMENT_EXTENSIONS: ReadonlySet<string> = new Set(['.md', '.markdown', '.txt', '.html', '.htm', '.pdf', '.docx', ...IMAGE_EXTENSIONS])

/** The HTML, PDF, DOCX and image readers' libraries are loaded when a file of theirs is first read (a CLI start-up costs less). */
async function readByFormat(bytes: Uint8Array, extension: string, name: string, ocr: OcrReader | string | undefined): Promise<FileReading> {
  if (IMAGE_EXTENSIONS.has(extension)) return (await import('./image.js')).readImage(bytes, ocr)
  switch (extension) {
    case '.md': case '.markdown': return readText(bytes, 'markdown')
    case '.html': case '.htm': return (await import('./html.js')).readHtml(bytes)
    case '.pdf': return (await import('./pdf.js')).readPdf(bytes, ocr)
    case '.docx': return (await import('./docx.js')).readDocx(bytes, name)
    default: return readText(bytes, 'text')
  }
}

/**
 * A file as text a document can hold, read by its extension (Markdown and any other as text, HTML, PDF, DOCX): an
 * empty file, or one with no text, is skipped; the text is normalised ({@link normaliseText}: meaningless characters
 * removed, counted in `metadata.normalised_chars`); a binary file, or text that is still junk ({@link textProblem}),
 * is refused; each with its reason. `judge: false` answers the reading as the format gives it, neither normalised
 * nor judged (what bench/junk-line.ts measures). `ocr` recognises image files and a PDF's pages without text
 * (docs/formats.md, "OCR"); as a string it says why OCR cannot run here. `confine` is a folder the pictures a file names
 * must be in (an upload's: a file sent over HTTP must not read the server's other files).
 */
export async function readFileByFormat(file: string, options: { judge?: boolean; ocr?: OcrReader | string; confine?: string } = {}): Promise<FileReading> {
  const bytes = await readFile(file)
  if (bytes.length === 0) return skipped('empty file (0 bytes)')
  const extension = extname(file).toLowerCase()
  const ocr = typeof options.ocr === 'object' ? { ...options.ocr, onPage: wrapProgress(options.ocr, file) } : options.ocr
  let reading = await withPictures(await readByFormat(bytes, extension, basename(file, extname(file)), ocr), file, extension, options.confine)
  // the pictures of a PDF, DOCX, HTML or Markdown file: their text by OCR unless OCR_PICTURES=false (an image file's is
  // its own text already)
  if (reading.outcome === 'read' && reading.images && typeof ocr === 'object' && !IMAGE_EXTENSIONS.has(extension)) {
    reading = { ...reading, images: ocr.pictures === false ? reading.images : await (await import('../images/picture-text.js')).withPictureText(reading.images, ocr) }
  }
  if (reading.outcome !== 'read' || options.judge === false) return reading
  const { text, normalised } = normaliseText(reading.text)
  const problem = textProblem(text)
  if (problem === 'is blank') return skipped(`no text: ${bytes.length} bytes of whitespace or markup only`)
  if (problem) return refused(reading.metadata.encoding ? `${problem} (read as ${reading.metadata.encoding})` : problem)
  return normalised > 0 ? { ...reading, text, metadata: { ...reading.metadata, normalised_chars: normalised } } : reading
}

/**
 * A Markdown, HTML or DOCX reading with the pictures its Markdown names (src/corpus/images/markdown-pictures.ts): a path
 * is read relative to the file's folder, a `data:` URI inline (and emptied in the text). A PDF finds its own.
 */
async function withPictures(reading: FileReading, file: string, extension: string, confine?: string): Promise<FileReading> {
  if (reading.outcome !== 'read' || extension === '.pdf' || extension === '.txt') return reading
  if (!/!\[|<img\b/i.test(reading.text)) return reading
  const folder = dirname(file)
  const load = async (src: string) => {
    const path = src.startsWith('file://') ? fileURLToPath(src) : resolve(folder, decodeURI(src.split(/[?#]/)[0]!))
    if (confine && !path.startsWith(resolve(confine) + sep)) throw new Error('not among the files sent with it')
    return readFile(path)
  }
  const { images, problems, text } = await picturesOfMarkdown(reading.text, load)
  return { ...reading, text, ...(images.length > 0 ? { images } : {}), ...(problems.length > 0 ? { imageProblems: problems } : {}) }
}

/** The reader's page progress, naming the file. */
const wrapProgress = (ocr: OcrReader, file: string): OcrReader['onPage'] =>
  ocr.onPage ? (progress) => ocr.onPage!({ ...progress, file }) : undefined

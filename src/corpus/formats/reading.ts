import type { ImageInput, ImageProblem } from '../images/image-input.js'
import type { OcrReport } from './ocr-pages.js'

/** The metadata a file's reading records on its document (flat, as document metadata must be). */
interface FormatMetadata {
  /** `markdown`, `text`, `html`, `pdf` or `docx`. */
  format: string
  /** The encoding the bytes were decoded from (text formats), as detected: `UTF-8`, `UTF-16LE`, `GB18030`, `Big5`, … */
  encoding?: string
  /** Pages of a PDF; in the text, page N starts after the (N-1)th form feed (U+000C). */
  pages?: number
  /** Characters removed (or made a space) as carrying no meaning (`src/corpus/text-normalise.ts`); absent when none. */
  normalised_chars?: number
  /** Pages recognised by OCR (docs/formats.md, "OCR"): `ocr`, `ocr_pages` (ranges), `ocr_page_count`, `ocr_confidence`, `ocr_confidence_min`, … */
  [ocrField: `ocr${string}`]: boolean | number | string[]
}

/**
 * What reading one file gave: its text (Markdown or plain text) with a title when the format has one, and the pictures
 * it holds or names (with those that could not be read), or why it was
 * skipped (nothing to index) or refused (it cannot be read as text).
 */
export type FileReading =
  | { outcome: 'read'; text: string; title?: string; metadata: FormatMetadata; images?: ImageInput[]; imageProblems?: ImageProblem[]; ocr?: OcrReport }
  | { outcome: 'skipped'; reason: string }
  | { outcome: 'refused'; reason: string }

export const refused = (reason: string): FileReading => ({ outcome: 'refused', reason })
export const skipped = (reason: string): FileReading => ({ outcome: 'skipped', reason })

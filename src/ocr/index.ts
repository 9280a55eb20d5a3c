import { TesseractEngine, type TesseractOptions } from './tesseract.js'
import type { OcrEngine } from './port.js'

export type { OcrEngine } from './port.js'
export { OcrError } from './port.js'
export { readImageHeader } from './image-header.js'
export { renderPdfPage } from './pdf-page.js'

/** The OCR engine: Tesseract (docs/formats.md, "OCR", says what was measured to choose it). */
export function createOcrEngine(options: TesseractOptions = {}): OcrEngine {
  return new TesseractEngine(options)
}

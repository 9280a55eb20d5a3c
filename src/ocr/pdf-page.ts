import { OcrError } from './port.js'
import { runProcess } from './run-process.js'

export interface RenderOptions {
  dpi: number
  timeoutMs: number
  maxPixels: number
  signal?: AbortSignal
}

/**
 * Page `page` (from 1) of a PDF as a grayscale PNG, rendered by poppler's `pdftoppm` in a child process. `size` is
 * the page's size in points (1/72 inch), as the PDF states it: a page that would render over `maxPixels` at this
 * resolution is refused before rendering.
 */
export async function renderPdfPage(pdf: Uint8Array, page: number, size: { width: number; height: number }, options: RenderOptions): Promise<Buffer> {
  const width = Math.ceil(size.width / 72 * options.dpi)
  const height = Math.ceil(size.height / 72 * options.dpi)
  if (width * height > options.maxPixels) {
    throw new OcrError('too-large', `the page would render as ${width}x${height} pixels at ${options.dpi} dpi, over the limit of ${(options.maxPixels / 1e6).toFixed(1)} MP (OCR_MAX_IMAGE_PIXELS)`)
  }
  const args = ['-r', String(options.dpi), '-gray', '-png', '-f', String(page), '-l', String(page), '-singlefile', '-']
  return runProcess('pdftoppm', args, { input: pdf, timeoutMs: options.timeoutMs, limitName: 'OCR_PAGE_TIMEOUT_MS', ...(options.signal ? { signal: options.signal } : {}) })
}

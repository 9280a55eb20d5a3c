import sharp, { type Metadata } from 'sharp'
import { IMAGE_FORMATS } from './image-formats.js'
import { OcrError } from './port.js'


export interface ImageHeader {
  format: string
  width: number
  height: number
  /** Pages (frames) of a multi-page TIFF or animated image; 1 otherwise. */
  pages: number
  /** Resolution the file states, in dots per inch, when it states one. */
  dpi?: number
}

/**
 * The format, size and page count of an image from its header alone (libvips reads no pixels for this), so that an
 * image bomb (a small file naming huge dimensions) is refused before anything is decoded.
 */
export async function readImageHeader(bytes: Uint8Array, maxPixels: number): Promise<ImageHeader> {
  let meta: Metadata
  try {
    meta = await sharp(bytes, { limitInputPixels: false }).metadata()
  } catch (error) {
    throw new OcrError('unsupported', `not an image recall can read (${messageOf(error)})`)
  }
  const format = meta.format as string
  if (!IMAGE_FORMATS.has(format)) throw new OcrError('unsupported', `unsupported image format ${format} (recognised: ${[...IMAGE_FORMATS].join(', ')})`)
  const { width, height } = meta
  if (!width || !height) throw new OcrError('unreadable', `the ${format} header names no width or height`)
  if (width * height > maxPixels) {
    throw new OcrError('too-large', `${width}x${height} pixels (${(width * height / 1e6).toFixed(1)} MP) is over the limit of ${(maxPixels / 1e6).toFixed(1)} MP (OCR_MAX_IMAGE_PIXELS); refused before decoding`)
  }
  const dpi = meta.density && meta.density > 1 ? Math.round(meta.density) : undefined
  return { format, width, height, pages: meta.pages ?? 1, ...(dpi ? { dpi } : {}) }
}

/**
 * One page of an image as an 8-bit grayscale PNG, decoded by libvips off the event loop; a truncated or corrupt
 * image is refused rather than recognised half-blank.
 */
export async function pageAsPng(bytes: Uint8Array, page: number, maxPixels: number): Promise<Buffer> {
  try {
    return await sharp(bytes, { page, limitInputPixels: maxPixels, failOn: 'truncated' }).grayscale().png({ compressionLevel: 1 }).toBuffer()
  } catch (error) {
    throw new OcrError('unreadable', `the image cannot be decoded (${messageOf(error)})`)
  }
}

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error)).split('\n')[0]!.trim()

/**
 * The text a document's pictures hold (a screenshot's labels, a diagram's boxes), read by OCR into each picture's
 * `ocr_text`, which its image record is embedded from. A picture under the floor (either side under
 * {@link MIN_SIDE_PX}, or under {@link MIN_BYTES}: icons, rules, spacers) is not recognised; nor is one OCR fails on
 * (it is kept without text). Text below the confidence floor, or too short to mean anything, is dropped.
 */
import sharp from 'sharp'
import type { OcrReader } from '../formats/ocr-pages.js'
import type { ImageInput } from './image-input.js'

/** Narrower or lower than this (pixels), a picture holds no readable line of text at screen sizes. */
const MIN_SIDE_PX = 48
const MIN_BYTES = 1024
/** Fewer characters than this (whitespace aside) is taken as noise, not text. */
const MIN_CHARS = 3
/** The most characters kept (what `ocr_text` may hold). */
const MAX_CHARS = 4000

export async function withPictureText(images: readonly ImageInput[], ocr: OcrReader, wanted: (image: ImageInput) => boolean = () => true): Promise<ImageInput[]> {
  return Promise.all(images.map(async (image) => {
    if (image.ocr_text !== undefined || !wanted(image)) return image
    const bytes = Buffer.from(image.data, 'base64')
    if (bytes.length < MIN_BYTES) return image
    try {
      const { width = 0, height = 0 } = await sharp(bytes, { limitInputPixels: ocr.maxImagePixels }).metadata()
      if (Math.min(width, height) < MIN_SIDE_PX) return image
      const result = await ocr.engine.recognise(bytes, ocr.signal ? { signal: ocr.signal } : {})
      const text = result.text.trim()
      if (result.confidence < ocr.minConfidence || text.replace(/\s+/g, '').length < MIN_CHARS) return image
      return { ...image, ocr_text: text.slice(0, MAX_CHARS) }
    } catch {
      // an unreadable picture, or one over OCR_PAGE_TIMEOUT_MS, keeps no text; it is judged (and refused, with its reason) where it is stored
      return image
    }
  }))
}

/**
 * A picture as the server keeps it: decoded in full by sharp (libvips) to prove it is whole, judged against the size
 * floor (decorative pictures are counted, not kept), hashed, and stored as sent or, past the size limit, as a WebP
 * thumbnail that fits it.
 */
import { createHash } from 'node:crypto'
import sharp from 'sharp'
import { sniffImageType } from './sniff.js'

export interface PictureLimits {
  /** Narrower or lower than this (pixels): decorative, not kept. */
  minSidePx: number
  /** Fewer bytes than this: decorative, not kept. */
  minBytes: number
  /** Larger than this (bytes): kept as a WebP thumbnail of at most this size. */
  maxStoredBytes: number
}

/** The configuration's defaults (32 px: favicons and toolbar icons are 16-24 px; a screenshot or a diagram is hundreds) (`IMAGE_MIN_SIDE_PX`, `IMAGE_MIN_BYTES`, `IMAGE_MAX_STORED_BYTES`). */
export const DEFAULT_PICTURE_LIMITS: PictureLimits = { minSidePx: 32, minBytes: 200, maxStoredBytes: 262_144 }

/** More pixels than this is refused undecoded (an image bomb): 100 megapixels, a 10,000 px square. */
const MAX_INPUT_PIXELS = 100_000_000
/** The longest side of a thumbnail, tried in turn until one fits the size limit. */
const THUMBNAIL_SIDES = [1600, 1024, 640, 320]

export type KeptPicture = {
  outcome: 'kept'
  /** SHA-256 (hex) of the bytes sent: the same picture is one record. */
  hash: string
  bytes: Buffer
  mime: string
  width: number
  height: number
  thumbnail: boolean
}

export type JudgedPicture = KeptPicture | { outcome: 'small' | 'refused'; reason: string }

export async function judgePicture(data: Uint8Array, limits: PictureLimits): Promise<JudgedPicture> {
  const mime = sniffImageType(data)
  if (!mime) return { outcome: 'refused', reason: `not a picture sharp reads (PNG, JPEG, GIF, WebP, TIFF, AVIF): its first bytes are ${Buffer.from(data.subarray(0, 8)).toString('hex')}` }
  let width: number
  let height: number
  try {
    const image = sharp(data, { failOn: 'truncated', limitInputPixels: MAX_INPUT_PIXELS })
    const meta = await image.metadata()
    width = meta.width ?? 0
    height = meta.height ?? 0
    if (data.length >= limits.minBytes && Math.min(width, height) >= limits.minSidePx) {
      // the whole picture decoded: a truncated or corrupt one throws here, not when it is served
      await image.resize(8, 8, { fit: 'inside' }).raw().toBuffer()
    }
  } catch (error) {
    return { outcome: 'refused', reason: `a corrupt or unreadable ${mime} picture: ${(error as Error).message}` }
  }
  if (data.length < limits.minBytes || Math.min(width, height) < limits.minSidePx) {
    return { outcome: 'small', reason: `${width}x${height} px, ${data.length} bytes: under the floor (IMAGE_MIN_SIDE_PX ${limits.minSidePx}, IMAGE_MIN_BYTES ${limits.minBytes})` }
  }
  const hash = createHash('sha256').update(data).digest('hex')
  if (data.length <= limits.maxStoredBytes) return { outcome: 'kept', hash, bytes: Buffer.from(data), mime, width, height, thumbnail: false }
  for (const side of THUMBNAIL_SIDES) {
    const thumb = await sharp(data, { limitInputPixels: MAX_INPUT_PIXELS }).resize(side, side, { fit: 'inside', withoutEnlargement: true }).webp({ quality: 80 }).toBuffer()
    if (thumb.length <= limits.maxStoredBytes || side === THUMBNAIL_SIDES.at(-1)) {
      return { outcome: 'kept', hash, bytes: thumb, mime: 'image/webp', width, height, thumbnail: true }
    }
  }
  throw new Error('unreachable: the last thumbnail side is always taken')
}

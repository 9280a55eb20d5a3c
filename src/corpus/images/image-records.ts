/**
 * A document's picture as a vector record of the namespace's image collection: its id (the document's id and the
 * picture's hash), the text that is embedded for it (caption, alt text, heading path, OCR text, the sentences around
 * it) with the text model, so that one question embedding ranks passages and pictures alike, and its bytes in the payload.
 */
import type { VectorPayload, VectorStore } from '../../providers/vector-store/port.js'
import { sniffImageType } from './sniff.js'
import type { ImageInput } from './image-input.js'
import type { KeptPicture } from './pictures.js'

/** The collection of pictures, after the service's collection prefix (one per model, as the chunks'). */
export const IMAGES_COLLECTION = 'images'

/** Hex characters of the SHA-256 kept in a picture's id: 64 bits, unique among any document's pictures. */
const ID_HASH_CHARS = 16

/** `<document id>#img-<first 16 hex of the SHA-256>`: a document id holds no `#`, so the document is what precedes it. */
export function imageRecordId(docId: string, hash: string): string {
  return `${docId}#img-${hash.slice(0, ID_HASH_CHARS)}`
}

/** What a picture's record carries besides its vector. */
export interface ImagePayload extends VectorPayload {
  hash: string
  mime: string
  width: number
  height: number
  thumbnail: boolean
  /** The stored bytes (the picture, or its thumbnail), base64. */
  bytes: string
  caption?: string
  alt?: string
  page?: number
  heading_path?: string[]
  context?: string
  /** Text recognised in the picture (OCR), when there is any. */
  ocr_text?: string
}

/** The text embedded for a picture: what names it first (caption, alt), then where it is and what is around it. */
function imageText(input: ImageInput, ocrText?: string): string {
  return [input.caption, input.alt, input.heading_path?.join(' > '), ocrText, input.context]
    .map((part) => part?.trim()).filter((part): part is string => !!part).join('\n')
}

export function imagePayload(docId: string, input: ImageInput, picture: KeptPicture, ocrText?: string): ImagePayload {
  return {
    doc_id: docId, text: imageText(input, ocrText),
    hash: picture.hash, mime: picture.mime, width: picture.width, height: picture.height, thumbnail: picture.thumbnail,
    bytes: picture.bytes.toString('base64'),
    ...(input.caption ? { caption: input.caption } : {}),
    ...(input.alt ? { alt: input.alt } : {}),
    ...(input.page !== undefined ? { page: input.page } : {}),
    ...(input.heading_path?.length ? { heading_path: input.heading_path } : {}),
    ...(input.context ? { context: input.context } : {}),
    ...(ocrText ? { ocr_text: ocrText } : {})
  }
}

/** A picture as `GET /images/{id}` serves it. */
export interface StoredImage {
  bytes: Buffer
  /** Told by the bytes' magic number, not by what was stored beside them. */
  contentType: string
}

/** The stored picture `id` of the namespace, read among its document's records; undefined when there is none. */
export async function readImage(vectors: VectorStore, collection: string, namespace: string, id: string): Promise<StoredImage | undefined> {
  const docId = /^([^#]+)#img-[0-9a-f]+$/.exec(id)?.[1]
  if (!docId) return undefined
  for await (const record of vectors.scroll(collection, namespace, [docId])) {
    if (record.id !== id) continue
    const bytes = Buffer.from(String(record.payload['bytes']), 'base64')
    return { bytes, contentType: sniffImageType(bytes) ?? 'application/octet-stream' }
  }
  return undefined
}

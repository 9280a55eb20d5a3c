/**
 * A document's fingerprint: what a client sends instead of its body to ask whether the namespace holds it unchanged
 * (`POST /documents/unchanged`), and what every stored chunk of the document keeps of the input it was made from.
 * docs/write-path.md, "Unchanged documents".
 */
import { createHash } from 'node:crypto'
import type { DocumentMetadata } from '../kernel/document-fields.js'
import type { ImageInput } from './images/image-input.js'

/** Names the definition below: another definition gets another prefix, so that old fingerprints match nothing. */
const FINGERPRINT_SCHEME = 'd1'

/**
 * `d1:` and the SHA-256 (hex) of the UTF-8 of `JSON.stringify([id, text, source ?? id, title ?? null, metadata ?? null])`,
 * the metadata's keys in the order sent; a document with pictures adds a sixth element, its `images` with each `data`
 * replaced by the SHA-256 (hex) of its base64 text. A document's chunks are a function of these fields (and the chunker's
 * version, which the server compares apart), so two inputs with one fingerprint make the same chunks. A client that
 * computes it otherwise (another JSON writer) only ever gets `unchanged: false`, and then sends the body.
 */
export function documentFingerprint(doc: { id: string; text: string; source?: string; title?: string; metadata?: DocumentMetadata; images?: readonly ImageInput[] }): string {
  const fields: unknown[] = [doc.id, doc.text, doc.source ?? doc.id, doc.title ?? null, doc.metadata ?? null]
  // pictures count from `d1` on without a new scheme: a document without them keeps the fingerprint it had
  if (doc.images?.length) fields.push(doc.images.map((image) => ({ ...image, data: createHash('sha256').update(image.data, 'utf8').digest('hex') })))
  const canonical = JSON.stringify(fields)
  return `${FINGERPRINT_SCHEME}:${createHash('sha256').update(canonical, 'utf8').digest('hex')}`
}

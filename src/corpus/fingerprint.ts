/**
 * A document's fingerprint: what a client sends instead of its body to ask whether the namespace holds it unchanged
 * (`POST /documents/unchanged`), and what every stored chunk of the document keeps of the input it was made from.
 * docs/write-path.md, "Unchanged documents".
 */
import { createHash } from 'node:crypto'
import type { DocumentMetadata } from '../kernel/document-fields.js'

/** Names the definition below: another definition gets another prefix, so that old fingerprints match nothing. */
const FINGERPRINT_SCHEME = 'd1'

/**
 * `d1:` and the SHA-256 (hex) of the UTF-8 of `JSON.stringify([id, text, source ?? id, title ?? null, metadata ?? null])`,
 * the metadata's keys in the order sent. A document's chunks are a function of these fields (and the chunker's
 * version, which the server compares apart), so two inputs with one fingerprint make the same chunks. A client that
 * computes it otherwise (another JSON writer) only ever gets `unchanged: false`, and then sends the body.
 */
export function documentFingerprint(doc: { id: string; text: string; source?: string; title?: string; metadata?: DocumentMetadata }): string {
  const canonical = JSON.stringify([doc.id, doc.text, doc.source ?? doc.id, doc.title ?? null, doc.metadata ?? null])
  return `${FINGERPRINT_SCHEME}:${createHash('sha256').update(canonical, 'utf8').digest('hex')}`
}

import { normaliseText } from '../text-normalise.js'
import type { DocumentInput } from './input.js'

/**
 * The document as it is written: its text normalised ({@link normaliseText}), and the characters that removed or
 * replaced counted in `metadata.normalised_chars` (the document as given when there were none).
 */
export function normaliseDocument(doc: DocumentInput): { document: DocumentInput; normalised: number } {
  const { text, normalised } = normaliseText(doc.text)
  if (normalised === 0) return { document: doc, normalised }
  return { document: { ...doc, text, metadata: { ...doc.metadata, normalised_chars: normalised } }, normalised }
}

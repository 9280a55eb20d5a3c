/**
 * Entity names and aliases as graphrag matches them, and where their vectors live (docs/derivation.md, "Entities found
 * by meaning"): one record per distinct normalised text of a namespace, in the collection `COLLECTION_PREFIX` +
 * `ENTITY_NAME_COLLECTION`, so that the writer and graphrag agree on the text and the record id.
 */
import { createHash } from 'node:crypto'

const LATIN = /\p{Script=Latin}+/gu

/** NFKC, then lowercase for Latin letters only (other scripts keep their case: docs/api.md, "Graphrag in detail"). */
export function normalizeForMatch(text: string): string {
  return text.normalize('NFKC').replace(LATIN, (run) => run.toLowerCase())
}

/** The text a name or alias is matched, and embedded, as; `''` for one that holds nothing. */
export function entityNameKey(raw: string): string {
  return normalizeForMatch(raw).trim()
}

export const ENTITY_NAME_COLLECTION = 'entity_names'

/** The record id of a name's vector: its text's SHA-256 (hex, 32 characters), the same on every replica. */
export function entityNameRecordId(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex').slice(0, 32)
}

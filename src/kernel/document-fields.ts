import { Type } from 'typebox'

/** A document id, as ingested and as a filter names it. */
export const DocumentIdSchema = Type.String({
  minLength: 1, maxLength: 200, pattern: '^[^#\\s/][^#\\s]*$',
  description: 'Document id: no spaces, no `#` (chunk ids are `<id>#<index>`), not starting with `/`.'
})

/** A metadata key: a letter or `_`, then letters, digits or `_` (no dots: Qdrant reads a dot as a path). */
export const METADATA_KEY_PATTERN = '^[A-Za-z_][A-Za-z0-9_]{0,63}$'

/** A document metadata value: flat, a string, number, boolean or list of strings. */
type MetadataValue = string | number | boolean | string[]

/** A document's metadata, as ingested and as each of its chunks carries it. */
export type DocumentMetadata = Record<string, MetadataValue>

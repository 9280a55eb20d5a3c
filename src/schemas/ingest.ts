import { GenerationSchema, ReadGenerationSchema } from './generation.js'
import { Type, type Static } from 'typebox'
import { MAX_METADATA_BYTES } from '../corpus/documents.js'
import { DocumentIdSchema, METADATA_KEY_PATTERN } from '../kernel/document-fields.js'
import { NamespaceSchema } from './common.js'

export { DocumentIdSchema, METADATA_KEY_PATTERN }

export const MAX_DOCUMENTS_PER_REQUEST = 1000
export const MAX_DOCUMENT_CHARS = 1_000_000


/**
 * One type list rather than `anyOf`: with the app's type coercion, ajv would coerce a number to a string
 * trying an `anyOf`'s first branch; with a list of types it coerces only a value none of them fits.
 */
export const MetadataValueSchema = Type.Unsafe<string | number | boolean | string[]>({
  type: ['string', 'number', 'boolean', 'array'], items: { type: 'string' },
  description: 'A string, a number, a boolean or a list of strings.'
})

export const DocumentInputSchema = Type.Object({
  id: DocumentIdSchema,
  text: Type.String({ minLength: 1, maxLength: MAX_DOCUMENT_CHARS, description: 'Markdown or plain text.' }),
  source: Type.Optional(Type.String({ maxLength: 2000, description: 'Path or URL shown as the item source; default the id.' })),
  title: Type.Optional(Type.String({ maxLength: 500, description: 'Default: the front matter `title`, else the first `#` heading.' })),
  metadata: Type.Optional(Type.Record(Type.String({ pattern: METADATA_KEY_PATTERN }), MetadataValueSchema, {
    additionalProperties: false,
    description: `Flat metadata: keys (${METADATA_KEY_PATTERN}: a letter or \`_\`, then letters, digits or \`_\`, at most 64) to a ` +
      `string, a number, a boolean or a list of strings; at most ${MAX_METADATA_BYTES} bytes as JSON (UTF-8). Stored with every ` +
      'chunk, returned in each item\'s `metadata.doc_metadata`, and what `filter.metadata` of `POST /retrieve` tests.'
  }))
}, { additionalProperties: false })

export const IngestDocumentsBodySchema = Type.Object({
  documents: Type.Array(DocumentInputSchema, { minItems: 1, maxItems: MAX_DOCUMENTS_PER_REQUEST }),
  namespace: Type.Optional(NamespaceSchema)
}, { additionalProperties: false })
export type IngestDocumentsBody = Static<typeof IngestDocumentsBodySchema>

export const IngestSummarySchema = Type.Object({
  documents: Type.Integer({ description: 'Documents written by this request.' }),
  chunks: Type.Integer({ description: 'Chunks of the documents of this request (written, or held already).' }),
  replaced: Type.Integer({ description: 'Documents that existed before and were replaced.' }),
  unchanged: Type.Integer({ description: 'Documents the namespace already held exactly as sent (same chunks, title, source and metadata): not embedded or written again.' }),
  unchanged_ids: Type.Array(Type.String(), { description: 'Their ids, in the order sent.' }),
  took_ms: Type.Number(),
  generation: Type.Optional(GenerationSchema),
  derived: Type.Optional(Type.Object({
    entities: Type.Optional(Type.Integer({ description: 'With `DERIVED_GRAPH=true`: entities the documents of this request contribute to the derived graph, counted once per document.' })),
    relations: Type.Optional(Type.Integer({ description: 'With `DERIVED_GRAPH=true`: relations they contribute, counted once per document.' })),
    blocked: Type.Optional(Type.Integer({ description: 'With `DERIVED_GRAPH=true`: derived entities and relations left out because an imported one holds the id.' })),
    episodes: Type.Optional(Type.Integer({ description: 'With `DERIVED_EPISODES=true`: the derived Episodes the documents of this request have now.' })),
    facets: Type.Optional(Type.Integer({ description: 'Their Facets (one per section, or per chunk of a longer section).' })),
    points: Type.Optional(Type.Integer({ description: 'Their FacetPoints (key sentences).' })),
    episodes_blocked: Type.Optional(Type.Integer({ description: 'Derived Episode ids left alone because an imported Episode holds them.' })),
    episode_texts_embedded: Type.Optional(Type.Integer({ description: 'Texts of the Episodes written now that were embedded (labels, key sentences, summaries, new entity names).' })),
    episode_vectors_reused: Type.Optional(Type.Integer({ description: 'Texts of those Episodes whose vector is the vector of a chunk this write embedded (not embedded again).' }))
  }, { description: 'What the documents contribute to the namespace\'s derived knowledge graph and derived Episodes (docs/derivation.md).' }))
})

export const DocumentSummarySchema = Type.Object({
  id: Type.String(),
  title: Type.Optional(Type.String()),
  source: Type.String(),
  chunks: Type.Integer()
})

export const DocumentListSchema = Type.Object({
  namespace: Type.String({ description: 'The namespace listed.' }),
  documents: Type.Array(DocumentSummarySchema),
  total: Type.Integer(),
  chunks: Type.Integer(),
  generation: Type.Optional(ReadGenerationSchema)
})

export const DeletedSchema = Type.Object({
  deleted: Type.String({ description: 'The id that was removed.' }),
  generation: Type.Optional(GenerationSchema)
})

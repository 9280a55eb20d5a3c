import { Type, type Static } from 'typebox'

export const MAX_DOCUMENTS_PER_REQUEST = 1000
export const MAX_DOCUMENT_CHARS = 1_000_000

export const DocumentIdSchema = Type.String({
  minLength: 1, maxLength: 200, pattern: '^[^#\\s/][^#\\s]*$',
  description: 'Document id: no spaces, no `#` (chunk ids are `<id>#<index>`), not starting with `/`.'
})

export const DocumentInputSchema = Type.Object({
  id: DocumentIdSchema,
  text: Type.String({ minLength: 1, maxLength: MAX_DOCUMENT_CHARS, description: 'Markdown or plain text.' }),
  source: Type.Optional(Type.String({ maxLength: 2000, description: 'Path or URL shown as the item source; default the id.' })),
  title: Type.Optional(Type.String({ maxLength: 500, description: 'Default: the front matter `title`, else the first `#` heading.' })),
  metadata: Type.Optional(Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean()]), {
    description: 'Flat key -> string, number or boolean, returned with the document\'s items.'
  }))
}, { additionalProperties: false })

export const IngestDocumentsBodySchema = Type.Object({
  documents: Type.Array(DocumentInputSchema, { minItems: 1, maxItems: MAX_DOCUMENTS_PER_REQUEST })
}, { additionalProperties: false })
export type IngestDocumentsBody = Static<typeof IngestDocumentsBodySchema>

export const IngestSummarySchema = Type.Object({
  documents: Type.Integer({ description: 'Documents written by this request.' }),
  chunks: Type.Integer({ description: 'Chunks written by this request.' }),
  replaced: Type.Integer({ description: 'Documents that existed before and were replaced.' }),
  took_ms: Type.Number()
})

export const DocumentSummarySchema = Type.Object({
  id: Type.String(),
  title: Type.Optional(Type.String()),
  source: Type.String(),
  chunks: Type.Integer()
})

export const DocumentListSchema = Type.Object({
  documents: Type.Array(DocumentSummarySchema),
  total: Type.Integer(),
  chunks: Type.Integer()
})

export const DeletedSchema = Type.Object({
  deleted: Type.String({ description: 'The id that was removed.' })
})

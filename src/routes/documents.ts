import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { Errors } from '../errors.js'
import { errorExample, ErrorSchema } from '../schemas/error.js'
import {
  DeletedSchema, DocumentIdSchema, DocumentListSchema, IngestDocumentsBodySchema, IngestSummarySchema
} from '../schemas/ingest.js'

/** Start-up steps these routes wait for. */
const STARTUP = ['documents', 'demo:documents']

const documentRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post('/ingest/documents', {
    schema: {
      tags: ['ingest'],
      summary: 'Add or replace documents (hybrid corpus)',
      description: 'Each document is chunked (Markdown headings, then paragraphs, then sentences), embedded and indexed in ' +
        'both legs. Re-ingesting an id replaces all of its chunks. The request is all or nothing.',
      body: IngestDocumentsBodySchema,
      response: {
        200: { ...IngestSummarySchema, description: 'What was written', example: { documents: 1, chunks: 4, replaced: 0, took_ms: 152.3 } },
        400: { ...ErrorSchema, description: 'Malformed body; the message names the field and the document',
          example: errorExample(400, 'RECALL_BAD_REQUEST', 'Bad Request', 'body/documents/0/text must NOT have fewer than 1 characters') },
        413: { ...ErrorSchema, description: 'Body larger than BODY_LIMIT_BYTES' },
        503: { ...ErrorSchema, description: 'The embedder or the vector store is down; nothing was written' }
      }
    },
    config: { startup: STARTUP }
  }, async (request) => {
    const seen = new Set<string>()
    request.body.documents.forEach((d, i) => {
      if (seen.has(d.id)) throw new Errors.invalidIngest(`documents[${i}].id: "${d.id}" appears twice in this request`)
      seen.add(d.id)
      if (d.text.trim() === '') throw new Errors.invalidIngest(`documents[${i}].text (id "${d.id}"): is blank`)
    })
    return app.services.documents.ingest(request.body.documents)
  })

  app.get('/documents', {
    schema: {
      tags: ['ingest'],
      summary: 'List the documents of the hybrid corpus',
      response: { 200: { ...DocumentListSchema, description: 'Documents in id order' } }
    },
    config: { startup: STARTUP }
  }, async () => {
    const documents = app.services.documents.list()
    return { documents, total: documents.length, chunks: app.services.documents.chunkCount }
  })

  app.delete('/documents/:id', {
    schema: {
      tags: ['ingest'],
      summary: 'Delete a document and all of its chunks, from both legs',
      params: Type.Object({ id: DocumentIdSchema }),
      response: {
        200: { ...DeletedSchema, description: 'Deleted' },
        400: { ...ErrorSchema, description: 'Not a valid document id' },
        404: { ...ErrorSchema, description: 'No document has this id' },
        503: { ...ErrorSchema, description: 'The vector store is down; nothing was deleted' }
      }
    },
    config: { startup: STARTUP }
  }, async (request) => {
    const deleted = await app.services.documents.delete(request.params.id)
    if (!deleted) throw new Errors.notFound(`no document has id "${request.params.id}"`)
    return { deleted: request.params.id }
  })
}

export default documentRoutes

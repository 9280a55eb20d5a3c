import type { StartupStep } from '../../kernel/startup-steps.js'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { Errors } from '../../errors.js'
import { validateDocumentsBody } from '../../corpus/documents-body.js'
import { DEFAULT_NAMESPACE } from '../../providers/namespace.js'
import { NamespaceQuerySchema } from '../../schemas/common.js'
import { namespaceOfRequest } from '../plugins/security.js'
import { errorExample, ErrorSchema } from '../../schemas/error.js'
import { MinGenerationSchema, staleReplicaExample } from '../../schemas/generation.js'
import {
  DeletedSchema, DocumentIdSchema, DocumentListSchema, IngestDocumentsBodySchema, IngestSummarySchema
} from '../../schemas/ingest.js'

/** Start-up steps these routes wait for. */
const STARTUP: readonly StartupStep[] = ['documents', 'demo:documents']

const documentRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post('/ingest/documents', {
    schema: {
      tags: ['ingest'],
      summary: 'Add or replace documents (hybrid corpus)',
      description: 'Each document is chunked (Markdown headings, then paragraphs, then sentences), embedded and indexed in ' +
        'both legs of its namespace (`namespace`, default `default`). Re-ingesting an id replaces all of its chunks. ' +
        'The request is all or nothing.',
      body: IngestDocumentsBodySchema,
      response: {
        200: { ...IngestSummarySchema, description: 'What was written', example: { documents: 1, chunks: 4, replaced: 0, unchanged: 0, unchanged_ids: [], took_ms: 152.3, generation: 1764580000000042, derived: { entities: 23, relations: 41, blocked: 0 } } },
        400: { ...ErrorSchema, description: 'Malformed body, a malformed namespace, or metadata over 8,192 bytes; the message names the field and the document',
          example: errorExample(400, 'RECALL_BAD_REQUEST', 'Bad Request', 'body/documents/0/text must NOT have fewer than 1 characters (got "")') },
        413: { ...ErrorSchema, description: 'Body larger than BODY_LIMIT_BYTES' },
        503: { ...ErrorSchema, description: 'The embedder or the vector store is down; nothing was written' }
      }
    },
    config: { startup: STARTUP, namespaces: namespaceOfRequest }
  }, async (request) => {
    const problems = validateDocumentsBody(request.body)
    if (problems.length > 0) throw new Errors.invalidIngest(problems.join('; '))
    return app.services.corpus.write(request.body.namespace ?? DEFAULT_NAMESPACE, { kind: 'documents', op: 'upsert', documents: request.body.documents })
  })

  app.get('/documents', {
    schema: {
      tags: ['ingest'],
      summary: 'List the documents of a namespace\'s hybrid corpus',
      querystring: Type.Object({ ...NamespaceQuerySchema.properties, min_generation: Type.Optional(MinGenerationSchema) }, { additionalProperties: false }),
      response: {
        200: { ...DocumentListSchema, description: 'Documents in id order (none for a namespace that holds none)' },
        400: { ...ErrorSchema, description: 'A malformed namespace' },
        503: { ...ErrorSchema, description: 'This replica has not seen `min_generation` in time (see Retry-After)', example: staleReplicaExample }
      }
    },
    config: { startup: STARTUP, namespaces: namespaceOfRequest }
  }, async (request) => {
    const namespace = request.query.namespace ?? DEFAULT_NAMESPACE
    const { generation } = await app.services.readState('hybrid', namespace, request.query.min_generation)
    const documents = app.services.documents.list(namespace)
    return {
      namespace, documents, total: documents.length, chunks: app.services.documents.get(namespace)?.chunkCount ?? 0,
      ...(generation !== undefined ? { generation } : {})
    }
  })

  app.delete('/documents/:id', {
    schema: {
      tags: ['ingest'],
      summary: 'Delete a document and all of its chunks, from both legs',
      params: Type.Object({ id: DocumentIdSchema }),
      querystring: NamespaceQuerySchema,
      response: {
        200: { ...DeletedSchema, description: 'Deleted' },
        400: { ...ErrorSchema, description: 'Not a valid document id or namespace' },
        404: { ...ErrorSchema, description: 'No document of the namespace has this id' },
        503: { ...ErrorSchema, description: 'The vector store is down; nothing was deleted' }
      }
    },
    config: { startup: STARTUP, namespaces: namespaceOfRequest }
  }, async (request) => {
    const namespace = request.query.namespace ?? DEFAULT_NAMESPACE
    const { deleted, generation } = await app.services.corpus.write(namespace, { kind: 'documents', op: 'delete', ids: [request.params.id] })
    if (deleted.length === 0) throw new Errors.notFound(`no document of namespace "${namespace}" has id "${request.params.id}"`)
    return { deleted: request.params.id, ...(generation !== undefined ? { generation } : {}) }
  })
}

export default documentRoutes

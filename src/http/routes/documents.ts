import { WRITE_STEPS, type StartupStep } from '../../kernel/startup-steps.js'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { Errors } from '../../errors.js'
import { DocumentIngestError, prepareDocuments, type PreparedDocuments } from '../../corpus/documents-body.js'
import { DEFAULT_NAMESPACE } from '../../providers/namespace.js'
import { NamespaceQuerySchema } from '../../schemas/common.js'
import { namespaceOfRequest } from '../plugins/security.js'
import { checkAgainst } from '../../schemas/validation.js'
import { errorExample, ErrorSchema, MemoryBudgetResponse, ModelMismatchResponse } from '../../schemas/error.js'
import { MinGenerationSchema, staleReplicaExample } from '../../schemas/generation.js'
import {
  DeletedSchema, DocumentIdSchema, DocumentListSchema, IngestDocumentsBodySchema, IngestDocumentsQuerySchema, IngestJobSchema, IngestSummarySchema,
  MAX_DOCUMENT_CHARS, MAX_DOCUMENTS_PER_REQUEST, UnchangedAnswerSchema, UnchangedQueryBodySchema
} from '../../schemas/ingest.js'
import { IngestJobLimitError } from '../../corpus/ingest-jobs.js'
import { recordIngest, writtenOutcome } from '../../ingest-record.js'
import { jobAnswer, jobExample, jobUrl } from './ingest-jobs.js'
import { DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT, PageQueryProperties } from '../../schemas/paging.js'
import { decodeCursor, pageOf } from '../paging.js'

const checkQuery = checkAgainst(IngestDocumentsQuerySchema, 'querystring')

/** Start-up steps these routes wait for. */
const STARTUP: readonly StartupStep[] = ['documents', 'demo:documents']
const WRITES: readonly StartupStep[] = [...STARTUP, ...WRITE_STEPS]

const documentRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { jobBodyBytes } = app.runtime.config.ingest
  app.post('/ingest/documents', {
    schema: {
      tags: ['ingest'],
      summary: 'Add or replace documents (hybrid corpus)',
      description: 'Each document is chunked (Markdown headings, then paragraphs, then sentences), embedded and indexed in ' +
        'both legs of its namespace (`namespace`, default `default`). Re-ingesting an id replaces all of its chunks. ' +
        'Control and invisible characters are removed from each text first (`normalised`, and `metadata.normalised_chars`). ' +
        'An invalid document refuses the whole body (400, nothing written) unless `on_invalid` is `skip`: then the valid ' +
        'documents are written and each invalid one is answered in `refused`; a document that gives no text to index is ' +
        'answered in `skipped`. A body up to INGEST_JOB_BODY_BYTES (default 1 MiB) answers when written (200). A larger one, or ' +
        'one sent with `wait=false`, is checked whole, then runs as a job (202 with `Location`): poll `GET /ingest/jobs/{id}` ' +
        '(progress, rate, ETA; at the end the same answer and generation), cancel with `DELETE`; it writes a batch of whole ' +
        'documents at a time, so a cancel or a failure leaves each document wholly written or not written. `wait=true` ' +
        `always answers when written. Limits: ${MAX_DOCUMENT_CHARS.toLocaleString('en')} characters of text per document ` +
        `(MAX_DOCUMENT_CHARS), ${MAX_DOCUMENTS_PER_REQUEST.toLocaleString('en')} documents (MAX_DOCUMENTS_PER_REQUEST), a body of ` +
        'BODY_LIMIT_BYTES (default 10 MiB); each refusal names its limit.',
      querystring: IngestDocumentsQuerySchema,
      body: IngestDocumentsBodySchema,
      response: {
        200: { ...IngestSummarySchema, description: 'What was written', example: { documents: 1, chunks: 4, replaced: 0, unchanged: 0, unchanged_ids: [], took_ms: 152.3, generation: 1764580000000042, derived: { entities: 23, relations: 41, blocked: 0 } } },
        202: { ...IngestJobSchema, description: 'The ingest runs as a job: poll `status_url` (also the `Location` header)', example: { ...jobExample, documents: { done: 0, total: 136 }, chunks: { done: 0, total: 1040 }, rate: { documents_per_second: 0, chunks_per_second: 0 }, eta_seconds: undefined, in_flight: undefined, took_ms: 3.1 } },
        400: { ...ErrorSchema, description: 'Malformed body, a malformed namespace, a text over MAX_DOCUMENT_CHARS, more than MAX_DOCUMENTS_PER_REQUEST documents, junk text, or metadata over 8,192 bytes; the message names the field, the document and the limit',
          example: errorExample(400, 'RECALL_BAD_REQUEST', 'Bad Request', 'body/documents/3/text must NOT have more than 1000000 characters, the limit MAX_DOCUMENT_CHARS (got "# 指南…" (1000001 characters))') },
        413: { ...ErrorSchema, description: 'Body larger than BODY_LIMIT_BYTES', example: errorExample(413, 'RECALL_PAYLOAD_TOO_LARGE', 'Payload Too Large', 'request body is larger than 10485760 bytes (BODY_LIMIT_BYTES)') },
        409: ModelMismatchResponse,
        503: { ...ErrorSchema, description: 'The embedder or the vector store is down (nothing was written), or as many ingest jobs as run at once are running' },
        507: MemoryBudgetResponse
      }
    },
    config: { startup: WRITES, namespaces: namespaceOfRequest },
    // the handler throws the body's schema error unless `on_invalid: "skip"` makes it one document's refusal
    attachValidation: true,
    // one log line and one count per ingest, also for a refused or failed one (a successful one is recorded below)
    onError: async (request, reply, error) => {
      const body = request.body as { documents?: unknown[]; namespace?: string } | undefined
      // a 507 (the memory budget spent) is refused before anything is written, as a 400 or 413 is
      const refused = [400, 413, 507].includes(reply.statusCode) || [400, 413, 507].includes(error.statusCode ?? 0)
      recordIngest(request.log, app.metrics, {
        namespace: typeof body?.namespace === 'string' ? body.namespace : DEFAULT_NAMESPACE,
        outcome: refused ? 'refused' : 'failed', documents: 0, chunks: 0, replaced: 0, unchanged: 0,
        refused: refused && Array.isArray(body?.documents) ? body.documents.length : 0, ms: reply.elapsedTime, error: error.message
      })
    }
  }, async (request, reply) => {
    const skip = (request.body as { on_invalid?: unknown } | null | undefined)?.on_invalid === 'skip'
    // with `skip` a document that misfits the schema is one refusal among the answers, not the body's 400
    if (request.validationError) {
      if (!(skip && request.validationError.message.startsWith('body/documents/'))) throw request.validationError
      // Fastify stops at the body's error: the query string is checked (and coerced) here
      const misfit = checkQuery(request.query)
      if (misfit !== undefined) throw new Errors.badRequest(misfit)
    }
    let prepared: PreparedDocuments
    try {
      prepared = prepareDocuments(request.body)
    } catch (error) {
      if (error instanceof DocumentIngestError) throw new Errors.invalidIngest(error.problems.join('; '))
      throw error
    }
    const namespace = request.body.namespace ?? DEFAULT_NAMESPACE
    const { documents, refused, normalised } = prepared
    const told = { ...(skip ? { refused } : {}), ...(normalised.length > 0 ? { normalised } : {}) }
    if (documents.length === 0) {
      // every document refused: nothing to write, the refusals are the answer
      recordIngest(request.log, app.metrics, { namespace, outcome: 'refused', documents: 0, chunks: 0, replaced: 0, unchanged: 0, refused: refused.length, ms: reply.elapsedTime })
      return { documents: 0, chunks: 0, replaced: 0, unchanged: 0, unchanged_ids: [], ...told, took_ms: Math.round(reply.elapsedTime * 100) / 100 }
    }
    if (request.query.wait === false || (request.query.wait === undefined && bodyBytes(request) > jobBodyBytes)) {
      try {
        const job = app.runtime.ingestJobs.start(namespace, documents, told)
        return reply.code(202).header('location', jobUrl(job.id)).send(jobAnswer(job))
      } catch (error) {
        if (error instanceof IngestJobLimitError) throw new Errors.ingestBusy(error.message)
        throw error
      }
    }
    const summary = await app.runtime.corpus.write(namespace, { kind: 'documents', op: 'upsert', documents })
    recordIngest(request.log, app.metrics, {
      namespace, outcome: writtenOutcome(summary.documents, summary.unchanged), documents: summary.documents, chunks: summary.chunks,
      replaced: summary.replaced, unchanged: summary.unchanged, refused: refused.length, ms: summary.took_ms,
      ...(summary.images ? { images: summary.images } : {})
    })
    return { ...summary, ...told }
  })

  app.get('/documents', {
    schema: {
      tags: ['ingest'],
      summary: 'List the documents of a namespace\'s hybrid corpus, a page at a time',
      description: `Documents in id order, \`limit\` at a time (default ${DEFAULT_PAGE_LIMIT.toLocaleString('en')}, at most ${MAX_PAGE_LIMIT.toLocaleString('en')}); ` +
        'while more follow, the answer has `next_cursor`, to pass as `cursor` for the next page. `total` and `chunks` count the whole namespace. ' +
        'With `status=true` each document also has its `index_status` (as `GET /documents/{id}` answers it; it reads the stores, so a page costs more).',
      querystring: Type.Object({
        ...NamespaceQuerySchema.properties, min_generation: Type.Optional(MinGenerationSchema), ...PageQueryProperties,
        status: Type.Optional(Type.Boolean({ description: 'With `true`, each document\'s index status per channel (docs/api.md, "Index status"). Default false.' }))
      }, { additionalProperties: false }),
      response: {
        409: ModelMismatchResponse,
        200: { ...DocumentListSchema, description: 'A page of documents in id order (none for a namespace that holds none)' },
        400: { ...ErrorSchema, description: 'A malformed namespace, a limit out of range, or a cursor that is not one of this list', example: errorExample(400, 'RECALL_BAD_REQUEST', 'Bad Request', 'querystring/limit must be <= 10000 (got 20000)') },
        503: { ...ErrorSchema, description: 'This replica has not seen `min_generation` in time (see Retry-After)', example: staleReplicaExample }
      }
    },
    config: { startup: STARTUP, namespaces: namespaceOfRequest }
  }, async (request) => {
    const namespace = request.query.namespace ?? DEFAULT_NAMESPACE
    const { generation } = await app.runtime.corpus.readState('hybrid', namespace, request.query.min_generation)
    const limit = request.query.limit ?? DEFAULT_PAGE_LIMIT
    const after = request.query.cursor === undefined ? undefined : decodeCursor('documents', request.query.cursor)
    const { documents } = app.runtime.corpus
    const page = pageOf('documents', documents.page(namespace, after, limit + 1), limit, (d) => d.id)
    const library = documents.get(namespace)
    const statuses = request.query.status === true ? await app.runtime.corpus.status.ofDocuments(namespace, page.entries.map((d) => d.id)) : undefined
    const entries = statuses ? page.entries.map((d) => ({ ...d, ...(statuses.has(d.id) ? { index_status: statuses.get(d.id)! } : {}) })) : page.entries
    return {
      namespace, documents: entries, total: library?.documentCount ?? 0, chunks: library?.chunkCount ?? 0,
      ...(page.next_cursor !== undefined ? { next_cursor: page.next_cursor } : {}),
      ...(generation !== undefined ? { generation } : {})
    }
  })

  app.post('/documents/unchanged', {
    schema: {
      tags: ['ingest'],
      summary: 'Which of these documents the namespace holds unchanged (a read: nothing is written)',
      description: 'Asks by fingerprint, before sending bodies: a document answered `unchanged` would be reported `unchanged` by ' +
        '`POST /ingest/documents` and cost nothing, so a client sends only the others (`npm run ingest` does). The fingerprint ' +
        'is a hash of the document as it would be sent (`id`, `text`, `source`, `title`, `metadata`); one computed otherwise only ' +
        'answers `unchanged: false`. A document written by another writer after this answer is that writer\'s.',
      body: UnchangedQueryBodySchema,
      response: {
        200: { ...UnchangedAnswerSchema, description: 'Per document, in the order asked', example: { namespace: 'default', documents: [{ id: 'oncall', held: true, unchanged: true, chunks: 4 }, { id: 'travel', held: true, unchanged: false }, { id: 'new-note', held: false, unchanged: false }], generation: 1764580000000042 } },
        400: { ...ErrorSchema, description: 'A malformed body, namespace, id or fingerprint, or more than MAX_FINGERPRINTS_PER_REQUEST documents' }
      }
    },
    config: { startup: STARTUP, namespaces: namespaceOfRequest }
  }, async (request) => {
    const namespace = request.body.namespace ?? DEFAULT_NAMESPACE
    const { generation } = await app.runtime.corpus.readState('hybrid', namespace)
    const library = app.runtime.corpus.documents.get(namespace)
    const documents = request.body.documents.map(({ id, fingerprint }) => {
      const chunks = library?.heldUnchanged(id, fingerprint)
      return { id, held: library?.has(id) ?? false, unchanged: chunks !== undefined, ...(chunks !== undefined ? { chunks } : {}) }
    })
    return { namespace, documents, ...(generation !== undefined ? { generation } : {}) }
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
        409: ModelMismatchResponse,
        503: { ...ErrorSchema, description: 'The vector store is down; nothing was deleted' }
      }
    },
    config: { startup: WRITES, namespaces: namespaceOfRequest }
  }, async (request) => {
    const namespace = request.query.namespace ?? DEFAULT_NAMESPACE
    const { deleted, generation } = await app.runtime.corpus.write(namespace, { kind: 'documents', op: 'delete', ids: [request.params.id] })
    if (deleted.length === 0) throw new Errors.notFound(`no document of namespace "${namespace}" has id "${request.params.id}"`)
    return { deleted: request.params.id, ...(generation !== undefined ? { generation } : {}) }
  })
}

export default documentRoutes

/** The request body's size in bytes: its Content-Length, or (chunked) its JSON's. */
function bodyBytes(request: { headers: Record<string, unknown>; body: unknown }): number {
  const length = Number(request.headers['content-length'])
  return Number.isFinite(length) && length > 0 ? length : Buffer.byteLength(JSON.stringify(request.body))
}

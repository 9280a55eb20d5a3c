import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { Errors } from '../../errors.js'
import type { RetrievalDefaults } from '../../retrieval-defaults.js'
import { errorExample, ErrorSchema } from '../../schemas/error.js'
import { NamespaceSchema } from '../../schemas/common.js'
import { RetrievalDefaultsSchema, StoredRetrievalDefaultsSchema, type RetrievalDefaultsBody } from '../../schemas/retrieval-defaults.js'

const Params = Type.Object({ namespace: NamespaceSchema })
const example = {
  namespace: 'default', hybrid: { fusion: 'convex', alpha: 0.6, normalisation: 'tmm', window: 50 },
  note: 'npm run tune -- bench/judged/cmrc-trial.jsonl: 5-fold held-out MRR@10 0.98', updated_at: '2026-12-01T09:00:00.000Z', stored_in: 'file'
}
const namespacesOf = (request: { params: unknown }) => [(request.params as { namespace: string }).namespace]

/** The 400 for options of the other fusion than the one the defaults name. */
function checkDefaults(body: RetrievalDefaultsBody): void {
  const h = body.hybrid
  if (!h) return
  const fusion = h.fusion ?? 'rrf'
  const misplaced = fusion === 'rrf' ? (['alpha', 'normalisation', 'graph_weight'] as const).filter((k) => h[k] !== undefined)
    : (['rrf_k', 'weights'] as const).filter((k) => h[k] !== undefined)
  if (misplaced.length > 0) {
    throw new Errors.badRequest(`body/hybrid: ${misplaced.join(', ')} do not apply to fusion=${fusion}` +
      `${fusion === 'rrf' ? ' (what defaults without `fusion` are taken to name); set fusion: "convex"' : ''}`)
  }
}

const retrievalDefaultsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const storedIn = app.runtime.redis ? 'redis' : 'file'
  const answer = (namespace: string, d: RetrievalDefaults | undefined) => ({
    namespace, hybrid: d?.hybrid ?? {}, ...(d?.structures ? { structures: d.structures } : {}), ...(d?.note ? { note: d.note } : {}), ...(d?.updated_at ? { updated_at: d.updated_at } : {}), stored_in: storedIn
  })
  const badNamespace = { ...ErrorSchema, description: 'A malformed namespace or body', example: errorExample(400, 'RECALL_BAD_REQUEST', 'Bad Request', 'body/hybrid/alpha must be <= 1') }

  app.get('/namespaces/:namespace/retrieval-defaults', {
    schema: {
      tags: ['namespaces'],
      summary: 'A namespace\'s retrieval defaults',
      description: 'The hybrid options (fusion, alpha, normalisation, rrf_k, window, weights, legs, graph_weight) used when a request of this ' +
        'namespace does not set them; `hybrid: {}` when none are stored. `structures`: what graphrag and episodic read ' +
        '(imported, derived, both; absent: derived only where nothing was imported).',
      params: Params,
      response: { 200: { ...StoredRetrievalDefaultsSchema, example }, 400: badNamespace }
    },
    config: { namespaces: namespacesOf }
  }, async (request) => answer(request.params.namespace, await app.runtime.retrievalDefaults.get(request.params.namespace)))

  app.put('/namespaces/:namespace/retrieval-defaults', {
    schema: {
      tags: ['namespaces'],
      summary: 'Set a namespace\'s retrieval defaults',
      description: 'Replaces them wholly (`npm run tune -- FILE --apply` calls this). Stored in Redis when the service has ' +
        '`REDIS_URL`, so every replica uses them at once; else in `DATA_DIR/retrieval-defaults.json`. Cached answers made ' +
        'under the old defaults are not reused: the options are part of the response cache key.',
      params: Params,
      body: RetrievalDefaultsSchema,
      response: {
        200: { ...StoredRetrievalDefaultsSchema, example },
        400: badNamespace,
        503: { ...ErrorSchema, description: 'Redis did not store them', example: errorExample(503, 'RECALL_BACKEND_UNAVAILABLE', 'Service Unavailable', 'cache:redis is unavailable: could not store the retrieval defaults: Connection is closed.') }
      }
    },
    config: { namespaces: namespacesOf }
  }, async (request) => {
    checkDefaults(request.body)
    const stored: RetrievalDefaults = { ...request.body, updated_at: new Date().toISOString() }
    await app.runtime.retrievalDefaults.set(request.params.namespace, stored)
    return answer(request.params.namespace, stored)
  })

  app.delete('/namespaces/:namespace/retrieval-defaults', {
    schema: {
      tags: ['namespaces'],
      summary: 'Remove a namespace\'s retrieval defaults',
      description: 'The service defaults apply again. Answers what was stored.',
      params: Params,
      response: {
        200: { ...StoredRetrievalDefaultsSchema, example },
        400: badNamespace,
        404: { ...ErrorSchema, description: 'No defaults are stored for the namespace', example: errorExample(404, 'RECALL_NOT_FOUND', 'Not Found', 'namespace "tenant-a" has no retrieval defaults') }
      }
    },
    config: { namespaces: namespacesOf }
  }, async (request) => {
    const { namespace } = request.params
    const before = await app.runtime.retrievalDefaults.get(namespace)
    if (!(await app.runtime.retrievalDefaults.delete(namespace))) throw new Errors.notFound(`namespace "${namespace}" has no retrieval defaults`)
    return answer(namespace, before)
  })
}

export default retrievalDefaultsRoutes

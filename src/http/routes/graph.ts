import { GenerationSchema } from '../../schemas/generation.js'
import { WRITE_STEPS, type StartupStep } from '../../kernel/startup-steps.js'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { Errors } from '../../errors.js'
import { GraphIngestBodySchema, GraphIngestError } from '../../corpus/graph.js'
import { DEFAULT_NAMESPACE } from '../../providers/namespace.js'
import { NamespaceQuerySchema } from '../../schemas/common.js'
import { namespaceOfRequest } from '../plugins/security.js'
import { errorExample, ErrorSchema, MemoryBudgetResponse } from '../../schemas/error.js'

/** Start-up steps these routes wait for. */
const STARTUP: readonly StartupStep[] = ['knowledge-graph', 'demo:graph']
const WRITES: readonly StartupStep[] = [...STARTUP, ...WRITE_STEPS]

const graphRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post('/ingest/graph', {
    schema: {
      tags: ['ingest'],
      summary: 'Add or replace knowledge-graph entities and relations (graphrag)',
      description: 'Into the knowledge graph of `namespace` (default `default`). Idempotent by id. A relation whose endpoint ' +
        'is neither in the request nor stored in the namespace rejects the whole request with a 400 listing the missing ids; ' +
        'nothing of it is written.',
      body: GraphIngestBodySchema,
      response: {
        200: { ...Type.Object({ entities: Type.Integer(), relations: Type.Integer(), generation: Type.Optional(GenerationSchema) }), description: 'What was written', example: { entities: 2, relations: 1, generation: 1764580000000042 } },
        400: { ...ErrorSchema, description: 'Malformed body or unknown relation endpoints',
          example: errorExample(400, 'RECALL_INGEST_INVALID', 'Bad Request', 'relations[1].target: unknown entity "ghost"') },
        503: { ...ErrorSchema, description: 'The graph store is down; nothing was written' },
        507: MemoryBudgetResponse
      }
    },
    config: { startup: WRITES, namespaces: namespaceOfRequest }
  }, async (request) => {
    try {
      const { namespace, ...body } = request.body
      return await app.runtime.corpus.write(namespace ?? DEFAULT_NAMESPACE, { kind: 'graph', op: 'upsert', body })
    } catch (error) {
      if (error instanceof GraphIngestError) throw new Errors.invalidIngest(error.problems.join('; '))
      throw error
    }
  })

  app.delete('/entities/:id', {
    schema: {
      tags: ['ingest'],
      summary: 'Delete a knowledge-graph entity and every relation that touches it',
      params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 512 }) }),
      querystring: NamespaceQuerySchema,
      response: {
        200: { ...Type.Object({ deleted: Type.String(), generation: Type.Optional(GenerationSchema) }), description: 'Deleted' },
        400: { ...ErrorSchema, description: 'Not a valid entity id or namespace' },
        404: { ...ErrorSchema, description: 'No entity of the namespace has this id' },
        503: { ...ErrorSchema, description: 'The graph store is down; nothing was deleted' }
      }
    },
    config: { startup: WRITES, namespaces: namespaceOfRequest }
  }, async (request) => {
    const namespace = request.query.namespace ?? DEFAULT_NAMESPACE
    const { deleted, generation } = await app.runtime.corpus.write(namespace, { kind: 'graph', op: 'delete', ids: [request.params.id] })
    if (deleted.length === 0) throw new Errors.notFound(`no entity of namespace "${namespace}" has id "${request.params.id}"`)
    return { deleted: request.params.id, ...(generation !== undefined ? { generation } : {}) }
  })
}

export default graphRoutes

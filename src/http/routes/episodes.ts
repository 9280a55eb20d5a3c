import { GenerationSchema } from '../../schemas/generation.js'
import { WRITE_STEPS, type StartupStep } from '../../kernel/startup-steps.js'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { Errors } from '../../errors.js'
import { EpisodeIngestError } from '../../corpus/episodes/validation.js'
import { EpisodesIngestBodySchema } from '../../corpus/episodes/schema.js'
import { MAX_LISTED_WARNINGS } from '../../corpus/episodes/warnings.js'
import { DEFAULT_NAMESPACE } from '../../providers/namespace.js'
import { NamespaceQuerySchema } from '../../schemas/common.js'
import { namespaceOfRequest } from '../plugins/security.js'
import { errorExample, ErrorSchema, MemoryBudgetResponse, ModelMismatchResponse } from '../../schemas/error.js'

/** Start-up steps these routes wait for. */
const STARTUP: readonly StartupStep[] = ['embedder', 'episodes:journal', 'demo:episodes']
const WRITES: readonly StartupStep[] = [...STARTUP, ...WRITE_STEPS]

const episodeRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { runtime } = app

  app.post('/ingest/episodes', {
    schema: {
      tags: ['ingest'],
      summary: 'Add or replace Episodes with their facets, points and entities (episodic memory)',
      description: 'Episodes in their nested form (docs/episodic.md), into the episodic memory of `namespace` (default `default`). ' +
        'Edge texts are generated when not given. Idempotent by id; ' +
        'unknown facet or entity references reject the request with a 400 listing them, and nothing is written. ' +
        'The answer lists `warnings` where the memory breaks m-flow\'s input rules (a facet label under 6 characters ' +
        'or owned by more than 2 Episodes, an entity link without a description); they never fail the request.',
      body: EpisodesIngestBodySchema,
      response: {
        200: {
          ...Type.Object({
            episodes: Type.Integer(), facets: Type.Integer(), points: Type.Integer(),
            entities: Type.Integer(), edges: Type.Integer(), vectors: Type.Integer(),
            warnings: Type.Array(Type.Object({
              field: Type.String({ description: 'The offending field, e.g. `episodes[2].facets[0].search_text`.' }),
              message: Type.String()
            }), { description: `Advice on the shape of the memory, never an error; the first ${MAX_LISTED_WARNINGS}.` }),
            warnings_total: Type.Integer({ description: 'How many warnings there were in all.' }),
            generation: Type.Optional(GenerationSchema)
          }),
          description: 'What was written, with advice on the memory\'s shape',
          example: {
            episodes: 1, facets: 1, points: 0, entities: 0, edges: 2, vectors: 5, warnings_total: 2,
            warnings: [
              { field: 'episodes[0].facets[0].search_text', message: 'facet label "结果" is 2 characters: name what this Episode\'s facet is about in 15 to 50 characters (a topic label such as "流式返回灰度发布的回滚方案", not a category such as "结果")' },
              { field: 'episodes[0].entities[0]', message: 'the link from Episode "E1" to entity "N1" has no description: give it as {"id": "N1", "description": "…"}, what the entity is or did there; otherwise every Episode linked to it gets the same edge text and cost' }
            ]
          }
        },
        400: { ...ErrorSchema, description: 'Malformed body, unknown references, or an entity-link description over 2,000 characters',
          example: errorExample(400, 'RECALL_INGEST_INVALID', 'Bad Request', 'episodes[2].facets[0].entities[1]: unknown entity "N9"') },
        409: ModelMismatchResponse,
        503: { ...ErrorSchema, description: 'A store or the embedder is down' },
        507: MemoryBudgetResponse
      }
    },
    config: { startup: WRITES, namespaces: namespaceOfRequest }
  }, async (request) => {
    try {
      const { namespace, ...body } = request.body
      return await runtime.corpus.write(namespace ?? DEFAULT_NAMESPACE, { kind: 'episodes', op: 'upsert', body })
    } catch (error) {
      if (error instanceof EpisodeIngestError) throw new Errors.invalidIngest(error.problems.join('; '))
      throw error
    }
  })

  app.delete('/episodes/:id', {
    schema: {
      tags: ['ingest'],
      summary: 'Delete an Episode with its facets, points and their vectors; shared entities stay',
      params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 512 }) }),
      querystring: NamespaceQuerySchema,
      response: {
        200: { ...Type.Object({ deleted: Type.String(), generation: Type.Optional(GenerationSchema) }), description: 'Deleted' },
        400: { ...ErrorSchema, description: 'Not a valid id or namespace' },
        404: { ...ErrorSchema, description: 'No Episode of the namespace has this id' },
        409: ModelMismatchResponse,
        503: { ...ErrorSchema, description: 'A store is down' }
      }
    },
    config: { startup: WRITES, namespaces: namespaceOfRequest }
  }, async (request) => {
    const namespace = request.query.namespace ?? DEFAULT_NAMESPACE
    const { deleted, generation } = await runtime.corpus.write(namespace, { kind: 'episodes', op: 'delete', ids: [request.params.id] })
    if (deleted.length === 0) throw new Errors.notFound(`no Episode of namespace "${namespace}" has id "${request.params.id}"`)
    return { deleted: request.params.id, ...(generation !== undefined ? { generation } : {}) }
  })
}

export default episodeRoutes

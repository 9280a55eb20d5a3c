import { GenerationSchema } from '../../schemas/generation.js'
import { WRITE_STEPS, type StartupStep } from '../../kernel/startup-steps.js'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { Errors } from '../../errors.js'
import { NamespaceSchema } from '../../schemas/common.js'
import { errorExample, ErrorSchema, ModelMismatchResponse } from '../../schemas/error.js'
import { DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT, NextCursorSchema, PageQueryProperties } from '../../schemas/paging.js'
import { decodeCursor, pageOf } from '../paging.js'
import { NamespaceIndexStatusSchema } from '../../schemas/index-status.js'

/** Start-up steps these routes wait for: every store opened, and the demo world written (it goes into `default`). */
const STARTUP: readonly StartupStep[] = ['documents', 'knowledge-graph', 'demo:documents', 'demo:graph', 'demo:episodes']
const WRITES: readonly StartupStep[] = [...STARTUP, ...WRITE_STEPS]

const Count = (what: string) => Type.Integer({ minimum: 0, description: what })

const NamespaceCountsSchema = Type.Object({
  namespace: Type.String({ description: 'The namespace.' }),
  documents: Count('Documents of its hybrid corpus.'),
  chunks: Count('Chunks of those documents.'),
  entities: Count('Entities of its knowledge graph.'),
  relations: Count('Relations of its knowledge graph.'),
  episodes: Count('Episodes of its episodic memory.'),
  images: Count('Pictures of its documents (image records).')
}, { description: 'What one namespace holds.' })

const example = { namespace: 'tenant-a', documents: 12, chunks: 40, entities: 3, relations: 2, episodes: 5, images: 4 }

const namespaceRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/namespaces', {
    schema: {
      tags: ['namespaces'],
      summary: 'List the namespaces, with what each holds',
      description: 'Every namespace that holds anything in any store, in name order, `limit` at a time ' +
        `(default ${DEFAULT_PAGE_LIMIT.toLocaleString('en')}, at most ${MAX_PAGE_LIMIT.toLocaleString('en')}); while more follow, the answer has ` +
        '`next_cursor`, to pass as `cursor` for the next page. A key scoped to some namespaces sees only those.',
      querystring: Type.Object(PageQueryProperties),
      response: {
        200: {
          ...Type.Object({ namespaces: Type.Array(NamespaceCountsSchema), next_cursor: NextCursorSchema }),
          description: 'A page of namespaces in name order', example: { namespaces: [{ ...example, namespace: 'default' }, example] }
        },
        400: { ...ErrorSchema, description: 'A limit out of range, or a cursor that is not one of this list' }
      }
    },
    config: { startup: STARTUP }
  }, async (request) => {
    const limit = request.query.limit ?? DEFAULT_PAGE_LIMIT
    const after = request.query.cursor === undefined ? undefined : decodeCursor('namespaces', request.query.cursor)
    const rows = await app.runtime.corpus.namespacePage((ns) => request.mayUseNamespace(ns), after, limit + 1)
    const page = pageOf('namespaces', rows, limit, (n) => n.namespace)
    return { namespaces: page.entries, ...(page.next_cursor !== undefined ? { next_cursor: page.next_cursor } : {}) }
  })

  app.get('/namespaces/:namespace', {
    schema: {
      tags: ['namespaces'],
      summary: 'One namespace: what it holds, and its documents\' index status summed',
      description: 'The counts `GET /namespaces` lists, and per channel (`vectors`, `lexical`, `derived_graph`, `derived_episodes`) ' +
        'its documents by state (`done`, `pending`, `failed`, `off`) with their chunk or item counts summed (docs/api.md, ' +
        '"Index status"). It reads every document\'s status from the stores, so it costs more on a large namespace.',
      params: Type.Object({ namespace: NamespaceSchema }),
      response: {
        200: {
          ...Type.Object({ ...NamespaceCountsSchema.properties, index_status: NamespaceIndexStatusSchema }),
          description: 'What it holds, and its index status',
          example: {
            ...example,
            index_status: {
              vectors: { documents: { done: 12, pending: 0, failed: 0, off: 0 }, chunks: { indexed: 40, expected: 40 } },
              lexical: { documents: { done: 11, pending: 1, failed: 0, off: 0 }, chunks: { indexed: 37, expected: 40 } },
              derived_graph: { documents: { done: 10, pending: 0, failed: 2, off: 0 }, items: { derived: 181, expected: 181 } },
              derived_episodes: { documents: { done: 0, pending: 0, failed: 0, off: 12 } }
            }
          }
        },
        400: { ...ErrorSchema, description: 'A malformed namespace' },
        404: { ...ErrorSchema, description: 'The namespace holds nothing', example: errorExample(404, 'RECALL_NOT_FOUND', 'Not Found', 'namespace "tenant-b" holds nothing') },
        409: ModelMismatchResponse,
        503: { ...ErrorSchema, description: 'A store is down' }
      }
    },
    config: { startup: STARTUP, namespaces: (request) => [(request.params as { namespace: string }).namespace] }
  }, async (request) => {
    const { namespace } = request.params
    const [counts] = await app.runtime.corpus.namespaces((ns) => ns === namespace)
    if (!counts) throw new Errors.notFound(`namespace "${namespace}" holds nothing`)
    return { ...counts, index_status: await app.runtime.corpus.status.ofNamespace(namespace) }
  })

  app.delete('/namespaces/:namespace', {
    schema: {
      tags: ['namespaces'],
      summary: 'Delete a namespace wholly, from every store',
      description: 'Its documents (vectors and lexical index), its knowledge graph, its episodic memory (graph and vectors) ' +
        'and its cached answers. `default` may be deleted too: it is then empty. Not atomic across stores: after a ' +
        'failure (503) the same request removes what is left.',
      params: Type.Object({ namespace: NamespaceSchema }),
      response: {
        200: {
          ...Type.Object({ deleted: Type.String({ description: 'The namespace removed.' }), removed: NamespaceCountsSchema, generation: Type.Optional(GenerationSchema) }),
          description: 'Removed; `removed` says what it held', example: { deleted: 'tenant-a', removed: example }
        },
        400: { ...ErrorSchema, description: 'A malformed namespace', example: errorExample(400, 'RECALL_BAD_REQUEST', 'Bad Request', 'params/namespace must match pattern "^[a-z0-9][a-z0-9_-]{0,62}$" (got "Tenant A")') },
        404: { ...ErrorSchema, description: 'The namespace holds nothing' },
        409: ModelMismatchResponse,
        503: { ...ErrorSchema, description: 'A store is down; what was removed stays removed, run it again' }
      }
    },
    config: { startup: WRITES, namespaces: (request) => [(request.params as { namespace: string }).namespace] }
  }, async (request) => {
    // Recorded in every mode, also after a failure half-way: whatever went, no cached answer may outlive it.
    const { removed, generation } = await app.runtime.corpus.write(request.params.namespace, { kind: 'namespace', op: 'drop' })
    if (!removed) throw new Errors.notFound(`namespace "${request.params.namespace}" holds nothing`)
    return { deleted: request.params.namespace, removed, ...(generation !== undefined ? { generation } : {}) }
  })
}

export default namespaceRoutes

import { GenerationSchema } from '../../schemas/generation.js'
import type { StartupStep } from '../../kernel/startup-steps.js'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { Errors } from '../../errors.js'
import { ConversationIngestError, ConversationsBodySchema } from '../../corpus/conversations/body.js'
import { DEFAULT_NAMESPACE } from '../../providers/namespace.js'
import { NamespaceQuerySchema } from '../../schemas/common.js'
import { namespaceOfRequest } from '../plugins/security.js'
import { errorExample, ErrorSchema } from '../../schemas/error.js'

/** Start-up steps these routes wait for (conversations are replayed with the Episodes' journal). */
const STARTUP: readonly StartupStep[] = ['embedder', 'episodes:journal']

const conversationRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { runtime } = app

  app.post('/ingest/conversations', {
    schema: {
      tags: ['ingest'],
      summary: 'Remember conversations: add or update sessions and turns (episodic memory)',
      description: 'Conversations into the episodic memory of `namespace` (default `default`), docs/conversations.md. ' +
        'A conversation id sent again upserts the sessions it carries (by session id, and turns by turn id within a session) ' +
        'and keeps its other sessions. Each session sent becomes one derived Episode: its topic segments as Facets, its turns ' +
        'as FacetPoints, speakers and named things as Entities, time expressions anchored to the session time. Only turn ' +
        'texts not held yet are embedded. A bad body is a 400 naming the field and value, and nothing of it is written.',
      body: ConversationsBodySchema,
      response: {
        200: {
          ...Type.Object({
            conversations: Type.Integer(),
            sessions: Type.Integer({ description: 'Sessions sent.' }),
            sessions_written: Type.Integer({ description: 'Sessions whose Episode was written (the others derive as stored).' }),
            turns: Type.Integer({ description: 'Turns the written sessions hold now.' }),
            turns_embedded: Type.Integer({ description: 'Turn texts embedded by this write; the others kept their stored vectors.' }),
            facets: Type.Integer(), entities: Type.Integer(), vectors: Type.Integer(),
            generation: Type.Optional(GenerationSchema)
          }),
          description: 'What was written',
          example: { conversations: 1, sessions: 1, sessions_written: 1, turns: 18, turns_embedded: 1, facets: 3, entities: 0, vectors: 23, generation: 7 }
        },
        400: { ...ErrorSchema, description: 'Malformed body: a blank speaker or text, a time that does not parse, an id given twice',
          example: errorExample(400, 'RECALL_INGEST_INVALID', 'Bad Request', 'conversations[0].sessions[1].time: time "yesterday-ish" is not a date and time this service reads (ISO 8601, "1:56 pm on 8 May, 2023", "2023年5月8日 下午1:56")') },
        413: { ...ErrorSchema, description: 'Body over BODY_LIMIT_BYTES' },
        503: { ...ErrorSchema, description: 'A store or the embedder is down' }
      }
    },
    config: { startup: STARTUP, namespaces: namespaceOfRequest }
  }, async (request) => {
    try {
      const { namespace, ...body } = request.body
      return await runtime.corpus.write(namespace ?? DEFAULT_NAMESPACE, { kind: 'conversations', op: 'upsert', body })
    } catch (error) {
      if (error instanceof ConversationIngestError) throw new Errors.invalidIngest(error.problems.join('; '))
      throw error
    }
  })

  app.delete('/conversations/:id', {
    schema: {
      tags: ['ingest'],
      summary: 'Forget a conversation: its sessions\' Episodes, turns and vectors; entities other Episodes link stay',
      params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 512 }) }),
      querystring: NamespaceQuerySchema,
      response: {
        200: { ...Type.Object({ deleted: Type.String(), generation: Type.Optional(GenerationSchema) }), description: 'Deleted' },
        400: { ...ErrorSchema, description: 'Not a valid id or namespace' },
        404: { ...ErrorSchema, description: 'No conversation of the namespace has this id' },
        503: { ...ErrorSchema, description: 'A store is down' }
      }
    },
    config: { startup: STARTUP, namespaces: namespaceOfRequest }
  }, async (request) => {
    const namespace = request.query.namespace ?? DEFAULT_NAMESPACE
    const { deleted, generation } = await runtime.corpus.write(namespace, { kind: 'conversations', op: 'delete', ids: [request.params.id] })
    if (deleted.length === 0) throw new Errors.notFound(`no conversation of namespace "${namespace}" has id "${request.params.id}"`)
    return { deleted: request.params.id, ...(generation !== undefined ? { generation } : {}) }
  })
}

export default conversationRoutes

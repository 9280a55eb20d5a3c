import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { legBackendsOf } from '../modes.js'
import type { LegObservation } from '../plugins/metrics.js'
import { checkRequest, embedsQuery, fromBody, fromQueryString, retrieveCached, type RetrieveRequest } from '../retrieval.js'
import { errorExample, ErrorSchema } from '../schemas/error.js'
import type { Mode } from '../schemas/recall-bundle.js'
import { RetrieveResponseSchema } from '../schemas/recall-item.js'
import { RetrieveBodySchema, RetrieveQuerySchema } from '../schemas/retrieve.js'

const example = {
  mode: 'hybrid',
  query: '咳嗽三周以上要做什么检查',
  recall_bundle: [{
    id: 'guide-cough#3', text: '## 第三节 慢性咳嗽的检查 …', score: 0.032266, source: 'clinical/cough.md', mode: 'hybrid',
    metadata: {
      rank: 1, score_kind: 'rrf', doc_id: 'guide-cough', chunk_index: 3, title: '咳嗽诊疗指引',
      legs: { vector: { rank: 1, score: 0.8312 }, lexical: { rank: 3, score: 12.1 } },
      rrf: { k: 60, contributions: { vector: 0.016393, lexical: 0.015873 } }
    }
  }],
  legs: [
    { name: 'embedding', status: 'ok', took_ms: 6.2, hits: 1 },
    { name: 'vector', status: 'ok', took_ms: 3.1, hits: 50 },
    { name: 'lexical', status: 'ok', took_ms: 0.4, hits: 37 }
  ],
  match_strength: 'strong',
  cached: false,
  took_ms: 9.8
}

const responses = {
  200: { ...RetrieveResponseSchema, description: 'The recall bundle, best first, with per-item explanations', example },
  400: { ...ErrorSchema, description: 'Bad input: unknown mode, blank or over-long query, top_k out of 1..100, unknown legs',
    example: errorExample(400, 'RECALL_BAD_REQUEST', 'Bad Request', 'querystring/mode must be equal to one of the allowed values: hybrid, graphrag, episodic') },
  503: { ...ErrorSchema, description: 'Overloaded or starting (see Retry-After), or a backend the mode needs is down or too slow; the message names it',
    example: errorExample(503, 'RECALL_BACKEND_UNAVAILABLE', 'Service Unavailable', 'neo4j is unavailable: connection refused') }
}

/** The start-up steps each mode waits for. */
const STARTUP: Record<Mode, readonly string[]> = {
  hybrid: ['embedder', 'documents', 'demo:documents'],
  graphrag: ['knowledge-graph', 'demo:graph', 'graphrag:names'],
  episodic: ['embedder', 'demo:episodes']
}
const modeOf = (request: FastifyRequest): Mode =>
  ((request.body as { mode?: Mode } | undefined)?.mode ?? (request.query as { mode: Mode }).mode)

const retrieveRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { services } = app
  const legBackends = legBackendsOf(services.names)
  const deps = {
    modes: app.modes,
    cache: services.cache,
    ttlSeconds: services.config.cache.responseTtlSeconds,
    indexVersion: (mode: Mode) => services.indexVersion(mode),
    onCacheLookup: (hit: boolean) => app.metrics.cacheResult('response', hit),
    beforeRun: (r: RetrieveRequest) => { if (embedsQuery(r)) app.overload.checkEmbedding() },
    onLegs: (mode: string, legs: LegObservation[]) => {
      app.metrics.observeLegs(mode, legs)
      app.metrics.failedLegs(legBackends[mode as Mode], legs)
    }
  }
  const config = { startup: (request: FastifyRequest) => STARTUP[modeOf(request)] }
  const answer = async (r: RetrieveRequest, reply: FastifyReply) => {
    checkRequest(r, services.config.limits.maxQueryChars)
    const { body, cached } = await retrieveCached(deps, r)
    void reply.header('x-cache', cached ? 'hit' : 'miss')
    // A cached answer is already UTF-8 JSON of the response schema; it is sent as it is.
    if (Buffer.isBuffer(body)) return reply.type('application/json; charset=utf-8').send(body)
    return body
  }

  app.get('/retrieve', {
    schema: {
      tags: ['retrieve'],
      summary: 'Retrieve for a question (short form)',
      description: 'Runs exactly one retrieval path, chosen by `mode`. The hybrid options `legs`, `rrf_k` and `window` ' +
        'may be given here; POST takes every option.',
      querystring: RetrieveQuerySchema,
      response: responses
    },
    config
  }, async (request, reply) => answer(fromQueryString(request.query), reply))

  app.post('/retrieve', {
    schema: {
      tags: ['retrieve'],
      summary: 'Retrieve for a question (every option)',
      description: 'The same as GET, for long questions and per-mode options.',
      body: RetrieveBodySchema,
      response: responses
    },
    config
  }, async (request, reply) => answer(fromBody(request.body), reply))
}

export default retrieveRoutes

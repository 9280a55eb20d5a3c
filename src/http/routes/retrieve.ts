import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { checkRequest, fromBody, fromQueryString, MODE_STARTUP_STEPS, retrievalDeps, retrieveCached, type RetrieveRequest } from '../../retrieval.js'
import { namespaceOfRequest } from '../plugins/security.js'
import { errorExample, ErrorSchema, ModelMismatchResponse } from '../../schemas/error.js'
import { staleReplicaExample } from '../../schemas/generation.js'
import type { Mode } from '../../schemas/recall-bundle.js'
import { retrieveBodyExamples, retrieveResponseExamples } from '../../schemas/examples.js'
import { RetrieveResponseSchema } from '../../schemas/recall-item.js'
import { RetrieveBodySchema, RetrieveQuerySchema } from '../../schemas/retrieve.js'

const responses = {
  200: { ...RetrieveResponseSchema, description: 'The recall bundle, best first, with per-item explanations', 'x-examples': retrieveResponseExamples },
  400: { ...ErrorSchema, description: 'Bad input: unknown mode, blank or over-long query, top_k out of 1..100, unknown legs, ' +
    'a malformed namespace or filter, an option or filter part of another mode; the message names the field',
    example: errorExample(400, 'RECALL_BAD_REQUEST', 'Bad Request', 'querystring/mode must be equal to one of the allowed values: hybrid, graphrag, episodic (got "bogus")') },
  409: ModelMismatchResponse,
  503: { ...ErrorSchema, description: 'Overloaded or starting (see Retry-After), or a backend the mode needs is down or too slow (the message names it), ' +
    'or this replica has not seen `min_generation` within MIN_GENERATION_WAIT_MS (`RECALL_STALE_REPLICA`, see Retry-After)',
    example: errorExample(503, 'RECALL_BACKEND_UNAVAILABLE', 'Service Unavailable', 'neo4j is unavailable: connection refused'),
    'x-examples': { backend_down: { value: errorExample(503, 'RECALL_BACKEND_UNAVAILABLE', 'Service Unavailable', 'neo4j is unavailable: connection refused') }, stale_replica: { value: staleReplicaExample } } }
}

const modeOf = (request: FastifyRequest): Mode =>
  ((request.body as { mode?: Mode } | undefined)?.mode ?? (request.query as { mode: Mode }).mode)

const retrieveRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { runtime } = app
  const deps = retrievalDeps(app)
  const config = { startup: (request: FastifyRequest) => MODE_STARTUP_STEPS[modeOf(request)], namespaces: namespaceOfRequest }
  const answer = async (r: RetrieveRequest, reply: FastifyReply) => {
    // A caller that hangs up cancels the backend calls still running for it.
    const gone = new AbortController()
    const onClose = () => { if (!reply.raw.writableFinished) gone.abort(new Error('the client closed the connection')) }
    reply.raw.once('close', onClose)
    const { body, cached } = await retrieveCached(deps, checkRequest(r, runtime.config.limits.maxQueryChars), gone.signal)
      .finally(() => reply.raw.off('close', onClose))
    void reply.header('x-cache', cached ? 'hit' : 'miss')
    // A cached answer is already UTF-8 JSON of the response schema; it is sent as it is.
    if (Buffer.isBuffer(body)) return reply.type('application/json; charset=utf-8').send(body)
    return body
  }

  app.get('/retrieve', {
    schema: {
      tags: ['retrieve'],
      summary: 'Retrieve for a question (short form)',
      description: 'Runs exactly one retrieval path, chosen by `mode`. The hybrid options `legs`, `window`, `fusion`, `alpha`, ' +
        '`normalisation` and `rrf_k` may be given here; POST takes every option.',
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
      body: { ...RetrieveBodySchema, 'x-examples': retrieveBodyExamples },
      response: responses
    },
    config
  }, async (request, reply) => answer(fromBody(request.body), reply))
}

export default retrieveRoutes

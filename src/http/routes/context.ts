import type { StartupStep } from '../../kernel/startup-steps.js'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { retrieveAndPack, type ContextDeps } from '../../context/service.js'
import { namespaceOfRequest } from '../plugins/security.js'
import { MODE_STARTUP_STEPS, retrievalDeps } from '../../retrieval.js'
import { contextBodyExamples, contextResponseExamples } from '../../schemas/context-examples.js'
import { ContextBodySchema, ContextResponseSchema, MAX_CONTEXT_TOKENS } from '../../schemas/context.js'
import { errorExample, ErrorSchema, ModelMismatchResponse } from '../../schemas/error.js'
import type { Mode } from '../../schemas/recall-bundle.js'

/** The mode's start-up steps, and the document library for graphrag's evidence chunks. */
const startupOf = (request: FastifyRequest): readonly StartupStep[] => {
  const mode = (request.body as { mode: Mode }).mode
  return mode === 'graphrag' ? [...MODE_STARTUP_STEPS.graphrag, 'documents', 'demo:documents'] : MODE_STARTUP_STEPS[mode]
}

/** The dependencies of `retrieveAndPack` in a built app. */
export function contextDeps(app: Parameters<FastifyPluginAsyncTypebox>[0]): ContextDeps {
  return { retrieval: retrievalDeps(app), documents: app.runtime.corpus.documents, maxQueryChars: app.runtime.config.limits.maxQueryChars }
}

const contextRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const deps = contextDeps(app)
  app.post('/context', {
    schema: {
      tags: ['retrieve'],
      summary: 'A packed context for generation, within a token budget',
      description: 'Runs the retrieval of `POST /retrieve` (the same body: any mode, every option, namespace, filter) and packs ' +
        'its bundle into one `context` string of at most `max_tokens` tokens, counted with `tokenizer`: best items first, each ' +
        'under a citation marker `[n]`, a graphrag item followed by its evidence chunks, each passage once (an item or chunk ' +
        'already packed, or a text already contained, is a `duplicate`; an overlapping window keeps only what is new). The first ' +
        'passage that does not fit whole is cut at a sentence end where it can be; `manifest` says what became of every item. A ' +
        'budget too small for even the first item is a 400 saying how many tokens it needs; a retrieval that finds nothing gives ' +
        'an empty `context`.',
      body: { ...ContextBodySchema, 'x-examples': contextBodyExamples },
      response: {
        200: { ...ContextResponseSchema, description: 'The packed context, its citations and the manifest of every item', 'x-examples': contextResponseExamples },
        400: { ...ErrorSchema, description: `Bad input: what \`/retrieve\` refuses, an unknown \`tokenizer\` or \`format\` (the message lists the allowed ones), \`max_tokens\` outside 1..${MAX_CONTEXT_TOKENS}, or a budget too small for even one item (\`RECALL_CONTEXT_BUDGET_TOO_SMALL\`)`,
          example: errorExample(400, 'RECALL_BAD_REQUEST', 'Bad Request', 'body/tokenizer must be equal to one of the allowed values: o200k_base, cl100k_base, characters') },
        409: ModelMismatchResponse,
        503: { ...ErrorSchema, description: 'Overloaded or starting (see Retry-After), or a backend the mode needs is down; the message names it',
          example: errorExample(503, 'RECALL_BACKEND_UNAVAILABLE', 'Service Unavailable', 'neo4j is unavailable: connection refused') }
      }
    },
    config: { startup: startupOf, namespaces: namespaceOfRequest }
  }, async (request, reply) => {
    const { answer } = await retrieveAndPack(deps, request.body)
    void reply.header('x-cache', answer.cached ? 'hit' : 'miss')
    return answer
  })
}

export default contextRoutes

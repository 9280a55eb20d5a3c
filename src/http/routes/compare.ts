import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyBaseLogger, FastifyError, FastifyInstance } from 'fastify'
import { comparePairs, evidenceList } from '../../comparison.js'
import { Errors } from '../../errors.js'
import { StaleReplicaError } from '../../generations.js'
import { canonicalJson } from '../../providers/cache/index.js'
import { assertStarted } from '../plugins/startup-gate.js'
import type { NamespacesOf } from '../plugins/security.js'
import { DEFAULT_NAMESPACE } from '../../providers/namespace.js'
import { checkQuery, misplacedOptions, MODE_STARTUP_STEPS, retrievalDeps, retrieveCached, withNormalisedFilter, type RetrieveRequest } from '../../retrieval.js'
import { CompareBodySchema, CompareQuerySchema, CompareResponseSchema, type CompareArm, type CompareResponse } from '../../schemas/compare.js'
import { compareBodyExamples, compareResponseExamples } from '../../schemas/examples.js'
import { errorExample, ErrorSchema, ModelMismatchResponse } from '../../schemas/error.js'
import { staleReplicaExample } from '../../schemas/generation.js'
import { MODES, type Mode } from '../../schemas/recall-bundle.js'
import type { RetrieveResponse } from '../../schemas/recall-item.js'

const responses = {
  200: {
    ...CompareResponseSchema,
    description: 'Each arm\'s answer (or its error, in place) and the comparison of every pair of arms that answered. ' +
      'An arm that fails does not fail the others.',
    'x-examples': compareResponseExamples
  },
  400: { ...ErrorSchema, description: 'Bad input: unknown mode, fewer than 2 or more than 3 arms, two identical arms, an option of ' +
    'another mode than its arm\'s, blank or over-long query, top_k out of 1..100',
  example: errorExample(400, 'RECALL_BAD_REQUEST', 'Bad Request', 'body/arms/1: legs apply to mode=hybrid only, not mode=graphrag') },
  409: ModelMismatchResponse,
  503: { ...ErrorSchema, description: 'An arm\'s namespace has not reached `min_generation` on this replica in time (see Retry-After)', example: staleReplicaExample }
}

/** Each arm with its namespace: its own, else the comparison's, else `default`. */
export function armsIn(arms: readonly CompareArm[], namespace: string | undefined, minGeneration?: number): Array<CompareArm & { namespace: string }> {
  return arms.map((arm) => ({
    ...arm, namespace: arm.namespace ?? namespace ?? DEFAULT_NAMESPACE,
    ...(minGeneration !== undefined && arm.min_generation === undefined ? { min_generation: minGeneration } : {})
  }))
}

/** The namespaces a comparison uses: every arm's. */
const comparedNamespaces: NamespacesOf = (request) => {
  const body = request.body as { arms?: CompareArm[]; namespace?: string } | undefined
  const query = request.query as { namespace?: string } | undefined
  if (body?.arms) return [...new Set(armsIn(body.arms, body.namespace).map((a) => a.namespace))]
  return [query?.namespace ?? DEFAULT_NAMESPACE]
}

/** The 400 for arms that are not an A/B: options of another mode, or two arms the same. */
export function checkArms(arms: readonly CompareArm[], where: string): void {
  const problems: string[] = []
  arms.forEach((arm, i) => {
    const misplaced = misplacedOptions(arm)
    if (misplaced) problems.push(`${where}/${i}: ${misplaced}`)
  })
  const seen = new Map<string, number>()
  arms.forEach((arm, i) => {
    const key = canonicalJson(arm)
    const first = seen.get(key)
    if (first === undefined) seen.set(key, i)
    else problems.push(`${where}/${first} and ${where}/${i} are identical (${key}); arms must differ in mode or options`)
  })
  if (problems.length > 0) throw new Errors.badRequest(problems.join('; '))
}

/** `modes=hybrid,episodic` as arms, or the 400 naming what is wrong with it. */
function armsFromModes(modes: string): CompareArm[] {
  const names = modes.split(',').map((m) => m.trim())
  const unknown = names.filter((m) => !MODES.includes(m as Mode))
  if (unknown.length > 0) {
    throw new Errors.badRequest(`querystring/modes: unknown mode ${unknown.map((m) => JSON.stringify(m)).join(', ')}; allowed: ${MODES.join(', ')}`)
  }
  if (names.length < 2 || names.length > 3) {
    throw new Errors.badRequest(`querystring/modes lists ${names.length} mode${names.length === 1 ? '' : 's'}; a comparison takes 2 or 3`)
  }
  return names.map((mode) => ({ mode: mode as Mode }))
}

export type Comparer = (query: string, topK: number, arms: CompareArm[], where: string, log: FastifyBaseLogger) => Promise<CompareResponse>

/** The comparison of a built app (the route's and the MCP `compare` tool's). */
export function comparer(app: FastifyInstance): Comparer {
  const deps = retrievalDeps(app)
  const maxQueryChars = app.runtime.config.limits.maxQueryChars

  /** Each arm is one `/retrieve` request through the same code path (cache, metrics, errors), all concurrently. */
  return async (query, topK, arms, where, log) => {
    const started = performance.now()
    checkQuery(query, maxQueryChars)
    checkArms(arms, where)
    // The query and every arm are checked (each filter normalised) before any runs, so a bad arm fails the
    // whole request; checkArms has already refused options of another mode, so this is what checkRequest
    // would still do.
    const requests = arms.map((arm, i) => withNormalisedFilter({ ...arm, query, top_k: topK } as RetrieveRequest, `${where}/${i}`))
    const answers = await Promise.all(arms.map(async (arm, i) => {
      const request = requests[i]!
      try {
        assertStarted(app.runtime.startup, MODE_STARTUP_STEPS[arm.mode])
        const { body } = await retrieveCached(deps, request)
        // A cache hit comes back as the stored JSON bytes.
        const response = Buffer.isBuffer(body) ? JSON.parse(body.toString('utf8')) as RetrieveResponse : body
        return { arm: i, mode: arm.mode, response, evidence: evidenceList(response.recall_bundle) }
      } catch (error) {
        if (error instanceof StaleReplicaError) throw error
        return { arm: i, mode: arm.mode, error: app.errorAnswer(error as FastifyError, log) }
      }
    }))
    return {
      query,
      top_k: topK,
      arms: answers,
      comparison: comparePairs(answers.map((a) => a.response)),
      took_ms: Math.round((performance.now() - started) * 100) / 100
    }
  }
}

const compareRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const compare = comparer(app)

  app.get('/retrieve/compare', {
    schema: {
      tags: ['retrieve'],
      summary: 'Compare modes on one question (short form)',
      description: 'Runs the question in two or three modes, each with its default options, as independent `/retrieve` ' +
        'requests run concurrently, and compares the answers pair by pair. POST takes per-arm options.',
      querystring: CompareQuerySchema,
      response: responses
    },
    config: { namespaces: comparedNamespaces }
  }, async (request) => compare(request.query.q, request.query.top_k ?? 10, armsIn(armsFromModes(request.query.modes), request.query.namespace, request.query.min_generation),
    'querystring/modes', request.log))

  app.post('/retrieve/compare', {
    schema: {
      tags: ['retrieve'],
      summary: 'Compare modes or options on one question (A/B)',
      description: 'Each arm is a `POST /retrieve` body without `query` and `top_k`: a mode and that mode\'s options, so two ' +
        'arms may share a mode and differ in an option (hybrid with both legs against `legs: ["lexical"]`). The arms run ' +
        'concurrently, each exactly as `/retrieve` runs it (validation, response cache, metrics); an arm that fails shows its ' +
        'error in place and the others still answer. `comparison` relates every pair of arms that answered.',
      body: { ...CompareBodySchema, 'x-examples': compareBodyExamples },
      response: responses
    },
    config: { namespaces: comparedNamespaces }
  }, async (request) => compare(request.body.query, request.body.top_k ?? 10, armsIn(request.body.arms, request.body.namespace, request.body.min_generation), 'body/arms', request.log))
}

export default compareRoutes

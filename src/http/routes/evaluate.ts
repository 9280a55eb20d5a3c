import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { Errors } from '../../errors.js'
import { evaluateArms, type EvaluationRun } from '../../evaluation/evaluate.js'
import { JobLimitError, type Job } from '../../evaluation/jobs.js'
import { JudgedSetError, parseJudgedSet, type JudgedQuestion } from '../../evaluation/judged-set.js'
import type { JudgedItem } from '../../evaluation/metrics.js'
import { assertStarted } from '../plugins/startup-gate.js'
import { DEFAULT_NAMESPACE } from '../../providers/namespace.js'
import { withRetrievalDefaults, structuresOf } from '../../retrieval-defaults.js'
import { checkQuery, MODE_STARTUP_STEPS, retrieve, withNormalisedFilter, type RetrieveRequest } from '../../retrieval.js'
import type { CompareArm } from '../../schemas/compare.js'
import { errorExample, ErrorSchema } from '../../schemas/error.js'
import { EvaluateBodySchema, EvaluationJobSchema, EvaluationReportSchema, type EvaluateBody } from '../../schemas/evaluate.js'
import type { Mode } from '../../schemas/recall-bundle.js'
import { checkArms } from './compare.js'

/** Question × arm runs above which an evaluation always runs as a job. */
const SYNC_MAX_RUNS = 200
const KS = [1, 5, 10]

/** `hybrid fusion=convex alpha=0.6`: the arm's mode, then each option in name order. */
function armLabel(arm: CompareArm): string {
  const { mode, ...options } = arm
  const parts = Object.keys(options).sort().map((k) => {
    const v = (options as Record<string, unknown>)[k]
    return `${k}=${Array.isArray(v) ? v.join(',') : typeof v === 'object' ? JSON.stringify(v) : String(v)}`
  })
  return [mode, ...parts].join(' ')
}

const jobExample = { id: '1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633b', status: 'running', progress: { done: 340, total: 2004 }, created_at: '2026-12-01T09:00:00.000Z', status_url: '/evaluate/jobs/1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633b' }

const evaluateRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { maxQuestions, timeoutSeconds } = app.runtime.config.evaluation
  const maxQueryChars = app.runtime.config.limits.maxQueryChars
  const timeoutMessage = `the evaluation ran longer than ${timeoutSeconds} s (EVAL_TIMEOUT_SECONDS)`
  const jobs = app.runtime.evaluations

  /** Everything checked before anything runs: the set (line and field), its size, the arms, each question. */
  function prepare(body: EvaluateBody): { questions: JudgedQuestion[]; arms: Array<CompareArm & { namespace: string }>; topK: number; ks: number[] } {
    let questions: JudgedQuestion[]
    try {
      questions = parseJudgedSet(body.judged_set)
    } catch (error) {
      if (error instanceof JudgedSetError) throw new Errors.badRequest(`body/judged_set ${error.message}`)
      throw error
    }
    if (questions.length === 0) throw new Errors.badRequest('body/judged_set holds no question')
    if (questions.length > maxQuestions) {
      throw new Errors.evaluationTooLarge(`body/judged_set holds ${questions.length} questions; the limit is ${maxQuestions} (EVAL_MAX_QUESTIONS)`)
    }
    for (const q of questions) {
      try {
        checkQuery(q.query, maxQueryChars)
      } catch (error) {
        throw new Errors.badRequest(`body/judged_set line ${q.line}: query ${(error as Error).message}`)
      }
    }
    checkArms(body.arms, 'body/arms')
    const ks = [...(body.ks ?? KS)].sort((a, b) => a - b)
    const topK = body.top_k ?? Math.max(10, ...ks)
    if (topK < ks[ks.length - 1]!) throw new Errors.badRequest(`body/top_k is ${topK}, below the largest of body/ks (${ks[ks.length - 1]})`)
    const arms = body.arms.map((arm) => ({ ...arm, namespace: arm.namespace ?? body.namespace ?? DEFAULT_NAMESPACE }))
    arms.forEach((arm, i) => withNormalisedFilter({ ...arm, query: 'x', top_k: topK } as RetrieveRequest, `body/arms/${i}`))
    return { questions, arms, topK, ks }
  }

  async function run(body: EvaluateBody, prepared: ReturnType<typeof prepare>, signal: AbortSignal, progress?: (done: number) => void): Promise<EvaluationRun> {
    const started = performance.now()
    const { questions, arms, topK, ks } = prepared
    // past the response cache means past its version read too: over shared stores, bring each hybrid arm's
    // catalog up to the writes other replicas made before the run starts (docs/scale-out-state.md)
    for (const namespace of new Set(arms.filter((a) => a.mode === 'hybrid').map((a) => a.namespace))) {
      await app.runtime.corpus.catchUp(namespace)
    }
    const report = await evaluateArms(questions, body.arms.map(armLabel), async (i, q) => {
      const arm = arms[i]!
      assertStarted(app.runtime.startup, MODE_STARTUP_STEPS[arm.mode as Mode])
      const asked = withNormalisedFilter({ ...arm, query: q.query, top_k: topK } as RetrieveRequest, `body/arms/${i}`)
      // Straight to the mode, past the response cache, so that a second run measures retrieval again.
      const defaults = await app.runtime.retrievalDefaults.get(arm.namespace)
      const r = arm.mode === 'hybrid' ? withRetrievalDefaults(asked, defaults) : asked
      const structures = structuresOf(r as { mode: string; legs?: readonly string[] }, defaults)
      const t0 = performance.now()
      const response = await retrieve(app.runtime.modes, r, undefined, structures ? { structures } : {})
      return { items: response.recall_bundle as JudgedItem[], took_ms: Math.round((performance.now() - t0) * 100) / 100 }
    }, {
      ks, resamples: body.resamples ?? 1000, seed: body.seed ?? 42, signal,
      ...(progress ? { onProgress: (done: number) => progress(done) } : {})
    })
    return { namespace: body.namespace ?? DEFAULT_NAMESPACE, top_k: topK, ...report, took_ms: Math.round(performance.now() - started) }
  }

  const jobView = (job: Job<EvaluationRun>) => ({ ...job, status_url: `/evaluate/jobs/${job.id}` })
  const namespacesOf = (request: { body: unknown }) => {
    const body = request.body as { arms?: CompareArm[]; namespace?: string } | undefined
    return [...new Set((body?.arms ?? []).map((a) => a.namespace ?? body?.namespace ?? DEFAULT_NAMESPACE))]
  }

  app.post('/evaluate', {
    schema: {
      tags: ['evaluate'],
      summary: 'Score modes or option sets on a judged question set',
      description: 'Runs every question of a judged set (JSONL) through every arm and answers, per arm, Recall@k, MRR@10 and ' +
        'nDCG@10 with 95% bootstrap intervals (seeded: the same set and seed give the same intervals), the paired difference ' +
        'of every pair of arms with its interval, latency percentiles, and per question the rank of the first relevant item in ' +
        `each arm. Up to ${SYNC_MAX_RUNS} question × arm runs answer at once (200) and stop when the client goes away; larger ` +
        'sets (or `async: true`) run as a job (202): poll `GET /evaluate/jobs/{id}`, cancel with `DELETE`. At most ' +
        'EVAL_MAX_QUESTIONS questions (default 5000, else 413) and EVAL_TIMEOUT_SECONDS (default 1800) of running.',
      body: EvaluateBodySchema,
      response: {
        200: { ...EvaluationReportSchema, description: 'The evaluation (small sets).' },
        202: { ...EvaluationJobSchema, description: 'The evaluation runs as a job; poll `status_url`.', example: jobExample },
        400: { ...ErrorSchema, description: 'A malformed line of the judged set (its line and field), bad arms, top_k below ks', example: errorExample(400, 'RECALL_BAD_REQUEST', 'Bad Request', 'body/judged_set judged set line 7: relevant.doc_ids must be a list of non-empty strings') },
        413: { ...ErrorSchema, description: 'More questions than EVAL_MAX_QUESTIONS, or a body over BODY_LIMIT_BYTES', example: errorExample(413, 'RECALL_EVALUATION_TOO_LARGE', 'Payload Too Large', 'body/judged_set holds 6000 questions; the limit is 5000 (EVAL_MAX_QUESTIONS)') },
        503: { ...ErrorSchema, description: 'Two evaluation jobs are already running', example: errorExample(503, 'RECALL_EVALUATION_BUSY', 'Service Unavailable', '2 evaluations are running; at most 2 run at once') },
        504: { ...ErrorSchema, description: 'A small evaluation ran past EVAL_TIMEOUT_SECONDS', example: errorExample(504, 'RECALL_EVALUATION_TIMEOUT', 'Gateway Timeout', 'the evaluation ran longer than 1800 s (EVAL_TIMEOUT_SECONDS)') }
      }
    },
    config: { namespaces: namespacesOf }
  }, async (request, reply) => {
    const prepared = prepare(request.body)
    const runs = prepared.questions.length * prepared.arms.length
    if (request.body.async === true || runs > SYNC_MAX_RUNS) {
      try {
        const job = jobs.start(runs, (signal, progress) => run(request.body, prepared, signal, progress), timeoutMessage)
        return reply.code(202).header('location', `/evaluate/jobs/${job.id}`).send(jobView(job))
      } catch (error) {
        if (error instanceof JobLimitError) throw new Errors.evaluationBusy(error.message)
        throw error
      }
    }
    const controller = new AbortController()
    const gone = () => { if (!reply.raw.writableFinished) controller.abort('the client closed the request') }
    reply.raw.on('close', gone)
    const deadline = setTimeout(() => controller.abort(timeoutMessage), timeoutSeconds * 1000)
    try {
      return await run(request.body, prepared, controller.signal)
    } catch (error) {
      if (controller.signal.reason === timeoutMessage) throw new Errors.evaluationTimeout(timeoutMessage)
      throw error
    } finally {
      clearTimeout(deadline)
      reply.raw.off('close', gone)
    }
  })

  const JobParams = Type.Object({ id: Type.String({ maxLength: 64, description: 'The job\'s id.' }) })
  const badJobId = { ...ErrorSchema, description: 'Not a job id (the message names the rule and the value)', example: errorExample(400, 'RECALL_BAD_REQUEST', 'Bad Request', 'params/id must NOT have more than 64 characters (got "0000…" (65 characters))') }
  const boardDown = { ...ErrorSchema, description: 'The job is not this replica\'s and Redis, where replicas share jobs, did not answer', example: errorExample(503, 'RECALL_BACKEND_UNAVAILABLE', 'Service Unavailable', 'evaluation-jobs:redis is unavailable: cannot read the shared evaluation jobs: Connection is closed.') }
  const notFound = { ...ErrorSchema, description: 'No such job (or it ended over an hour ago, or it ran in another replica and there is no REDIS_URL)', example: errorExample(404, 'RECALL_NOT_FOUND', 'Not Found', 'no evaluation job "1b4e28ba"') }

  app.get('/evaluate/jobs/:id', {
    schema: {
      tags: ['evaluate'],
      summary: 'An evaluation job\'s status, progress and, when done, its result',
      params: JobParams,
      response: { 200: { ...EvaluationJobSchema, example: jobExample }, 400: badJobId, 404: notFound, 503: boardDown }
    }
  }, async (request) => {
    const job = await jobs.get(request.params.id)
    if (!job) throw new Errors.notFound(`no evaluation job "${request.params.id}"`)
    return jobView(job)
  })

  app.delete('/evaluate/jobs/:id', {
    schema: {
      tags: ['evaluate'],
      summary: 'Cancel an evaluation job',
      description: 'A running job stops before its next question × arm run; the job stays readable as `cancelled`.',
      params: JobParams,
      response: { 200: { ...EvaluationJobSchema, example: { ...jobExample, status: 'cancelled', error: 'cancelled by DELETE' } }, 400: badJobId, 404: notFound, 503: boardDown }
    }
  }, async (request) => {
    const { id } = request.params
    if (!await jobs.cancel(id)) throw new Errors.notFound(`no evaluation job "${id}"`)
    // The abort is seen before the next run; the job's status follows when its current run returns (in another
    // replica, when it next looks at the board: wait a little for it).
    let job = await jobs.get(id)
    for (let waited = 0; job?.status === 'running' && waited < 1_000; waited += 50) {
      await new Promise((resolve) => setTimeout(resolve, waited === 0 ? 0 : 50))
      job = await jobs.get(id)
    }
    if (!job) throw new Errors.notFound(`no evaluation job "${id}"`)
    return jobView(job)
  })
}

export default evaluateRoutes

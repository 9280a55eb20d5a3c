import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import fp from 'fastify-plugin'
import { Type } from 'typebox'
import { Errors } from '../../errors.js'
import type { IngestJobView } from '../../corpus/ingest-jobs.js'
import { errorExample, ErrorSchema } from '../../schemas/error.js'
import { IngestJobSchema, type IngestJob } from '../../schemas/ingest.js'

export const jobUrl = (id: string) => `/ingest/jobs/${id}`
export const jobAnswer = (view: IngestJobView): IngestJob => ({ ...view, status_url: jobUrl(view.id) })

export const jobExample = {
  id: '5f0c6a8e-1d2b-4c3d-9e8f-0a1b2c3d4e5f', namespace: 'default', state: 'running', cancel_requested: false, created_at: '2026-12-02T05:00:00.000Z',
  documents: { done: 40, total: 136 }, chunks: { done: 412, total: 1040 }, rate: { documents_per_second: 2.1, chunks_per_second: 21.7 },
  eta_seconds: 28.9, in_flight: { ids: ['guide/computed', 'guide/watchers'], chunks: { done: 32, total: 58 } }, errors: [], took_ms: 19012.4,
  status_url: '/ingest/jobs/5f0c6a8e-1d2b-4c3d-9e8f-0a1b2c3d4e5f'
}

/**
 * The routes of this process's ingest jobs (`runtime.ingestJobs`): `GET /ingest/jobs/{id}` (progress, rate, ETA, at the
 * end the answer with its generation) and `DELETE /ingest/jobs/{id}` (cancel between batches). Each job writes through
 * the write path one batch at a time, and is logged and counted once, when it ends.
 */
const ingestJobRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const jobs = app.runtime.ingestJobs

  const JobParams = Type.Object({ id: Type.String({ maxLength: 64, description: 'The job\'s id.' }) })
  const notFound = {
    ...ErrorSchema,
    description: 'No such job in this process: it ended over an hour ago, the process restarted since (jobs are kept in memory), or another replica runs it',
    example: errorExample(404, 'RECALL_NOT_FOUND', 'Not Found', 'no ingest job "5f0c6a8e" in this process (jobs live in the process that answered their 202, until an hour after they end)')
  }
  const badJobId = {
    ...ErrorSchema,
    description: 'Not a job id (the message names the rule and the value)',
    example: errorExample(400, 'RECALL_BAD_REQUEST', 'Bad Request', 'params/id must NOT have more than 64 characters (got "0000…" (65 characters))')
  }
  const find = (id: string, mayUse: (namespace: string) => boolean) => {
    const job = jobs.get(id)
    // a key scoped to other namespaces learns nothing of the job
    if (!job || !mayUse(job.namespace)) {
      throw new Errors.notFound(`no ingest job "${id}" in this process (jobs live in the process that answered their 202, until an hour after they end)`)
    }
    return job
  }

  app.get('/ingest/jobs/:id', {
    schema: {
      tags: ['ingest'],
      summary: 'An ingest job\'s progress, rate, ETA and, once ended, its answer',
      params: JobParams,
      response: { 200: { ...IngestJobSchema, example: jobExample }, 400: badJobId, 404: notFound }
    }
  }, async (request) => jobAnswer(find(request.params.id, (ns) => request.mayUseNamespace(ns))))

  app.delete('/ingest/jobs/:id', {
    schema: {
      tags: ['ingest'],
      summary: 'Cancel an ingest job',
      description: 'The batch in flight is still written, whole; no later batch starts. Every document of the body is then either ' +
        'wholly written (the first `documents.done`) or not written at all; sending the body again writes the rest and skips ' +
        'the unchanged. Answers the job at once (`cancel_requested`), `state` becomes `cancelled` when its batch in flight has landed.',
      params: JobParams,
      response: { 200: { ...IngestJobSchema, example: { ...jobExample, cancel_requested: true } }, 400: badJobId, 404: notFound }
    }
  }, async (request) => {
    find(request.params.id, (ns) => request.mayUseNamespace(ns))
    return jobAnswer(jobs.cancel(request.params.id)!)
  })
}

export default fp(ingestJobRoutes, { name: 'recall-ingest-jobs', fastify: '5.x' })

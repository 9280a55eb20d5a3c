import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/build.js'
import { sharedRedisEnv, useTwoReplicas } from '../helpers/two-replicas.js'

// An evaluation job runs in the replica that accepted it; with Redis every replica reads its state and can cancel it.
describe('evaluation jobs across two replicas sharing Redis', () => {
  let a: TestApp
  let b: TestApp
  useTwoReplicas(sharedRedisEnv(), (pair) => ({ a, b } = pair))
  beforeAll(async () => {
    const r = await a.app.inject({
      method: 'POST', url: '/ingest/documents',
      payload: { documents: [{ id: 'guide-cough', text: '# 咳嗽诊疗指引\n\n咳嗽持续三周以上属于慢性咳嗽，应当进行胸部X线检查。' }] }
    })
    expect(r.statusCode, r.body).toBe(200)
  })

  const judgedSet = (n: number) => Array.from({ length: n }, (_, i) => JSON.stringify({ query: `咳嗽 ${i}`, relevant: { doc_ids: ['guide-cough'] } })).join('\n')
  type JobView = { id: string; status: string; progress: { done: number; total: number }; error?: string; result?: { questions: number } }
  const poll = async (app: TestApp, id: string, until: (j: JobView) => boolean) => {
    let job: JobView | undefined
    for (let i = 0; i < 400; i++) {
      const r = await app.app.inject({ method: 'GET', url: `/evaluate/jobs/${id}` })
      expect(r.statusCode, r.body).toBe(200)
      job = r.json() as JobView
      if (until(job)) return job
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
    throw new Error(`job ${id} never reached the state: last ${JSON.stringify(job)}`)
  }

  it('B reads the progress and the result of a job that A runs', async () => {
    const started = await a.app.inject({ method: 'POST', url: '/evaluate', payload: { judged_set: judgedSet(5), arms: [{ mode: 'hybrid' }], resamples: 100, async: true } })
    expect(started.statusCode, started.body).toBe(202)
    const { id } = started.json() as JobView
    const seen = await poll(b, id, (j) => j.status === 'done')
    const onA = (await a.app.inject({ method: 'GET', url: `/evaluate/jobs/${id}` })).json() as JobView
    expect(seen).toEqual(onA)
    expect(seen.progress).toEqual({ done: 5, total: 5 })
    expect(seen.result?.questions).toBe(5)
  })

  it('B cancels a job that A runs, and both then read it cancelled', async () => {
    const started = await a.app.inject({ method: 'POST', url: '/evaluate', payload: { judged_set: judgedSet(250), arms: [{ mode: 'hybrid' }], resamples: 100 } })
    expect(started.statusCode, started.body).toBe(202)
    const { id } = started.json() as JobView
    const cancelled = await b.app.inject({ method: 'DELETE', url: `/evaluate/jobs/${id}` })
    expect(cancelled.statusCode, cancelled.body).toBe(200)
    const onB = await poll(b, id, (j) => j.status !== 'running')
    expect(onB.status).toBe('cancelled')
    expect(onB.error).toBe('cancelled by DELETE')
    expect(onB.progress.done).toBeLessThan(250)
    const onA = await poll(a, id, (j) => j.status !== 'running')
    expect(onA.status).toBe('cancelled')
  })

  it('a job no replica published is 404 on both', async () => {
    for (const t of [a, b]) {
      const r = await t.app.inject({ method: 'GET', url: '/evaluate/jobs/00000000-0000-4000-8000-000000000000' })
      expect(r.statusCode).toBe(404)
      expect((await t.app.inject({ method: 'DELETE', url: '/evaluate/jobs/00000000-0000-4000-8000-000000000000' })).statusCode).toBe(404)
    }
  })
})

describe('evaluation jobs when the shared Redis is down', () => {
  let t: TestApp
  beforeAll(async () => {
    // port 1 refuses at once: the app starts (the cache answers uncached), the board cannot be read
    t = await buildTestApp({ REDIS_URL: 'redis://127.0.0.1:1', REDIS_COMMAND_TIMEOUT_MS: '200' })
  })
  afterAll(async () => t?.close())

  it('a job that is not this replica\'s answers 503 naming the board, not a 404 that may be wrong', async () => {
    const r = await t.app.inject({ method: 'GET', url: '/evaluate/jobs/00000000-0000-4000-8000-000000000000' })
    expect(r.statusCode, r.body).toBe(503)
    expect(r.json()).toMatchObject({ code: 'RECALL_BACKEND_UNAVAILABLE' })
    expect(r.json().message).toMatch(/^evaluation-jobs:redis is unavailable: cannot read the shared evaluation jobs/)
  })
})

import Fastify, { type FastifyInstance } from 'fastify'
import { afterEach, describe, expect, it } from 'vitest'
import metrics, { type MetricsOptions } from '../../../src/http/plugins/metrics.js'
import type { EmbeddingBacklog } from '../../../src/providers/embedder/port.js'
import { TaskQueue } from '../../../src/providers/embedded/task-queue.js'

const apps: FastifyInstance[] = []
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close()
})

async function build(options: MetricsOptions = {}): Promise<FastifyInstance> {
  const app = Fastify()
  apps.push(app)
  await app.register(metrics, options)
  const modeEnum = { type: 'string', enum: ['hybrid', 'graphrag', 'episodic'] }
  app.get('/retrieve', { schema: { querystring: { type: 'object', required: ['mode'], properties: { mode: modeEnum } } } }, async () => ({ ok: true }))
  app.post('/retrieve', { schema: { body: { type: 'object', required: ['mode'], properties: { mode: modeEnum } } } }, async () => ({ ok: true }))
  app.get('/slow', async () => {
    await new Promise((resolve) => setTimeout(resolve, 120))
    return { ok: true }
  })
  await app.ready()
  return app
}

/** The value of the one sample named `name` whose labels are exactly `labels` (in any order). */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`).sort().join(',')
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (match === null || match[1] !== name) continue
    const got = (match[2] ?? '').split(/,(?=[a-zA-Z_]\w*=")/).filter((s) => s !== '').sort().join(',')
    if (got === wanted) return Number(match[3])
  }
  return undefined
}

async function scrape(app: FastifyInstance): Promise<string> {
  const response = await app.inject({ method: 'GET', url: '/metrics' })
  expect(response.statusCode).toBe(200)
  return response.body
}

describe('metrics plugin', () => {
  it('serves the Prometheus text format with every recall metric described', async () => {
    const app = await build()
    const response = await app.inject({ method: 'GET', url: '/metrics' })
    expect(response.statusCode).toBe(200)
    expect(response.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/)
    for (const name of ['recall_request_duration_seconds', 'recall_leg_duration_seconds', 'recall_cache_requests_total', 'recall_backend_errors_total']) {
      expect(response.body).toContain(`# HELP ${name} `)
    }
    expect(response.body).toContain('# TYPE recall_request_duration_seconds histogram')
    expect(response.body).toContain('# TYPE recall_cache_requests_total counter')
    expect(response.body).toMatch(/^process_cpu_user_seconds_total \d/m)
  })

  it('records each request by route pattern, validated mode and status', async () => {
    const app = await build()
    await app.inject({ method: 'GET', url: '/retrieve?mode=hybrid' })
    await app.inject({ method: 'GET', url: '/retrieve?mode=hybrid' })
    await app.inject({ method: 'POST', url: '/retrieve', payload: { mode: 'graphrag' } })
    await app.inject({ method: 'GET', url: '/retrieve?mode=bogus' })
    await app.inject({ method: 'GET', url: '/no/such/path/123' })
    const text = await scrape(app)
    const count = (labels: Record<string, string>): number | undefined => sample(text, 'recall_request_duration_seconds_count', labels)
    expect(count({ route: '/retrieve', mode: 'hybrid', status: '200' })).toBe(2)
    expect(count({ route: '/retrieve', mode: 'graphrag', status: '200' })).toBe(1)
    expect(count({ route: '/retrieve', mode: 'none', status: '400' })).toBe(1)
    expect(count({ route: 'unmatched', mode: 'none', status: '404' })).toBe(1)
    expect(text).not.toContain('/no/such/path')
  })

  it('records a request of at least 120 ms in seconds: above the 0.1 s bucket, counted in +Inf', async () => {
    const app = await build()
    const started = performance.now()
    await app.inject({ method: 'GET', url: '/slow' })
    const elapsedS = (performance.now() - started) / 1000
    const text = await scrape(app)
    const labels = { route: '/slow', mode: 'none', status: '200' }
    expect(sample(text, 'recall_request_duration_seconds_bucket', { ...labels, le: '0.1' })).toBe(0)
    expect(sample(text, 'recall_request_duration_seconds_bucket', { ...labels, le: '+Inf' })).toBe(1)
    const sum = sample(text, 'recall_request_duration_seconds_sum', labels)
    expect(sum).toBeGreaterThanOrEqual(0.119)
    expect(sum).toBeLessThanOrEqual(elapsedS) // seconds, not milliseconds
  })

  it('observeLegs records each leg in seconds under mode, leg and status', async () => {
    const app = await build()
    app.metrics.observeLegs('hybrid', [
      { name: 'vector', status: 'ok', took_ms: 3 },
      { name: 'lexical', status: 'timeout', took_ms: 250 }
    ])
    app.metrics.observeLegs('hybrid', [{ name: 'vector', status: 'ok', took_ms: 40 }])
    const text = await scrape(app)
    const vector = { mode: 'hybrid', leg: 'vector', status: 'ok' }
    const lexical = { mode: 'hybrid', leg: 'lexical', status: 'timeout' }
    expect(sample(text, 'recall_leg_duration_seconds_count', vector)).toBe(2)
    expect(sample(text, 'recall_leg_duration_seconds_sum', vector)).toBeCloseTo(0.043, 9)
    expect(sample(text, 'recall_leg_duration_seconds_bucket', { ...vector, le: '0.005' })).toBe(1)
    expect(sample(text, 'recall_leg_duration_seconds_bucket', { ...vector, le: '0.05' })).toBe(2)
    expect(sample(text, 'recall_leg_duration_seconds_bucket', { ...lexical, le: '0.1' })).toBe(0)
    expect(sample(text, 'recall_leg_duration_seconds_bucket', { ...lexical, le: '0.25' })).toBe(1)
  })

  it('cacheResult counts hits and misses per kind, starting from explicit zeros', async () => {
    const app = await build()
    const before = await scrape(app)
    for (const kind of ['embedding', 'response']) {
      for (const result of ['hit', 'miss']) expect(sample(before, 'recall_cache_requests_total', { kind, result })).toBe(0)
    }
    app.metrics.cacheResult('embedding', true)
    app.metrics.cacheResult('embedding', true)
    app.metrics.cacheResult('embedding', false)
    app.metrics.cacheResult('response', false)
    const after = await scrape(app)
    expect(sample(after, 'recall_cache_requests_total', { kind: 'embedding', result: 'hit' })).toBe(2)
    expect(sample(after, 'recall_cache_requests_total', { kind: 'embedding', result: 'miss' })).toBe(1)
    expect(sample(after, 'recall_cache_requests_total', { kind: 'response', result: 'hit' })).toBe(0)
    expect(sample(after, 'recall_cache_requests_total', { kind: 'response', result: 'miss' })).toBe(1)
  })

  it('backendError counts per backend', async () => {
    const app = await build()
    app.metrics.backendError('qdrant')
    app.metrics.backendError('qdrant')
    app.metrics.backendError('neo4j')
    const text = await scrape(app)
    expect(sample(text, 'recall_backend_errors_total', { backend: 'qdrant' })).toBe(2)
    expect(sample(text, 'recall_backend_errors_total', { backend: 'neo4j' })).toBe(1)
  })

  it('serves the embedder\'s one queue at each scrape: 0 while its source answers none, then its runs waiting and the oldest wait', async () => {
    let backlog: EmbeddingBacklog | undefined
    const app = await build({ gauges: { embeddingQueue: () => backlog } })
    let text = await scrape(app)
    expect(sample(text, 'recall_embedding_queued_runs', {})).toBe(0)
    expect(sample(text, 'recall_embedding_oldest_wait_seconds', {})).toBe(0)
    backlog = { queued: 7, oldestWaitMs: 250, expectedWaitMs: 40 }
    text = await scrape(app)
    expect(sample(text, 'recall_embedding_queued_runs', {})).toBe(7)
    expect(sample(text, 'recall_embedding_oldest_wait_seconds', {})).toBe(0.25)
    backlog = { queued: 0, oldestWaitMs: 0, expectedWaitMs: 0 }
    expect(sample(await scrape(app), 'recall_embedding_queued_runs', {})).toBe(0)
  })

  it('serves what embedded stores\' tasks waited behind compaction steps, by store, read at each scrape', async () => {
    const app = await build({})
    const queue = new TaskQueue('metrics-test')
    const before = sample(await scrape(app), 'recall_compaction_wait_seconds_sum', {}) ?? 0
    let open!: () => void
    const step = queue.runCompaction(() => new Promise<void>((resolve) => (open = resolve)))
    const waited = queue.run(async () => undefined)
    await new Promise((resolve) => setTimeout(resolve, 60))
    open()
    await Promise.all([step, waited])
    const text = await scrape(app)
    expect(sample(text, 'recall_compaction_wait_seconds_max', { store: 'metrics-test' })).toBeGreaterThanOrEqual(0.05)
    expect(sample(text, 'recall_compaction_wait_seconds_sum', {})! - before).toBeGreaterThanOrEqual(0.05)
  })

  it('two apps in one process keep separate registries', async () => {
    const a = await build({ defaultMetrics: false })
    const b = await build({ defaultMetrics: false })
    a.metrics.backendError('redis')
    expect(sample(await scrape(a), 'recall_backend_errors_total', { backend: 'redis' })).toBe(1)
    expect(sample(await scrape(b), 'recall_backend_errors_total', { backend: 'redis' })).toBeUndefined()
    expect(await scrape(b)).not.toMatch(/^process_cpu_user_seconds_total/m)
  })
})

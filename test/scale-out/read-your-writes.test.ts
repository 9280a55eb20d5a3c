import { randomBytes } from 'node:crypto'
import { Redis } from 'ioredis'
import { describe, expect, inject, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/build.js'
import { sharedRedisEnv, useTwoReplicas } from '../helpers/two-replicas.js'

// Two replicas (app instances) sharing the run's real Redis, where generations live; a short bound on the wait.
const WAIT_MS = 400
const env = { ...sharedRedisEnv(), REPLICAS: '2', MIN_GENERATION_WAIT_MS: String(WAIT_MS) }
const namespace = `ryw-${randomBytes(4).toString('hex')}`

let a: TestApp
let b: TestApp
useTwoReplicas(env, (pair) => ({ a, b } = pair))

const post = async (t: TestApp, url: string, payload: object) => {
  const r = await t.app.inject({ method: 'POST', url, payload })
  expect(r.statusCode, r.body).toBe(200)
  return r.json()
}
const doc = (id: string, text: string) => ({ namespace, documents: [{ id, text }] })

describe('read-your-writes across replicas', () => {
  it('every write answers a generation above the one before, whichever replica and kind of write', async () => {
    const g1 = (await post(a, '/ingest/documents', doc('d1', '# 一\n\n第一份文档。'))).generation
    const g2 = (await post(b, '/ingest/graph', { namespace, entities: [{ id: 'e1', name: '张三' }] })).generation
    const g3 = (await post(a, '/ingest/episodes', { namespace, episodes: [{ id: 'E1', name: '值班调整', summary: '夜间告警改由二线处理' }] })).generation
    const g4 = (await b.app.inject({ method: 'DELETE', url: `/entities/e1?namespace=${namespace}` })).json().generation
    for (const g of [g1, g2, g3, g4]) expect(Number.isSafeInteger(g)).toBe(true)
    expect(g2).toBeGreaterThan(g1)
    expect(g3).toBeGreaterThan(g2)
    expect(g4).toBeGreaterThan(g3)
  })

  it('a read naming the generation of a write through A is answered by B, which says it read at least that generation', async () => {
    const { generation } = await post(a, '/ingest/documents', doc('d2', '# 二\n\n第二份文档。'))
    const r = await b.app.inject({ method: 'GET', url: `/retrieve?mode=graphrag&q=${encodeURIComponent('张三')}&namespace=${namespace}&min_generation=${generation}` })
    expect(r.statusCode, r.body).toBe(200)
    expect(r.json().generation).toBeGreaterThanOrEqual(generation)
    const list = await b.app.inject({ method: 'GET', url: `/documents?namespace=${namespace}&min_generation=${generation}` })
    expect(list.statusCode, list.body).toBe(200)
    expect(list.json().generation).toBeGreaterThanOrEqual(generation)
    const compare = await b.app.inject({ method: 'POST', url: '/retrieve/compare', payload: { query: '张三', namespace, min_generation: generation, arms: [{ mode: 'graphrag' }, { mode: 'episodic' }] } })
    expect(compare.statusCode, compare.body).toBe(200)
    for (const arm of compare.json().arms) expect(arm.response.generation).toBeGreaterThanOrEqual(generation)
  })

  it('a cached answer says the current generation, not the one it was computed at', async () => {
    const ask = () => b.app.inject({ method: 'POST', url: '/retrieve', payload: { mode: 'graphrag', query: '谁是李四', namespace } })
    await ask()
    const hit = await ask()
    expect(hit.json().cached).toBe(true)
    // a write of another kind: the graphrag answer stays valid and cached, at the newer generation
    const { generation } = await post(a, '/ingest/documents', doc('d3', '# 三\n\n第三份文档。'))
    const again = await ask()
    expect(again.json().cached).toBe(true)
    expect(again.json().generation).toBe(generation)
  })

  it('a generation no replica has reached: 503 RECALL_STALE_REPLICA with Retry-After after the bound, on every read route', async () => {
    const { generation } = await post(a, '/ingest/documents', doc('d4', '# 四\n\n第四份文档。'))
    const future = generation + 1_000
    const reads = [
      { method: 'GET' as const, url: `/retrieve?mode=hybrid&q=x&namespace=${namespace}&min_generation=${future}` },
      { method: 'POST' as const, url: '/retrieve', payload: { mode: 'episodic', query: 'x', namespace, min_generation: future } },
      { method: 'GET' as const, url: `/documents?namespace=${namespace}&min_generation=${future}` },
      { method: 'GET' as const, url: `/retrieve/compare?q=x&modes=hybrid,graphrag&namespace=${namespace}&min_generation=${future}` }
    ]
    for (const read of reads) {
      const started = performance.now()
      const r = await b.app.inject(read)
      const waited = performance.now() - started
      expect(r.statusCode, `${read.url}: ${r.body}`).toBe(503)
      expect(r.json().code).toBe('RECALL_STALE_REPLICA')
      expect(r.json().message).toContain(`min_generation ${future} of namespace "${namespace}"`)
      expect(r.headers['retry-after']).toBe('1')
      expect(waited).toBeGreaterThanOrEqual(WAIT_MS)
    }
  })

  it('a read waiting for a generation is answered as soon as a write reaches it', async () => {
    const { generation } = await post(a, '/ingest/documents', doc('d5', '# 五\n\n第五份文档。'))
    const waiting = b.app.inject({ method: 'GET', url: `/documents?namespace=${namespace}&min_generation=${generation + 1}` })
    await new Promise((resolve) => setTimeout(resolve, 100))
    await post(a, '/ingest/documents', doc('d6', '# 六\n\n第六份文档。'))
    const r = await waiting
    expect(r.statusCode, r.body).toBe(200)
    expect(r.json().generation).toBeGreaterThanOrEqual(generation + 1)
  })

  it('generations keep growing when the shared counter is lost (its Redis key deleted)', async () => {
    const before = (await post(a, '/ingest/documents', doc('d7', '# 七\n\n第七份文档。'))).generation
    const raw = new Redis(inject('redisUrl'))
    try {
      expect(await raw.del(`recall:generations:${namespace}`)).toBe(1)
    } finally {
      await raw.quit()
    }
    const after = (await post(b, '/ingest/documents', doc('d8', '# 八\n\n第八份文档。'))).generation
    expect(after).toBeGreaterThan(before)
  })

  it.each([
    ['/retrieve?mode=hybrid&q=x&min_generation=-1', 'querystring/min_generation must be >= 0 (got -1)'],
    ['/retrieve?mode=hybrid&q=x&min_generation=soon', 'querystring/min_generation must be integer (got "soon")'],
    ['/documents?min_generation=1.5', 'querystring/min_generation must be integer (got "1.5")']
  ])('bad min_generation %s: 400 naming the field and the value', async (url, message) => {
    const r = await b.app.inject({ method: 'GET', url })
    expect(r.statusCode).toBe(400)
    expect(r.json()).toMatchObject({ statusCode: 400, code: 'RECALL_BAD_REQUEST', message })
  })
})

describe('one process without Redis', () => {
  it('answers generations from its own counter and honours min_generation against it', async () => {
    const t = await buildTestApp({ MIN_GENERATION_WAIT_MS: '100' })
    try {
      const { generation } = await post(t, '/ingest/documents', { documents: [{ id: 'x', text: '# x\n\n内容。' }] })
      const ok = await t.app.inject({ method: 'GET', url: `/documents?min_generation=${generation}` })
      expect(ok.json()).toMatchObject({ total: 1, generation })
      const stale = await t.app.inject({ method: 'GET', url: `/documents?min_generation=${generation + 1}` })
      expect(stale.statusCode).toBe(503)
      expect(stale.json().code).toBe('RECALL_STALE_REPLICA')
    } finally {
      await t.close()
    }
  })

  it('with REPLICAS above 1 and no Redis, refuses min_generation rather than answer from its own counter', async () => {
    const t = await buildTestApp({ REPLICAS: '2' })
    try {
      const r = await t.app.inject({ method: 'GET', url: '/documents?min_generation=1' })
      expect(r.statusCode).toBe(503)
      expect(r.json()).toMatchObject({ code: 'RECALL_STALE_REPLICA', message: 'stale_replica: min_generation needs generations shared by the replicas; REPLICAS=2 needs REDIS_URL' })
    } finally {
      await t.close()
    }
  })
})

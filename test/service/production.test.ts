import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startRedis, type RedisServer } from '../helpers/redis-server.js'
import { buildTestApp, type TestApp } from '../helpers/build.js'

const docs = [
  { id: 'a', text: '# 咳嗽\n\n慢性咳嗽需要胸部影像检查。' },
  { id: 'b', text: '# 报销\n\n一线城市住宿每晚不超过600元。' },
  { id: 'c', text: '# 流式\n\nAPI 流式返回改造。' }
]

describe('response cache, request ids and metrics on the embedded default', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await buildTestApp()
    await t.app.inject({ method: 'POST', url: '/ingest/documents', payload: { documents: docs } })
  })
  afterAll(async () => t.close())

  it('answers a repeated request from the cache, and an ingest invalidates it', async () => {
    const url = `/retrieve?mode=hybrid&q=${encodeURIComponent('咳嗽检查')}`
    const first = await t.app.inject({ method: 'GET', url })
    expect(first.json().cached).toBe(false)
    expect(first.headers['x-cache']).toBe('miss')
    const second = await t.app.inject({ method: 'GET', url })
    expect(second.json().cached).toBe(true)
    expect(second.headers['x-cache']).toBe('hit')
    expect(second.json().recall_bundle).toEqual(first.json().recall_bundle)
    // The same request by POST is the same normalised request.
    const post = await t.app.inject({ method: 'POST', url: '/retrieve', payload: { mode: 'hybrid', query: '咳嗽检查' } })
    expect(post.json().cached).toBe(true)

    await t.app.inject({ method: 'POST', url: '/ingest/documents', payload: { documents: [{ id: 'd', text: '# 咳嗽随访\n\n咳嗽检查后两周复诊。' }] } })
    const after = await t.app.inject({ method: 'GET', url })
    expect(after.json().cached).toBe(false)
    expect(after.json().recall_bundle.map((i: { id: string }) => i.id)).toContain('d#0')
  })

  it('returns the caller\'s request id, or a new one, in x-request-id', async () => {
    const given = await t.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'abc-123' } })
    expect(given.headers['x-request-id']).toBe('abc-123')
    const fresh = await t.app.inject({ method: 'GET', url: '/healthz' })
    expect(fresh.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/)
  })

  it('exposes Prometheus metrics per mode, per leg and for the cache', async () => {
    await t.app.inject({ method: 'GET', url: `/retrieve?mode=hybrid&q=${encodeURIComponent('报销标准')}` })
    const body = (await t.app.inject({ method: 'GET', url: '/metrics' })).body
    expect(body).toMatch(/recall_request_duration_seconds_count\{[^}]*mode="hybrid"[^}]*\} \d+/)
    expect(body).toMatch(/recall_leg_duration_seconds_count\{[^}]*leg="lexical"[^}]*\} \d+/)
    expect(body).toMatch(/recall_cache_requests_total\{[^}]*kind="response"[^}]*result="hit"[^}]*\} [1-9]/)
    expect(body).toMatch(/recall_cache_requests_total\{[^}]*kind="embedding"[^}]*\} \d+/)
  })

  it('reports every backend in /readyz', async () => {
    const r = await t.app.inject({ method: 'GET', url: '/readyz' })
    expect(r.statusCode).toBe(200)
    const names = r.json().backends.map((b: { backend: string }) => b.backend)
    expect(names).toEqual(['embedder:local', 'vector-store:memory', 'lexical-index:bm25', 'knowledge-graph:memory', 'episodic-graph:memory', 'cache:memory'])
  })
})

describe('API keys', () => {
  let t: TestApp
  beforeAll(async () => { t = await buildTestApp({ API_KEYS: 'k1,k2' }) })
  afterAll(async () => t.close())

  it('make writes need a key, by Bearer or X-API-Key; reads stay open', async () => {
    const payload = { documents: [docs[0]] }
    expect((await t.app.inject({ method: 'POST', url: '/ingest/documents', payload })).statusCode).toBe(401)
    expect((await t.app.inject({ method: 'POST', url: '/ingest/documents', payload, headers: { authorization: 'Bearer nope' } })).json().code).toBe('RECALL_AUTH_INVALID')
    expect((await t.app.inject({ method: 'POST', url: '/ingest/documents', payload, headers: { authorization: 'Bearer k2' } })).statusCode).toBe(200)
    expect((await t.app.inject({ method: 'DELETE', url: '/documents/a', headers: { 'x-api-key': 'k1' } })).statusCode).toBe(200)
    expect((await t.app.inject({ method: 'POST', url: '/retrieve', payload: { mode: 'hybrid', query: '咳嗽' } })).statusCode).toBe(200)
  })
})

describe('API keys for reads', () => {
  let t: TestApp
  beforeAll(async () => { t = await buildTestApp({ API_KEYS: 'k1', READ_API_KEYS_REQUIRED: 'true' }) })
  afterAll(async () => t.close())

  it('READ_API_KEYS_REQUIRED extends the key to reads, not to probes', async () => {
    const r = await t.app.inject({ method: 'GET', url: '/retrieve?mode=hybrid&q=x' })
    expect(r.statusCode).toBe(401)
    expect(r.json().code).toBe('RECALL_AUTH_REQUIRED')
    expect((await t.app.inject({ method: 'GET', url: '/retrieve?mode=hybrid&q=x', headers: { 'x-api-key': 'k1' } })).statusCode).toBe(200)
    expect((await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200)
  })
})

describe('Redis as the shared cache, stopped and started during a run of requests', () => {
  let redis: RedisServer
  let t: TestApp
  beforeAll(async () => {
    redis = await startRedis()
    t = await buildTestApp({ REDIS_URL: redis.url })
    await t.app.inject({ method: 'POST', url: '/ingest/documents', payload: { documents: docs } })
  })
  afterAll(async () => {
    await t.close()
    await redis.stop()
  })

  it('keeps answering 200 while Redis is down, and caches again once it is back', async () => {
    const ask = (q: string) => t.app.inject({ method: 'GET', url: `/retrieve?mode=hybrid&q=${encodeURIComponent(q)}` })
    expect((await ask('住宿标准')).statusCode).toBe(200)
    // Wait until Redis holds the answer (the client connects in the background at start).
    let hit = false
    for (let i = 0; i < 40 && !hit; i++) {
      hit = (await ask('住宿标准')).json().cached === true
      if (!hit) await new Promise((r) => setTimeout(r, 50))
    }
    expect(hit).toBe(true)

    const port = redis.port
    await redis.stop('SIGKILL')
    for (let i = 0; i < 20; i++) {
      const started = Date.now()
      const r = await ask(`住宿 ${i}`)
      expect(r.statusCode).toBe(200)
      expect(Date.now() - started).toBeLessThan(3000)
    }
    expect((await ask('住宿标准')).json().cached).toBe(false)

    redis = await startRedis(port)
    let back = false
    for (let i = 0; i < 100 && !back; i++) {
      await ask('流式返回')
      back = (await ask('流式返回')).json().cached === true
      if (!back) await new Promise((r) => setTimeout(r, 100))
    }
    expect(back).toBe(true)
  }, 60_000)
})

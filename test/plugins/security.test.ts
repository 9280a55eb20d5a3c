import SwaggerParser from '@apidevtools/swagger-parser'
import fastifySwagger from '@fastify/swagger'
import Fastify, { type FastifyInstance } from 'fastify'
import { afterEach, describe, expect, inject, it } from 'vitest'
import security, { type SecurityOptions } from '../../src/plugins/security.js'
import { createRedisClient } from '../../src/providers/cache/redis.js'
import { freePort } from '../helpers/redis-server.js'

const apps: FastifyInstance[] = []
const cleanups: Array<() => Promise<unknown> | void> = []

afterEach(async () => {
  for (const app of apps.splice(0)) await app.close()
  for (const cleanup of cleanups.splice(0)) await cleanup()
})

const ok = async (): Promise<{ ok: true }> => ({ ok: true })

async function build(options: SecurityOptions, swagger = false): Promise<FastifyInstance> {
  const app = Fastify()
  apps.push(app)
  if (swagger) await app.register(fastifySwagger, { openapi: { info: { title: 't', version: '1' } } })
  await app.register(security, options)
  const response = { 200: { type: 'object', properties: { ok: { type: 'boolean' } } } }
  app.get('/retrieve', { schema: { response } }, ok)
  app.post('/retrieve', { schema: { response } }, ok)
  app.post('/analyze', { schema: { response } }, ok)
  app.post('/ingest/documents', { schema: { response } }, ok)
  app.delete('/ingest/documents/:id', { schema: { response } }, ok)
  app.get('/healthz', { schema: { response } }, ok)
  app.get('/readyz', { schema: { response } }, ok)
  app.get('/metrics', { schema: { response } }, ok)
  await app.ready()
  return app
}

const KEYS = ['k-alpha-123', 'k-beta-456']

describe('security: API keys', () => {
  it('without API keys configured, writes need no key', async () => {
    const app = await build({})
    const response = await app.inject({ method: 'POST', url: '/ingest/documents', payload: {} })
    expect(response.statusCode).toBe(200)
  })

  it('a write without a key gets 401 RECALL_AUTH_REQUIRED in the error shape, with WWW-Authenticate', async () => {
    const app = await build({ apiKeys: KEYS })
    const response = await app.inject({ method: 'POST', url: '/ingest/documents', payload: {} })
    expect(response.statusCode).toBe(401)
    expect(response.headers['www-authenticate']).toBe('Bearer')
    const body = response.json()
    expect(Object.keys(body).sort()).toEqual(['code', 'error', 'message', 'statusCode'])
    expect(body).toMatchObject({ statusCode: 401, code: 'RECALL_AUTH_REQUIRED', error: 'Unauthorized' })
  })

  it('a wrong key, or a non-Bearer Authorization, gets 401 RECALL_AUTH_INVALID', async () => {
    const app = await build({ apiKeys: KEYS })
    const cases = [
      { authorization: 'Bearer k-alpha-12' },
      { authorization: 'Bearer k-alpha-1234' },
      { 'x-api-key': 'nope' },
      { authorization: 'Basic azphbHBoYTox' },
      { authorization: 'Bearer' }
    ]
    for (const headers of cases) {
      const response = await app.inject({ method: 'DELETE', url: '/ingest/documents/d1', headers })
      expect(response.statusCode, JSON.stringify(headers)).toBe(401)
      expect(response.json().code).toBe('RECALL_AUTH_INVALID')
    }
  })

  it('any configured key is accepted as Bearer (scheme case-insensitive) or as X-API-Key', async () => {
    const app = await build({ apiKeys: KEYS })
    const cases = [
      { authorization: 'Bearer k-alpha-123' },
      { authorization: 'bearer k-beta-456' },
      { 'x-api-key': 'k-beta-456' }
    ]
    for (const headers of cases) {
      const post = await app.inject({ method: 'POST', url: '/ingest/documents', payload: {}, headers })
      expect(post.statusCode, JSON.stringify(headers)).toBe(200)
      const del = await app.inject({ method: 'DELETE', url: '/ingest/documents/d1', headers })
      expect(del.statusCode).toBe(200)
    }
  })

  it('reads (GET, POST /retrieve, POST /analyze) and probes need no key unless reads are protected', async () => {
    const app = await build({ apiKeys: KEYS })
    for (const [method, url] of [['GET', '/retrieve'], ['POST', '/retrieve'], ['POST', '/analyze'], ['GET', '/healthz']] as const) {
      const response = await app.inject({ method, url, ...(method === 'POST' ? { payload: {} } : {}) })
      expect(response.statusCode, `${method} ${url}`).toBe(200)
    }
  })

  it('with readKeysRequired, reads need a key too but probes and /metrics do not', async () => {
    const app = await build({ apiKeys: KEYS, readKeysRequired: true })
    for (const [method, url] of [['GET', '/retrieve'], ['POST', '/retrieve'], ['POST', '/analyze']] as const) {
      const bare = await app.inject({ method, url, ...(method === 'POST' ? { payload: {} } : {}) })
      expect(bare.statusCode, `${method} ${url}`).toBe(401)
      const keyed = await app.inject({ method, url, headers: { 'x-api-key': 'k-alpha-123' }, ...(method === 'POST' ? { payload: {} } : {}) })
      expect(keyed.statusCode).toBe(200)
    }
    for (const url of ['/healthz', '/readyz', '/metrics']) {
      expect((await app.inject({ method: 'GET', url })).statusCode, url).toBe(200)
    }
  })

  it('refuses readKeysRequired without any key', async () => {
    await expect(build({ apiKeys: [], readKeysRequired: true })).rejects.toThrow(/API_KEYS/)
  })

  it('rejects an unauthenticated write before reading its body (malformed JSON gets 401, not 400)', async () => {
    const app = await build({ apiKeys: KEYS })
    const response = await app.inject({
      method: 'POST',
      url: '/ingest/documents',
      headers: { 'content-type': 'application/json' },
      payload: '{"broken'
    })
    expect(response.statusCode).toBe(401)
  })

  it('with a body limit, an authenticated oversized body gets 413 in the error shape, an unauthenticated one 401', async () => {
    const app = Fastify({ bodyLimit: 1024 })
    apps.push(app)
    await app.register(security, { apiKeys: KEYS })
    app.post('/ingest/documents', ok)
    await app.ready()
    const payload = { text: 'x'.repeat(2000) }
    const unauthenticated = await app.inject({ method: 'POST', url: '/ingest/documents', payload })
    expect(unauthenticated.statusCode).toBe(401)
    const tooLarge = await app.inject({ method: 'POST', url: '/ingest/documents', payload, headers: { 'x-api-key': 'k-alpha-123' } })
    expect(tooLarge.statusCode).toBe(413)
    expect(Object.keys(tooLarge.json()).sort()).toEqual(['code', 'error', 'message', 'statusCode'])
  })

  it('an unknown route is still a 404, not a 401', async () => {
    const app = await build({ apiKeys: KEYS })
    expect((await app.inject({ method: 'POST', url: '/nope', payload: {} })).statusCode).toBe(404)
  })
})

describe('security: rate limit', () => {
  it('limits per IP, answering 429 RECALL_RATE_LIMITED with Retry-After once max is spent', async () => {
    const app = await build({ rateLimit: { max: 3, timeWindowMs: 60_000 } })
    const statuses: number[] = []
    for (let i = 0; i < 4; i += 1) statuses.push((await app.inject({ method: 'GET', url: '/retrieve' })).statusCode)
    expect(statuses).toEqual([200, 200, 200, 429])
    const limited = await app.inject({ method: 'GET', url: '/retrieve' })
    expect(limited.json()).toMatchObject({ statusCode: 429, code: 'RECALL_RATE_LIMITED', error: 'Too Many Requests' })
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0)
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(60)
    // Another address has its own allowance.
    expect((await app.inject({ method: 'GET', url: '/retrieve', remoteAddress: '10.0.0.2' })).statusCode).toBe(200)
  })

  it('a valid key has its own allowance; made-up keys share the IP allowance', async () => {
    const app = await build({ apiKeys: KEYS, rateLimit: { max: 2, timeWindowMs: 60_000 } })
    const get = (headers: Record<string, string>): Promise<number> =>
      app.inject({ method: 'GET', url: '/retrieve', headers }).then((r) => r.statusCode)
    expect([await get({}), await get({ 'x-api-key': 'fake-1' }), await get({ 'x-api-key': 'fake-2' })]).toEqual([200, 200, 429])
    expect([await get({ 'x-api-key': 'k-alpha-123' }), await get({ authorization: 'Bearer k-alpha-123' }), await get({ 'x-api-key': 'k-alpha-123' })]).toEqual([200, 200, 429])
    expect(await get({ 'x-api-key': 'k-beta-456' })).toBe(200)
  })

  it('probes and /metrics are never rate limited', async () => {
    const app = await build({ rateLimit: { max: 1, timeWindowMs: 60_000 } })
    for (let i = 0; i < 5; i += 1) {
      for (const url of ['/healthz', '/readyz', '/metrics']) expect((await app.inject({ method: 'GET', url })).statusCode).toBe(200)
    }
  })

  it('with Redis, replicas share one counter', async () => {
    const url = inject('redisUrl')
    const clients = [createRedisClient(url, { commandTimeoutMs: 1_000 }), createRedisClient(url, { commandTimeoutMs: 1_000 })]
    for (const client of clients) {
      client.on('error', () => {})
      cleanups.push(() => client.quit())
      // The second client may already be ready by the time the first one is; 'ready' would not fire again.
      if (client.status !== 'ready') await new Promise((resolve) => client.once('ready', resolve))
    }
    const address = `10.9.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`
    const [a, b] = await Promise.all(clients.map((redis) => build({ rateLimit: { max: 3, timeWindowMs: 60_000, redis } })))
    const get = (app: FastifyInstance | undefined): Promise<number> =>
      app!.inject({ method: 'GET', url: '/retrieve', remoteAddress: address }).then((r) => r.statusCode)
    expect([await get(a), await get(b), await get(a), await get(b)]).toEqual([200, 200, 200, 429])
  })

  it('with Redis down, requests go through at once instead of failing', async () => {
    const port = await freePort()
    const redis = createRedisClient(`redis://127.0.0.1:${port}`)
    redis.on('error', () => {})
    cleanups.push(() => redis.disconnect())
    const app = await build({ rateLimit: { max: 1, timeWindowMs: 60_000, redis } })
    for (let i = 0; i < 3; i += 1) {
      const started = performance.now()
      expect((await app.inject({ method: 'GET', url: '/retrieve' })).statusCode).toBe(200)
      expect(performance.now() - started).toBeLessThan(500)
    }
  })
})

describe('security: CORS', () => {
  it('allows only the listed origins', async () => {
    const app = await build({ corsOrigins: ['https://a.example'] })
    const allowed = await app.inject({ method: 'GET', url: '/retrieve', headers: { origin: 'https://a.example' } })
    expect(allowed.headers['access-control-allow-origin']).toBe('https://a.example')
    expect(String(allowed.headers['access-control-expose-headers'])).toContain('X-Request-Id')
    const other = await app.inject({ method: 'GET', url: '/retrieve', headers: { origin: 'https://b.example' } })
    expect(other.headers['access-control-allow-origin']).toBeUndefined()
  })

  it('answers a preflight for a protected write without asking for a key', async () => {
    const app = await build({ apiKeys: KEYS, corsOrigins: ['*'] })
    const preflight = await app.inject({
      method: 'OPTIONS',
      url: '/ingest/documents',
      headers: { origin: 'https://x.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization' }
    })
    expect(preflight.statusCode).toBe(204)
    expect(preflight.headers['access-control-allow-origin']).toBe('*')
    expect(String(preflight.headers['access-control-allow-headers'])).toContain('Authorization')
  })

  it('sends no CORS headers when no origin is configured', async () => {
    const app = await build({})
    const response = await app.inject({ method: 'GET', url: '/retrieve', headers: { origin: 'https://a.example' } })
    expect(response.headers['access-control-allow-origin']).toBeUndefined()
  })
})

describe('security: OpenAPI', () => {
  it('documents 401, 429 on protected routes, 413 and 415 where a body is read, and none of them on probes', async () => {
    const app = await build({}, true)
    const paths = (app.swagger() as unknown as { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> }).paths
    expect(Object.keys(paths['/ingest/documents']?.post?.responses ?? {}).sort()).toEqual(['200', '401', '413', '415', '429'])
    expect(Object.keys(paths['/ingest/documents/{id}']?.delete?.responses ?? {}).sort()).toEqual(['200', '401', '429'])
    expect(Object.keys(paths['/retrieve']?.get?.responses ?? {}).sort()).toEqual(['200', '401', '429'])
    expect(Object.keys(paths['/healthz']?.get?.responses ?? {}).sort()).toEqual(['200'])
    expect(Object.keys(paths['/readyz']?.get?.responses ?? {}).sort()).toEqual(['200'])
    expect(Object.keys(paths['/metrics']?.get?.responses ?? {}).sort()).toEqual(['200'])
    expect(paths['/retrieve']?.get?.responses['401']).toMatchObject({ description: 'API key missing or not valid' })
    await SwaggerParser.validate(structuredClone(app.swagger()) as never)
  })

  it('uses the error schema it is given, and leaves statuses a route declares itself alone', async () => {
    const app = Fastify()
    apps.push(app)
    await app.register(fastifySwagger, { openapi: { info: { title: 't', version: '1' } } })
    const errorResponseSchema = { type: 'object', properties: { code: { type: 'string', description: 'the given schema' } } }
    await app.register(security, { errorResponseSchema })
    const own = { type: 'object', description: 'declared by the route', properties: { reason: { type: 'string' } } }
    app.post('/ingest/documents', { schema: { response: { 200: { type: 'object' }, 429: own } } }, ok)
    await app.ready()
    const doc = app.swagger() as unknown as { paths: Record<string, Record<string, { responses: Record<string, { description: string; content: Record<string, { schema: { properties: Record<string, { description?: string }> } }> }> }>> }
    const responses = doc.paths['/ingest/documents']?.post?.responses ?? {}
    expect(responses['401']?.content['application/json']?.schema.properties.code?.description).toBe('the given schema')
    expect(responses['429']?.description).toBe('declared by the route')
  })
})

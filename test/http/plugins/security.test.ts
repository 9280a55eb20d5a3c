import SwaggerParser from '@apidevtools/swagger-parser'
import fastifySwagger from '@fastify/swagger'
import Fastify, { type FastifyInstance } from 'fastify'
import { afterEach, describe, expect, inject, it } from 'vitest'
import security, { namespaceOfRequest, type SecurityOptions } from '../../../src/http/plugins/security.js'
import { createRedisClient } from '../../../src/providers/cache/redis.js'
import { REDIS_CLUSTER_SKIP } from '../../helpers/redis-cluster.js'
import { freePort } from '../../helpers/redis-server.js'

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

/** Routes that name their namespace (query or body), one that lists namespaces, and a body-less read. */
async function buildNamespaced(options: SecurityOptions): Promise<FastifyInstance> {
  const app = Fastify()
  apps.push(app)
  await app.register(security, options)
  const config = { namespaces: namespaceOfRequest }
  app.get('/retrieve', { config }, ok)
  app.post('/retrieve', { config }, ok)
  app.post('/ingest/documents', { config }, ok)
  app.delete('/namespaces/:namespace', { config: { namespaces: (r) => [(r.params as { namespace: string }).namespace] } }, ok)
  app.get('/namespaces', async (request) => ({ visible: ['default', 'tenant-a', 'tenant-b'].filter((ns) => request.mayUseNamespace(ns)) }))
  await app.ready()
  return app
}

const SCOPED = ['k-admin', { key: 'k-a', namespaces: ['tenant-a'] }, { key: 'k-ab', namespaces: ['tenant-a', 'tenant-b'] }]

describe('security: keys scoped to namespaces', () => {
  it('a scoped key reads and writes its namespaces; another namespace, default included, is a 403 whose message is only the name', async () => {
    const app = await buildNamespaced({ apiKeys: SCOPED, readKeysRequired: true })
    const as = (key: string) => ({ 'x-api-key': key })
    const cases: Array<[string, 'GET' | 'POST' | 'DELETE', string, object | undefined, number]> = [
      ['k-a', 'POST', '/ingest/documents', { namespace: 'tenant-a' }, 200],
      ['k-a', 'POST', '/ingest/documents', { namespace: 'tenant-b' }, 403],
      ['k-a', 'POST', '/ingest/documents', {}, 403],
      ['k-a', 'GET', '/retrieve?namespace=tenant-a', undefined, 200],
      ['k-a', 'GET', '/retrieve?namespace=tenant-b', undefined, 403],
      ['k-a', 'GET', '/retrieve', undefined, 403],
      ['k-a', 'POST', '/retrieve', { namespace: 'ghost' }, 403],
      ['k-a', 'DELETE', '/namespaces/tenant-b', undefined, 403],
      ['k-a', 'DELETE', '/namespaces/tenant-a', undefined, 200],
      ['k-ab', 'POST', '/retrieve', { namespace: 'tenant-b' }, 200],
      ['k-ab', 'POST', '/retrieve', { namespace: 'default' }, 403],
      ['k-admin', 'POST', '/retrieve', { namespace: 'anything' }, 200],
      ['k-admin', 'DELETE', '/namespaces/tenant-b', undefined, 200]
    ]
    for (const [key, method, url, payload, status] of cases) {
      const r = await app.inject({ method, url, headers: as(key), ...(payload ? { payload } : {}) })
      expect(r.statusCode, `${key} ${method} ${url} ${JSON.stringify(payload)}`).toBe(status)
      if (status === 403) {
        const named = (payload as { namespace?: string } | undefined)?.namespace ?? /namespaces?[=/]([^&]+)/.exec(url)?.[1] ?? 'default'
        expect(r.json()).toEqual({ statusCode: 403, code: 'RECALL_NAMESPACE_FORBIDDEN', error: 'Forbidden', message: `this API key may not use namespace "${named}"` })
      }
    }
  })

  it('a listing shows a scoped key its own namespaces only', async () => {
    const app = await buildNamespaced({ apiKeys: SCOPED, readKeysRequired: true })
    const list = async (key: string) => (await app.inject({ method: 'GET', url: '/namespaces', headers: { 'x-api-key': key } })).json().visible
    expect(await list('k-a')).toEqual(['tenant-a'])
    expect(await list('k-ab')).toEqual(['tenant-a', 'tenant-b'])
    expect(await list('k-admin')).toEqual(['default', 'tenant-a', 'tenant-b'])
  })

  it('when reads need no key, a read without one may use any namespace; one that presents a scoped key is held to it', async () => {
    const app = await buildNamespaced({ apiKeys: SCOPED })
    expect((await app.inject({ method: 'GET', url: '/retrieve?namespace=tenant-b' })).statusCode).toBe(200)
    expect((await app.inject({ method: 'GET', url: '/retrieve?namespace=tenant-b', headers: { 'x-api-key': 'k-a' } })).statusCode).toBe(403)
    // a key that is not valid changes nothing for a read that needs none
    expect((await app.inject({ method: 'GET', url: '/retrieve?namespace=tenant-b', headers: { 'x-api-key': 'nope' } })).statusCode).toBe(200)
    // writes still need a valid key, and a scoped one is held to its namespaces
    expect((await app.inject({ method: 'POST', url: '/ingest/documents', payload: { namespace: 'tenant-a' } })).statusCode).toBe(401)
    expect((await app.inject({ method: 'POST', url: '/ingest/documents', payload: { namespace: 'tenant-b' }, headers: { 'x-api-key': 'k-a' } })).statusCode).toBe(403)
  })

  it('documents the 403 on routes that name namespaces', async () => {
    const app = Fastify()
    apps.push(app)
    await app.register(fastifySwagger, { openapi: { info: { title: 't', version: '1' } } })
    await app.register(security, {})
    app.post('/retrieve', { config: { namespaces: namespaceOfRequest }, schema: { response: { 200: { type: 'object' } } } }, ok)
    app.post('/analyze', { schema: { response: { 200: { type: 'object' } } } }, ok)
    await app.ready()
    const paths = (app.swagger() as unknown as { paths: Record<string, Record<string, { responses: Record<string, { description: string }> }>> }).paths
    expect(Object.keys(paths['/retrieve']?.post?.responses ?? {}).sort()).toEqual(['200', '401', '403', '413', '415', '429'])
    expect(paths['/retrieve']?.post?.responses['403']?.description).toMatch(/whether or not the namespace exists/)
    expect(Object.keys(paths['/analyze']?.post?.responses ?? {})).not.toContain('403')
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

  // on one server, and on the run's Redis Cluster (the counter is one key per script: any master may hold it)
  it.each([['one redis-server', 'redisUrl'], ['a Redis Cluster', 'redisClusterUrl']] as const)('with Redis (%s), replicas share one counter', async (_, which) => {
    const url = inject(which)
    if (!url) return console.warn(`the shared rate limit on a Redis Cluster: ${REDIS_CLUSTER_SKIP}`)
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

import Fastify, { type FastifyInstance } from 'fastify'
import { Redis } from 'ioredis'
import { afterEach, describe, expect, it } from 'vitest'
import metrics from '../../../src/http/plugins/metrics.js'
import security from '../../../src/http/plugins/security.js'
import { responseCacheKey } from '../../../src/providers/cache/keys.js'
import { createRedisClient, RedisCache } from '../../../src/providers/cache/redis.js'
import { startRedis, type RedisServer } from '../../helpers/redis-server.js'

// Over real HTTP: a route answering through the Redis response cache, behind the rate limiter whose
// counters live in the same Redis. Redis is killed and restarted during a run of requests.
const COMMAND_TIMEOUT_MS = 500
describe('a Redis outage during a run of HTTP requests', () => {
  const cleanups: Array<() => Promise<unknown>> = []
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
  })

  async function serve(server: RedisServer): Promise<{ app: FastifyInstance; base: string; cache: RedisCache }> {
    const rateLimitRedis = createRedisClient(server.url, { maxReconnectDelayMs: 200 })
    rateLimitRedis.on('error', () => {})
    cleanups.push(async () => rateLimitRedis.disconnect())
    // The production 50 ms command timeout would turn a hit into a miss whenever redis-server waits that long
    // for a core on a busy machine; the outage itself fails calls at once (the connection is gone), so a wider
    // timeout keeps what the test shows: hits while Redis is up, misses while it is down, no call hangs.
    const cache = new RedisCache({ url: server.url, maxReconnectDelayMs: 200, commandTimeoutMs: COMMAND_TIMEOUT_MS })
    cleanups.push(() => cache.close())
    expect(await cache.waitUntilReady(5_000)).toBe(true)

    const app = Fastify()
    await app.register(security, { rateLimit: { max: 100_000, timeWindowMs: 60_000, redis: rateLimitRedis } })
    await app.register(metrics, { defaultMetrics: false })
    app.get('/answer', async (request, reply) => {
      const q = (request.query as { q?: string }).q ?? ''
      const key = responseCacheKey('hybrid', { q }, 1)
      const cached = await cache.get(key)
      app.metrics.cacheResult('response', cached !== undefined)
      reply.header('x-cache', cached === undefined ? 'miss' : 'hit')
      if (cached !== undefined) return JSON.parse(cached.toString()) as unknown
      const body = { q, answer: q.length }
      await cache.set(key, JSON.stringify(body), 60)
      return body
    })
    const base = await app.listen({ port: 0, host: '127.0.0.1' })
    cleanups.push(() => app.close())
    return { app, base, cache }
  }

  it('every request answers 200 in bounded time; after a restart, cache hits and shared rate-limit counters come back', async () => {
    const server = await startRedis()
    let current = server
    cleanups.push(() => current.stop('SIGKILL'))
    const { base } = await serve(server)

    const results: Array<{ status: number; cache: string | null; ms: number }> = []
    for (let i = 0; i < 450; i += 1) {
      if (i === 150) await current.stop('SIGKILL')
      if (i === 300) current = await startRedis(server.port)
      const started = performance.now()
      const response = await fetch(`${base}/answer?q=q${i % 10}`)
      await response.json()
      results.push({ status: response.status, cache: response.headers.get('x-cache'), ms: performance.now() - started })
      if (i >= 300 && i < 310) await new Promise((resolve) => setTimeout(resolve, 50)) // give the clients time to reconnect
    }

    expect(results.filter((r) => r.status !== 200)).toEqual([])
    expect(Math.max(...results.map((r) => r.ms))).toBeLessThan(4 * COMMAND_TIMEOUT_MS) // bounded by the command timeout, not a hang
    const before = results.slice(10, 150)
    const during = results.slice(151, 300)
    const after = results.slice(400)
    expect(before.every((r) => r.cache === 'hit')).toBe(true)
    expect(during.every((r) => r.cache === 'miss')).toBe(true)
    expect(after.every((r) => r.cache === 'hit')).toBe(true)

    const raw = new Redis(current.url)
    try {
      expect((await raw.keys('recall:ratelimit:*')).length).toBeGreaterThan(0)
      expect((await raw.keys('recall:cache:resp:hybrid:*')).length).toBe(10)
    } finally {
      await raw.quit()
    }
  })
})

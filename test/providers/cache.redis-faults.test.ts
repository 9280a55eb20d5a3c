import { Redis } from 'ioredis'
import { afterEach, describe, expect, it } from 'vitest'
import { RedisCache } from '../../src/providers/cache/redis.js'
import { startRedis, type RedisServer } from '../helpers/redis-server.js'

// Fault tests against a redis-server of their own, which they stop, freeze and restart.
const COMMAND_TIMEOUT_MS = 50
// Each call may take the command timeout plus scheduling slack on a busy CI machine, never seconds.
const CALL_BOUND_MS = COMMAND_TIMEOUT_MS + 250

interface Timed<T> {
  value: T
  ms: number
}

async function timed<T>(call: () => Promise<T>): Promise<Timed<T>> {
  const started = performance.now()
  const value = await call()
  return { value, ms: performance.now() - started }
}

describe('RedisCache when the real Redis fails', () => {
  const servers: RedisServer[] = []
  const caches: RedisCache[] = []

  afterEach(async () => {
    for (const cache of caches.splice(0)) await cache.close()
    for (const server of servers.splice(0)) {
      try {
        process.kill(server.pid, 'SIGCONT')
      } catch {
        // already gone
      }
      await server.stop('SIGKILL')
    }
  })

  async function setUp(logIntervalMs = 1_000): Promise<{ server: RedisServer; cache: RedisCache; warnings: object[] }> {
    const server = await startRedis()
    servers.push(server)
    const warnings: object[] = []
    const cache = new RedisCache({
      url: server.url,
      commandTimeoutMs: COMMAND_TIMEOUT_MS,
      maxReconnectDelayMs: 200,
      logIntervalMs,
      logger: { warn: (obj) => warnings.push(obj) }
    })
    caches.push(cache)
    expect(await cache.waitUntilReady(5_000)).toBe(true)
    return { server, cache, warnings }
  }

  /** Polls set+get on the same cache object until a value comes back; returns the time it took. */
  async function untilHit(cache: RedisCache, timeoutMs: number): Promise<number> {
    const started = performance.now()
    while (performance.now() - started < timeoutMs) {
      await cache.set('probe', 'back', 60)
      if ((await cache.get('probe'))?.toString() === 'back') return performance.now() - started
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    throw new Error(`no cache hit within ${timeoutMs} ms`)
  }

  it('a Redis killed during a loop of get/set costs misses, never a throw or a slow call; a restart brings hits back on the same client', async () => {
    const { server, cache, warnings } = await setUp()
    const durations: number[] = []
    const outcomes: Array<'hit' | 'miss'> = []
    for (let i = 0; i < 300; i += 1) {
      if (i === 100) await server.stop('SIGKILL')
      const set = await timed(() => cache.set(`k${i}`, `v${i}`, 60))
      const get = await timed(async () => (await cache.get(`k${i}`))?.toString())
      durations.push(set.ms, get.ms)
      outcomes.push(get.value === `v${i}` ? 'hit' : 'miss')
      expect(get.value === undefined || get.value === `v${i}`).toBe(true)
    }
    expect(outcomes.slice(0, 100).every((o) => o === 'hit')).toBe(true)
    expect(outcomes.slice(100).every((o) => o === 'miss')).toBe(true)
    expect(Math.max(...durations)).toBeLessThan(CALL_BOUND_MS)
    // 200 failed iterations inside well under two seconds: the throttle allows a handful of lines, not 400.
    expect(warnings.length).toBeGreaterThanOrEqual(1)
    expect(warnings.length).toBeLessThanOrEqual(5)

    const health = await cache.health()
    expect(health.ok).toBe(false)

    const restarted = await startRedis(server.port)
    servers.push(restarted)
    const recoveryMs = await untilHit(cache, 5_000)
    expect(recoveryMs).toBeLessThan(5_000)
    expect((await cache.health()).ok).toBe(true)
  })

  it('a frozen Redis (SIGSTOP: connection open, no answers) bounds each call by the command timeout', async () => {
    const { server, cache } = await setUp()
    await cache.set('k', 'v', 60)
    expect((await cache.get('k'))?.toString()).toBe('v')

    process.kill(server.pid, 'SIGSTOP')
    const calls: Timed<Buffer | undefined>[] = []
    for (let i = 0; i < 10; i += 1) {
      calls.push(await timed(() => cache.get('k')))
      await timed(() => cache.set('k2', 'v2', 60))
    }
    expect(calls.every((c) => c.value === undefined)).toBe(true)
    for (const call of calls) {
      expect(call.ms).toBeGreaterThanOrEqual(COMMAND_TIMEOUT_MS - 5)
      expect(call.ms).toBeLessThan(CALL_BOUND_MS)
    }
    const health = await timed(() => cache.health())
    expect(health.value.ok).toBe(false)
    expect(health.ms).toBeLessThan(CALL_BOUND_MS)

    process.kill(server.pid, 'SIGCONT')
    await untilHit(cache, 5_000)
    // Late replies to the timed-out commands must not be handed to later callers.
    await cache.set('after', 'thaw', 60)
    expect((await cache.get('after'))?.toString()).toBe('thaw')
    expect((await cache.get('k'))?.toString()).toBe('v')
  })

  it('garbage stored under a key reads as a miss, and the next set repairs it', async () => {
    const { server, cache, warnings } = await setUp(0)
    const raw = new Redis(server.url)
    try {
      await raw.set('recall:cache:g', '\u0000\u0001 not an envelope')
      expect(await cache.get('g')).toBeUndefined()
      await raw.hset('recall:cache:h', 'field', 'value')
      expect(await cache.get('h')).toBeUndefined()
      expect(warnings).toHaveLength(2)
      await cache.set('g', 'good', 60)
      expect((await cache.get('g'))?.toString()).toBe('good')
    } finally {
      await raw.quit()
    }
  })

  it('a cache built while Redis is down misses at once, then connects by itself when Redis appears', async () => {
    const { server: probe } = await setUp()
    const port = probe.port
    await probe.stop('SIGKILL')
    const cache = new RedisCache({ url: `redis://127.0.0.1:${port}`, commandTimeoutMs: COMMAND_TIMEOUT_MS, maxReconnectDelayMs: 200 })
    caches.push(cache)
    const miss = await timed(() => cache.get('x'))
    expect(miss.value).toBeUndefined()
    expect(miss.ms).toBeLessThan(CALL_BOUND_MS)
    const started = await startRedis(port)
    servers.push(started)
    await untilHit(cache, 5_000)
  })
})

import { randomUUID } from 'node:crypto'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { RedisCache } from '../../src/providers/cache/redis.js'
import { createCache } from '../../src/providers/cache/index.js'
import { describeCacheContract } from '../contracts/cache.contract.js'
import { REDIS_CLUSTER_SKIP } from '../helpers/redis-cluster.js'

const url = inject('redisUrl')

async function ready(cache: RedisCache): Promise<RedisCache> {
  if (!(await cache.waitUntilReady(5_000))) throw new Error(`no Redis connection to ${url} within 5 s`)
  return cache
}

describeCacheContract('redis', () => ready(new RedisCache({ url, keyPrefix: `test:${randomUUID()}:`, commandTimeoutMs: 1_000 })))

// The same promises on the run's Redis Cluster (every key of the cache is one key: any master may hold it).
const clusterUrl = inject('redisClusterUrl')
if (clusterUrl) {
  describeCacheContract('redis cluster', () => ready(new RedisCache({ url: clusterUrl, keyPrefix: `test:${randomUUID()}:`, commandTimeoutMs: 1_000 })))
} else {
  console.warn(`the cache contract on a Redis Cluster: ${REDIS_CLUSTER_SKIP}`)
}

describe('RedisCache on a real redis-server', () => {
  let raw: Redis
  beforeAll(() => {
    raw = new Redis(url)
  })
  afterAll(async () => {
    await raw.quit()
  })

  function makeCache(prefix: string, warnings: object[] = []): Promise<RedisCache> {
    return ready(new RedisCache({
      url,
      keyPrefix: prefix,
      commandTimeoutMs: 1_000,
      logIntervalMs: 0,
      logger: { warn: (obj) => warnings.push(obj) }
    }))
  }

  it('stores under the key prefix with the TTL given, in milliseconds', async () => {
    const prefix = `test:${randomUUID()}:`
    const cache = await makeCache(prefix)
    await cache.set('k', 'v', 30)
    const pttl = await raw.pttl(`${prefix}k`)
    expect(pttl).toBeGreaterThan(29_000)
    expect(pttl).toBeLessThanOrEqual(30_000)
    expect(await raw.exists('k')).toBe(0)
    await cache.close()
  })

  it('a value another program wrote under the key reads as a miss, with one log line', async () => {
    const prefix = `test:${randomUUID()}:`
    const warnings: object[] = []
    const cache = await makeCache(prefix, warnings)
    await raw.set(`${prefix}plain`, '{"mode":"hybrid"}')
    expect(await cache.get('plain')).toBeUndefined()
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toMatchObject({ backend: 'cache:redis', operation: 'get' })
    await cache.close()
  })

  it('a stored value altered in Redis (corrupted or truncated) reads as a miss', async () => {
    const prefix = `test:${randomUUID()}:`
    const cache = await makeCache(prefix)
    await cache.set('k', 'the original value', 60)
    const stored = await raw.get(`${prefix}k`)
    expect(stored).not.toBeNull()
    await raw.set(`${prefix}k`, (stored as string).slice(0, -3))
    expect(await cache.get('k')).toBeUndefined()
    await raw.set(`${prefix}k`, (stored as string).replace('original', 'tampered'))
    expect(await cache.get('k')).toBeUndefined()
    await cache.close()
  })

  it('a key holding another Redis type (WRONGTYPE) reads as a miss and set over it is lost quietly', async () => {
    const prefix = `test:${randomUUID()}:`
    const warnings: object[] = []
    const cache = await makeCache(prefix, warnings)
    await raw.rpush(`${prefix}list`, 'a', 'b')
    expect(await cache.get('list')).toBeUndefined()
    expect(warnings.length).toBe(1)
    // SET overwrites any type in Redis, so the next write repairs the key.
    await cache.set('list', 'now a string', 60)
    expect((await cache.get('list'))?.toString()).toBe('now a string')
    await cache.close()
  })

  it('closing a cache built on a shared client leaves that client open', async () => {
    const shared = new Redis(url)
    const cache = await ready(new RedisCache({ client: shared, keyPrefix: `test:${randomUUID()}:` }))
    await cache.set('k', 'v', 60)
    expect((await cache.get('k'))?.toString()).toBe('v')
    await cache.close()
    expect(await shared.ping()).toBe('PONG')
    await shared.quit()
  })

  it('createCache builds a RedisCache for backend redis', async () => {
    const cache = createCache({ backend: 'redis', url, keyPrefix: `test:${randomUUID()}:` })
    expect(cache).toBeInstanceOf(RedisCache)
    await ready(cache as RedisCache)
    const health = await cache.health()
    expect(health).toMatchObject({ backend: 'cache:redis', ok: true })
    await cache.close()
  })
})

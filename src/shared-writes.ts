/**
 * What the writers of one deployment share: the Redis connections, the generations every write is recorded in and the
 * write lock writers take turns by. The service builds them (src/services.ts), and so does a one-off command that
 * writes the same stores beside it (`npm run backfill`), so that both take the same locks and record the same way.
 */
import type { Config } from './config.js'
import { InProcessWriteLock, lockKeys, RedisWriteLock, type WriteLock } from './corpus/write-lock.js'
import { Generations } from './generations.js'
import { createRedisClient, type CacheLogger } from './providers/cache/index.js'
import { createGenerationStore } from './providers/generations/index.js'
import { isCluster, type RedisClient } from './providers/redis-client.js'

/**
 * The connection the write lock takes and the generations are recorded on when replicas must confirm them (`WAIT`):
 * a command timeout of its own, above the wait, since the cache's is a cache round trip. Without `WAIT`, the cache's.
 */
export function writeConnectionFor(config: Config, redis: RedisClient | undefined): RedisClient | undefined {
  if (!redis || !config.cache.redisUrl || config.cache.redisWait.replicas === 0) return redis
  const writes = createRedisClient(config.cache.redisUrl, { commandTimeoutMs: config.cache.redisCommandTimeoutMs + config.cache.redisWait.timeoutMs })
  writes.on('error', () => undefined) // as the cache's: a failed write says what matters
  return writes
}

export function redisFor(config: Config): RedisClient | undefined {
  if (!config.cache.redisUrl) return undefined
  const redis = createRedisClient(config.cache.redisUrl, { commandTimeoutMs: config.cache.redisCommandTimeoutMs })
  // ioredis emits 'error' on every failed reconnect; the cache logs what matters, so these are swallowed.
  redis.on('error', () => undefined)
  return redis
}

export function generationsFor(config: Config, redis: RedisClient | undefined, writeRedis: RedisClient | undefined, logger: CacheLogger | undefined): Generations {
  const acknowledgement = config.cache.redisWait
  return new Generations({
    store: createGenerationStore(redis
      ? {
          backend: 'redis', client: redis, changeLogLength: config.replicas.changeLog.maxDocuments,
          // only replicas over shared stores catch up from the log: one process would keep states no one reads
          ...(config.vector.backend === 'qdrant' && config.replicas.count > 1 ? { window: config.replicas.changeLog.window } : {}),
          ...(writeRedis && writeRedis !== redis ? { writes: { client: writeRedis, acknowledgement } } : {})
        }
      : { backend: 'memory' }),
    waitMs: config.replicas.minGenerationWaitMs,
    retryAfterSeconds: 1,
    // replicas must confirm each record: a write under way when its master fails waits for the failover, not three tries
    ...(writeRedis && acknowledgement.replicas > 0 ? { recordPatienceMs: config.cache.recordRetryMs } : {}),
    ...(logger ? { logger } : {})
  })
}

/**
 * Several replicas writing one namespace take turns (lock names `documents:`, `graph:`, `episodes:` + namespace); the
 * writes of one process take turns within it.
 */
export function writeLockFor(config: Config, redis: RedisClient | undefined, writeRedis: RedisClient | undefined): WriteLock {
  if (!writeRedis || config.replicas.count <= 1) return new InProcessWriteLock()
  return new RedisWriteLock({
    client: writeRedis, leaseMs: config.timeouts.vectorWrite + 10_000, waitMs: config.timeouts.vectorWrite,
    keys: (name) => lockKeys(name, { cluster: isCluster(writeRedis), untagged: config.replicas.untaggedWriteLock }),
    ...(writeRedis !== redis ? { acknowledgement: config.cache.redisWait } : {})
  })
}

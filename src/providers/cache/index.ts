import type { Cache } from './port.js'
import { MemoryCache, type MemoryCacheOptions } from './memory.js'
import { RedisCache, type RedisCacheOptions } from './redis.js'

export type CacheOptions =
  | ({ backend: 'memory' } & MemoryCacheOptions)
  | ({ backend: 'redis' } & RedisCacheOptions)

/** The cache the configuration names: Redis when `REDIS_URL` is set, the in-process LRU otherwise. */
export function createCache(options: CacheOptions): Cache {
  switch (options.backend) {
    case 'memory':
      return new MemoryCache(options)
    case 'redis':
      return new RedisCache(options)
    default: {
      const unknown: never = options
      throw new TypeError(`unknown cache backend ${JSON.stringify((unknown as { backend: unknown }).backend)}`)
    }
  }
}

export type { Cache, CacheLogger } from './port.js'
export { MemoryCache } from './memory.js'
export { RedisCache, createRedisClient } from './redis.js'
export { canonicalJson,  responseCacheKey } from './keys.js'
export { CachedEmbedder,    } from './cached-embedder.js'

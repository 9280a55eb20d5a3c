import type { RedisClient } from '../redis-client.js'
import { MemoryGenerationStore } from './memory.js'
import type { GenerationStore } from './port.js'
import { RedisGenerationStore, type RedisGenerationStoreOptions } from './redis.js'

export type GenerationStoreOptions = { backend: 'memory' } | ({ backend: 'redis'; client: RedisClient } & Omit<RedisGenerationStoreOptions, 'client'>)

/** Redis when the replicas share one (`REDIS_URL`), else this process's own counters. */
export function createGenerationStore(options: GenerationStoreOptions): GenerationStore {
  switch (options.backend) {
    case 'memory':
      return new MemoryGenerationStore()
    case 'redis':
      return new RedisGenerationStore(options)
    default: {
      const unknown: never = options
      throw new TypeError(`unknown generation store ${JSON.stringify((unknown as { backend: unknown }).backend)}`)
    }
  }
}

export type { CatalogPosition, DocumentChanges, DocumentChangeSet, GenerationStore, IndexKind,  } from './port.js'

export { formatVersion, parseVersion } from './version.js'

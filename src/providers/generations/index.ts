import type { RedisClient, ReplicaAcknowledgement } from '../redis-client.js'
import { MemoryGenerationStore } from './memory.js'
import type { GenerationStore } from './port.js'
import { RedisGenerationStore } from './redis.js'

export type GenerationStoreOptions = { backend: 'memory' } | {
  backend: 'redis'; client: RedisClient; keyPrefix?: string; changeLogLength?: number; writes?: { client: RedisClient; acknowledgement: ReplicaAcknowledgement }
}

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

export type { CatalogPosition, DocumentChanges, DocumentChangeSet, GenerationStore, IndexKind, NamespaceGenerations } from './port.js'
export { clockSeed, INDEX_KINDS } from './port.js'
export { formatVersion, parseVersion } from './version.js'
export { MemoryGenerationStore } from './memory.js'
export { RedisGenerationStore } from './redis.js'

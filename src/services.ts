import { randomUUID } from 'node:crypto'
import { join } from 'node:path'
import type { Redis } from 'ioredis'
import type { Config } from './config.js'
import type { Mode } from './schemas/recall-bundle.js'
import { DocumentLibrary } from './ingest/documents.js'
import { CachedEmbedder, createRedisClient, MemoryCache, RedisCache, type Cache, type CacheLogger } from './providers/cache/index.js'
import { createEmbedder } from './providers/embedder/index.js'
import type { Embedder } from './providers/embedder/port.js'
import type { BackendHealth } from './providers/errors.js'
import { createEpisodicGraphStore } from './providers/episodic-graph/index.js'
import type { EpisodicGraphStore } from './providers/episodic-graph/port.js'
import { createKnowledgeGraphStore, type KnowledgeGraphStore } from './providers/knowledge-graph/index.js'
import { createLexicalIndex } from './providers/lexical-index/index.js'
import { createNeo4jConnection, type Neo4jConnection } from './providers/neo4j/connection.js'
import type { LexicalIndex } from './providers/lexical-index/port.js'
import { createVectorStore } from './providers/vector-store/index.js'
import type { VectorStore } from './providers/vector-store/port.js'

/** The providers of one running service, created from config (or handed in by tests). */
export interface Providers {
  embedder: Embedder
  vectors: VectorStore
  lexical: LexicalIndex
  /** The graphrag knowledge graph. */
  graph: KnowledgeGraphStore
  /** The episodic memory graph (Episodes, Facets, FacetPoints, Entities), apart from the knowledge graph. */
  episodes: EpisodicGraphStore
  /** The Neo4j connection the graph stores share, when `GRAPH_BACKEND=neo4j`. */
  neo4j?: Neo4jConnection
}

export interface Services extends Providers {
  config: Config
  documents: DocumentLibrary
  /** Query embeddings and whole responses. */
  cache: Cache
  /** The Redis connection shared by the cache and the rate limiter, when `REDIS_URL` is set. */
  redis?: Redis
  /**
   * The version of the indexes a mode reads; part of its response cache key, so an ingest or delete
   * invalidates cached answers. The embedded indexes' counters are per process, so a boot id keeps a
   * restarted process from reusing older answers; the graph's version comes from its store.
   */
  indexVersion(mode: Mode): Promise<string>
  /** Counts episodic writes made through this process (part of the episodic cache key). */
  episodicChanges: { count: number }
  /** Set by the app: called once per query-embedding cache lookup (metrics). */
  observers: { embeddingLookup?: (hit: boolean) => void }
  health(): Promise<BackendHealth[]>
  close(): Promise<void>
}

export interface ServiceHooks {
  logger?: CacheLogger
}

export function createProviders(config: Config): Providers {
  const embedder = createEmbedder(
    config.embedder.backend === 'local'
      ? { backend: 'local', modelDir: config.embedder.modelDir, modelName: config.embedder.model }
      : {
          backend: 'openai', url: config.embedder.url, model: config.embedder.model, timeoutMs: config.timeouts.embedding,
          ...(config.embedder.apiKey ? { apiKey: config.embedder.apiKey } : {}),
          ...(config.embedder.dimensions ? { dimensions: config.embedder.dimensions } : {})
        }
  )
  const vectors = createVectorStore(
    config.vector.backend === 'qdrant'
      ? { backend: 'qdrant', url: config.vector.url, timeoutMs: config.timeouts.vector, ...(config.vector.apiKey ? { apiKey: config.vector.apiKey } : {}) }
      : { backend: 'memory', dir: join(config.dataDir, 'vectors') }
  )
  const lexical = createLexicalIndex({ dir: join(config.dataDir, 'bm25', 'chunks') })
  if (config.graph.backend === 'neo4j') {
    const neo4j = createNeo4jConnection({
      uri: config.graph.uri, user: config.graph.user, password: config.graph.password, timeoutMs: config.timeouts.graph,
      ...(config.graph.database ? { database: config.graph.database } : {})
    })
    return {
      embedder, vectors, lexical, neo4j,
      graph: createKnowledgeGraphStore({ backend: 'neo4j', neo4j }),
      episodes: createEpisodicGraphStore({ backend: 'neo4j', connection: neo4j })
    }
  }
  return {
    embedder, vectors, lexical,
    graph: createKnowledgeGraphStore({ backend: 'memory', dir: join(config.dataDir, 'graph') }),
    episodes: createEpisodicGraphStore({ backend: 'memory', file: join(config.dataDir, 'episodic', 'graph.json') })
  }
}

function createCacheFor(config: Config, logger?: CacheLogger): { cache: Cache; redis?: Redis } {
  if (!config.cache.redisUrl) return { cache: new MemoryCache({ maxEntries: config.cache.maxEntries }) }
  const redis = createRedisClient(config.cache.redisUrl, { commandTimeoutMs: config.cache.redisCommandTimeoutMs })
  // ioredis emits 'error' on every failed reconnect; the cache logs what matters, so these are swallowed.
  redis.on('error', () => undefined)
  return { cache: new RedisCache({ client: redis, ...(logger ? { logger } : {}) }), redis }
}

/** Opens the stores and derived indexes; `providers` defaults to the ones config names. */
export async function openServices(config: Config, providers: Providers = createProviders(config), hooks: ServiceHooks = {}): Promise<Services> {
  // Load the model now: a first load blocks the event loop for about a second, which must not happen
  // under traffic (the overload guard would answer 503). A remote embedder that is down is not fatal here.
  await providers.embedder.embedQueries(['预热']).catch((error: unknown) => {
    hooks.logger?.warn({ err: error }, 'the embedder did not answer a warm-up call; continuing')
  })
  const { cache, redis } = createCacheFor(config, hooks.logger)
  const observers: Services['observers'] = {}
  const embedder = config.cache.embeddingTtlSeconds > 0
    ? new CachedEmbedder(providers.embedder, cache, {
        ttlSeconds: config.cache.embeddingTtlSeconds,
        onLookup: (hit) => observers.embeddingLookup?.(hit)
      })
    : providers.embedder
  const documents = new DocumentLibrary({ ...providers, embedder }, { collection: `${config.collectionPrefix}chunks` })
  await documents.open()
  // A graph backend that is down at start is not fatal: the store retries on later calls, and
  // graphrag answers 503 naming it meanwhile.
  await providers.graph.init().catch((error: unknown) => {
    hooks.logger?.warn({ err: error }, 'the knowledge graph store is not reachable yet; graphrag answers 503 until it is')
  })
  const bootId = randomUUID().slice(0, 8)
  const episodicChanges = { count: 0 }
  return {
    ...providers,
    embedder,
    config,
    documents,
    cache,
    ...(redis ? { redis } : {}),
    async indexVersion(mode) {
      switch (mode) {
        case 'hybrid': return `${bootId}:${documents.version}`
        case 'graphrag': return `graph:${await providers.graph.version()}`
        case 'episodic': return `${bootId}:${episodicChanges.count}`
      }
    },
    observers,
    episodicChanges,
    async health() {
      return Promise.all([
        providers.embedder.health(), providers.vectors.health(), providers.lexical.health(), providers.graph.health(),
        ...(providers.neo4j ? [] : [providers.episodes.health()]), cache.health()
      ])
    },
    async close() {
      await Promise.allSettled([embedder.close(), providers.vectors.close(), providers.lexical.close(), providers.graph.close(), providers.episodes.close(), cache.close()])
      if (redis) await redis.quit().catch(() => redis.disconnect())
    }
  }
}

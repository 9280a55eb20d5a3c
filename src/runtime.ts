/**
 * What the HTTP layer is given: the modes, the corpus (its reads and the one write path), the response cache, the
 * start-up, health and metrics of the process, and how to close it. The composition root builds it
 * (`createRuntime` in src/services.ts); routes, plugins and the MCP tools read it as `app.runtime` and never see the
 * services behind it (an import rule in .dependency-cruiser.cjs holds them to that).
 */
import type { Config } from './config.js'
import type { NamespaceCounts } from './corpus/namespaces.js'
import type { StoredImage } from './corpus/images/image-records.js'
import type { DocumentCatalogView } from './corpus/document-views.js'
import type { WritePath } from './corpus/write-path.js'
import type { ReadState } from './generations.js'
import type { RecallMetrics } from './metrics.js'
import type { MemoryUsage } from './memory/budget.js'
import type { ModeTable } from './modes.js'
import type { Cache } from './providers/cache/port.js'
import type { EmbeddingBacklog } from './providers/embedder/port.js'
import { backendName, type BackendHealth } from './providers/errors.js'
import type { RedisClient } from './providers/redis-client.js'
import type { Mode } from './schemas/recall-bundle.js'
import type { Startup } from './startup.js'

/** The namespaces' contents as the routes read and change them. */
export interface RuntimeCorpus {
  /** The one write path: every change of a namespace goes through it, whatever door it came in by (src/corpus/write-path.ts). */
  write: WritePath['write']
  /**
   * The generation a read of a mode in a namespace sees and the version of the indexes it reads (part of the response
   * cache key; none when it cannot be known for sure). With `minGeneration`, waits for it. With `read.withoutCatalog` (an
   * unfiltered hybrid retrieve) a namespace this replica has yet to read is answered from the shared stores meanwhile.
   */
  readState(mode: Mode, namespace: string, minGeneration?: number, read?: { withoutCatalog?: boolean }): Promise<ReadState>
  /** Brings this replica's document catalog of a namespace up to the shared stores (nothing for a sole writer). */
  catchUp(namespace: string): Promise<void>
  /** This replica's catalog of each namespace's documents and chunks: a read view, with no method that writes. */
  documents: DocumentCatalogView
  /** Every namespace that holds anything in any store, ascending, with its counts; `include` leaves others out unread. */
  namespaces(include?: (namespace: string) => boolean): Promise<NamespaceCounts[]>
  /** Up to `limit` of those namespaces after the name `after`, only they counted. */
  namespacePage(include: (namespace: string) => boolean, after: string | undefined, limit: number): Promise<NamespaceCounts[]>
  /** A picture of a document (`GET /images/{id}`): its stored bytes and their sniffed type; undefined when absent. */
  image(namespace: string, id: string): Promise<StoredImage | undefined>
}

export interface Runtime {
  config: Config
  /** Mode name -> adapter. */
  modes: ModeTable
  corpus: RuntimeCorpus
  /** Whole answers (the response cache) and query embeddings. */
  cache: Cache
  /** The Redis connection when `REDIS_URL` is set: rate limits, retrieval defaults and evaluation jobs are shared through it. */
  redis?: RedisClient
  /** Each backend's name by the slot it fills. */
  names: BackendNames
  /** Start-up work, run after the server listens; `/readyz` reports it and routes wait for what they need. */
  startup: Startup
  /** The service's metrics: fed by the services and the HTTP layer, served at `/metrics`. */
  metrics: RecallMetrics
  /** The memory budget in use (`MEMORY_LIMIT`): `/readyz` and `/metrics` show it. */
  memory(): MemoryUsage
  /** The query embedder's queue, when it has one (the overload guard reads it). */
  embeddingBacklog(): EmbeddingBacklog | undefined
  health(): Promise<BackendHealth[]>
  close(): Promise<void>
}

/** Each backend's name by the slot it fills. */
export interface BackendNames {
  embedder: string
  vectors: string
  lexical: string
  graph: string
  episodes: string
  cache: string
}

/** The name of each backend, as `/readyz`, metrics and errors give it. */
export function backendNames(config: Config): BackendNames {
  return {
    embedder: backendName('embedder', config.embedder.backend),
    vectors: backendName('vector-store', config.vector.backend),
    lexical: backendName('lexical-index', config.lexical.backend === 'qdrant' ? 'qdrant' : 'bm25'),
    graph: backendName('knowledge-graph', config.graph.backend),
    episodes: backendName('episodic-graph', config.graph.backend),
    cache: backendName('cache', config.cache.redisUrl ? 'redis' : 'memory')
  }
}

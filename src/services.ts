import { join } from 'node:path'
import type { RedisClient } from './providers/redis-client.js'
import type { Config } from './config.js'
import { createModes, modeDeployment, type ModeTable } from './modes.js'
import type { Mode } from './schemas/recall-bundle.js'
import type { Generations, ReadState } from './generations.js'
import { DocumentLibraries } from './corpus/libraries.js'
import { CatalogVersions, SharedCatalog } from './corpus/shared-catalog.js'
import { StoreViews } from './corpus/store-corpus.js'
import { loadDerivationOptions } from './corpus/derived-graph.js'
import { createLlmExtractor } from './corpus/llm-extraction/index.js'
import type { LlmExtractor } from './corpus/llm-extraction/extractor.js'
import { DEFAULT_EPISODE_OPTIONS, type EpisodeDerivationOptions } from './derive/episodes.js'
import { WritePath, type WritePathOptions } from './corpus/write-path.js'
import { NamespaceModels } from './corpus/namespace-models.js'
import { ReadStates } from './corpus/read-states.js'
import type { WriteLock } from './corpus/write-lock.js'
import { generationsFor, redisFor, writeConnectionFor, writeLockFor } from './shared-writes.js'
import { CachedEmbedder, MemoryCache, RedisCache, type Cache, type CacheLogger } from './providers/cache/index.js'
import { createEmbedder } from './providers/embedder/index.js'
import type { Embedder } from './providers/embedder/port.js'
import { backendName, type BackendHealth } from './providers/errors.js'
import { foldHeapsReserved, foldThreadsRunning, setFoldHeapHeadroom, setFoldMemoryLimit, setFoldThreadsAtOnce } from './providers/embedded/fold-gate.js'
import { createEpisodicGraphStore } from './providers/episodic-graph/index.js'
import type { EpisodicGraphStore } from './providers/episodic-graph/port.js'
import { createKnowledgeGraphStore, type KnowledgeGraphStore } from './providers/knowledge-graph/index.js'
import { createLexicalIndexes } from './providers/lexical-index/index.js'
import { lexicalLegOnQdrant, type LexicalLegWiring } from './providers/lexical-index/qdrant-wiring.js'
import { createNeo4jConnection, type Neo4jConnection } from './providers/neo4j/connection.js'
import type { LexicalIndexes } from './providers/lexical-index/port.js'
import { createVectorStore } from './providers/vector-store/index.js'
import type { VectorStore } from './providers/vector-store/port.js'
import { Startup, type StartupLogger } from './startup.js'
import { addStartupSteps } from './service-startup.js'
import { backendNames, type BackendNames } from './backend-names.js'
import { createRecallMetrics, serveGauges, type RecallMetrics } from './metrics.js'
import { IMAGES_COLLECTION } from './corpus/images/image-records.js'
import { deploymentOf, WaitReplicasWatch } from './providers/redis-replicas.js'
import { MemoryBudget } from './memory/budget.js'
import { createEntityVectorStatus, EntityNameFailures, type EntityVectorStatus } from './corpus/entity-vectors.js'

/**
 * A namespace's catalog is kept in its checkpoint file again once no write has changed it for this long (issue 44: a
 * stop that had it all to write at 100k chunks ran past the server's 10 s forced exit).
 */
const CATALOG_IDLE_CHECKPOINT_MS = 30_000

/** The providers of one running service, created from config (or handed in by tests). */
export interface Providers {
  embedder: Embedder
  vectors: VectorStore
  /** One BM25 index per namespace. */
  lexical: LexicalIndexes
  /** The graphrag knowledge graph. */
  graph: KnowledgeGraphStore
  /** The episodic memory graph (Episodes, Facets, FacetPoints, Entities), apart from the knowledge graph. */
  episodes: EpisodicGraphStore
  /** The Neo4j connection the graph stores share, when `GRAPH_BACKEND=neo4j`. */
  neo4j?: Neo4jConnection
}

export interface Services extends Providers {
  config: Config
  /** What the process holds against `MEMORY_LIMIT`; the write path refuses writes that add once it is spent. */
  memory: MemoryBudget
  /** The hybrid corpus of every namespace. */
  documents: DocumentLibraries
  /** Query embeddings and whole responses. */
  cache: Cache
  /** The Redis connection shared by the cache and the rate limiter, when `REDIS_URL` is set. */
  redis?: RedisClient
  /**
   * Per-namespace generations and index versions (in Redis when `REDIS_URL` is set, so every replica shares
   * them): every write records itself there, and a read takes its generation and cache version from there.
   */
  generations: Generations
  /**
   * The generation a read of a mode in a namespace sees and the version of the indexes it reads (part of its
   * response cache key, so a write through any replica invalidates cached answers of that namespace and of
   * no other); no version when it cannot be known for sure (the answer is then not cached). With
   * `minGeneration`, waits for it (see `Generations.readState`). graphrag's version also carries its store's.
   * With `read.withoutCatalog` (an unfiltered hybrid retrieve), a namespace this replica has yet to read is not
   * waited for: its retrieves are answered from the shared stores meanwhile (`storeViews`).
   */
  readState(mode: Mode, namespace: string, minGeneration?: number, read?: { withoutCatalog?: boolean }): Promise<ReadState>
  /**
   * With several replicas over Qdrant (`REPLICAS`>1), brings this replica's document catalog of a namespace up
   * to the shared stores before it is read or written (src/corpus/read-states.ts); `readState('hybrid')`
   * does it too. Otherwise nothing: this process is the only writer, its catalog is current by construction.
   */
  catchUpDocuments(namespace: string): Promise<void>
  /** The catalog kept up to the shared stores, when there is one (several replicas over Qdrant). */
  sharedCatalog?: SharedCatalog
  /**
   * With the shared catalog and the lexical leg on Qdrant: the namespaces whose catalog is being read for the
   * first time, answered from the stores meanwhile (src/corpus/store-corpus.ts).
   */
  storeViews?: StoreViews
  /**
   * The one write path: every change of a namespace (documents, graph, Episodes, conversations, the namespace's
   * removal) goes through `writePath.write`, whatever door it came in by (src/corpus/write-path.ts).
   */
  writePath: WritePath
  /** Mode name -> adapter, over the providers above. */
  modes: ModeTable
  /** How far each namespace's entity names are embedded (`ENTITY_VECTORS`); absent when off. */
  entityVectors?: EntityVectorStatus
  /** The service's metrics: fed by the services and the HTTP layer, served at `/metrics`. */
  metrics: RecallMetrics
  /** Each backend's name by the slot it fills. */
  names: BackendNames
  /** Start-up work, run after the server listens; `/readyz` reports it and routes wait for what they need. */
  startup: Startup
  health(): Promise<BackendHealth[]>
  close(): Promise<void>
}

export interface ServiceHooks {
  logger?: CacheLogger & StartupLogger
  /** Load the demo world into empty stores as start-up steps, when `DEMO_DATA` allows (the server; not the CLI). */
  loadDemo?: boolean
  /** A start-up step failed in a way retrying cannot fix (see `StartupOptions.onFatal`). */
  onFatal?: (step: string, error: Error) => void
  /**
   * Leave the embedding model to its first use instead of loading it as a start-up step (the CLI's `--direct`: a run in
   * which every file is unchanged embeds nothing, so it never loads the model).
   */
  lazyEmbedder?: boolean
  /**
   * The write lock, instead of the configured one (a lease lock in Redis with `REPLICAS`>1 and `REDIS_URL`, else
   * turns within this process): the concurrent-writer tests' control run takes it away with `NO_LOCK`.
   */
  writeLock?: WriteLock
  /** Replaces some of the providers config names (tests: a leg that fails, an embedder that counts). */
  providers?: (base: Providers) => Providers
  /** Wraps what the services tell the lexical leg on Qdrant (tests: count its stamp reads). */
  lexicalWiring?: (wiring: LexicalLegWiring) => LexicalLegWiring
  /** Episode derivation options over `DEFAULT_EPISODE_OPTIONS` (benches: the vector sources compared in bench/derived-quality.ts). */
  episodeOptions?: Partial<EpisodeDerivationOptions>
}

/**
 * The providers config names. `lexicalWiring` is what the services tell the lexical leg on Qdrant (its statistics
 * stamp, when its local copy may answer, its metrics); without it (a script reading the stores) none of that is used.
 */
export function createProviders(config: Config, lexicalWiring: LexicalLegWiring = {}): Providers {
  const embedder = createEmbedder(
    config.embedder.backend === 'local'
      ? {
          backend: 'local', modelDir: config.embedder.modelDir, modelName: config.embedder.model, threads: config.embedder.threads, spinning: config.embedder.spinning,
          sessions: config.embedder.sessions, pool: config.embedder.pool, queriesHere: config.embedder.queriesHere,
          ...(config.embedder.weights === 'shared' ? { weightsDir: join(config.dataDir, 'embedding-weights') } : {})
        }
      : {
          backend: 'openai', url: config.embedder.url, model: config.embedder.model,
          timeoutMs: config.timeouts.embedding, passageTimeoutMs: config.timeouts.embeddingWrite,
          ...(config.embedder.apiKey ? { apiKey: config.embedder.apiKey } : {}),
          ...(config.embedder.dimensions ? { dimensions: config.embedder.dimensions } : {})
        }
  )
  const onQdrant = config.vector.backend === 'qdrant' && config.lexical.backend === 'qdrant'
    ? lexicalLegOnQdrant(config, `${config.collectionPrefix}chunks`, { localCopy: config.lexical.localCopy, ...lexicalWiring }) : undefined
  const vectors = createVectorStore(
    config.vector.backend === 'qdrant'
      ? {
          backend: 'qdrant', url: config.vector.url, timeoutMs: config.timeouts.vector, writeTimeoutMs: config.timeouts.vectorWrite,
          cluster: config.vector.cluster,
          ...(config.vector.apiKey ? { apiKey: config.vector.apiKey } : {}),
          ...(onQdrant ? { sparse: onQdrant.sparse } : {})
        }
      : { backend: 'memory', dir: join(config.dataDir, 'vectors'), precision: config.vector.precision, oversample: config.vector.oversample }
  )
  const lexical = onQdrant?.lexical ?? createLexicalIndexes({
    dir: join(config.dataDir, `bm25${config.lexical.folderSuffix}`), name: 'chunks', analyzer: config.lexical.analyzer
  })
  if (config.graph.backend === 'neo4j') {
    const neo4j = createNeo4jConnection({
      uri: config.graph.uri, user: config.graph.user, password: config.graph.password,
      timeoutMs: config.timeouts.graph, writeTimeoutMs: config.timeouts.graphWrite,
      ...(config.graph.database ? { database: config.graph.database } : {})
    })
    return {
      embedder, vectors, lexical, neo4j,
      graph: createKnowledgeGraphStore({ backend: 'neo4j', neo4j }),
      episodes: createEpisodicGraphStore({ backend: 'neo4j', connection: neo4j })
    }
  }
  setFoldThreadsAtOnce(config.graph.foldThreads)
  setFoldMemoryLimit(config.memory.bytes)
  return {
    embedder, vectors, lexical,
    graph: createKnowledgeGraphStore({ backend: 'memory', dir: join(config.dataDir, 'graph'), thread: config.graph.thread }),
    episodes: createEpisodicGraphStore({ backend: 'memory', file: join(config.dataDir, 'episodic', 'graph.json'), thread: config.graph.episodicThread })
  }
}

/** What the write path derives after a documents write, Episodes included, as config asks. */
function derivationFor(config: Config, hooks: ServiceHooks, llm: () => LlmExtractor): Pick<WritePathOptions, 'derivation' | 'llm' | 'episodeDerivation'> {
  // Several replicas share a derived graph only in Neo4j: one each kept in its own DATA_DIR would differ replica to replica.
  const derives = config.replicas.count === 1 || config.graph.backend === 'neo4j'
  if (!derives || (!config.derivation.enabled && !config.derivation.episodes)) return {}
  const derivation = loadDerivationOptions(config.derivation.dictionaryFile, { ngramMinCount: config.derivation.ngramMinCount })
  const links = config.derivation.episodeEntityLinks
  return {
    ...(config.derivation.enabled ? { derivation, ...(config.derivation.llm ? { llm: llm() } : {}) } : {}),
    ...(config.derivation.episodes
      ? {
          episodeDerivation: {
            derivation,
            episodes: {
              ...DEFAULT_EPISODE_OPTIONS, entitiesPerFacet: links.perFacet, entitiesPerEpisode: links.perEpisode, entityMinMentions: links.minMentions,
              ...hooks.episodeOptions
            }
          }
        }
      : {})
  }
}

/**
 * The composition root: the services of one process, each built once with its final options and in the order they
 * depend on each other, without touching a backend. Their start-up work (src/service-startup.ts) is registered on
 * `startup`, which the caller starts: the server after it listens, `openServices` at once.
 */
export function createServices(config: Config, hooks: ServiceHooks = {}): Services {
  const { logger } = hooks
  // counters first: the budget's heap release, the cache, the lexical leg, the embedder and the catalog feed them; the
  // gauges follow their sources
  const metrics = createRecallMetrics()
  const memory = new MemoryBudget(config.memory, undefined, {
    released: (released) => {
      metrics.heapReleased(released)
      logger?.info(released, 'heap released: the pages the writes left resident given back')
    },
    skipped: (because) => metrics.heapReleaseSkipped(because),
    foldsRunning: foldThreadsRunning,
    foldHeapsReserved,
    headroom: setFoldHeapHeadroom
  })
  const redis = redisFor(config)
  const writeRedis = writeConnectionFor(config, redis)
  const cache: Cache = redis
    ? new RedisCache({ client: redis, ...(logger ? { logger } : {}), onFailure: () => metrics.backendError(backendName('cache', 'redis')) })
    : new MemoryCache({ maxEntries: config.cache.maxEntries })
  const generations = generationsFor(config, redis, writeRedis, logger)
  // Over shared stores each namespace's catalog copy is read on its first use (start-up does not grow with the corpus)
  // and kept up by the change log; one process reads every namespace at start-up (docs/scale-out-state.md).
  const sharedStores = config.vector.backend === 'qdrant' && config.replicas.count > 1
  const catalogVersions = new CatalogVersions()
  const wiring: LexicalLegWiring = {
    // Every document write bumps the namespace's hybrid version after its points landed: while it stands, the lexical
    // leg on Qdrant reuses the statistics it read (docs/scale-out.md). Only a version all replicas share proves that.
    ...(config.replicas.count === 1 || redis
      ? { statisticsStamp: async (namespace: string) => (await generations.readState('hybrid', namespace)).version }
      : {}),
    // The local copy holds every change this process was handed: all of them when it is the only writer; with several,
    // all up to the version the shared catalog was read at (docs/scale-out.md, "The local copy").
    localCopyComplete: config.replicas.count === 1 ? 'sole-writer' : (namespace, stamp) => catalogVersions.versionOf(namespace) === stamp,
    onSearch: (path) => metrics.lexicalSearch(path)
  }
  const base = createProviders(config, hooks.lexicalWiring ? hooks.lexicalWiring(wiring) : wiring)
  const providers = hooks.providers ? hooks.providers(base) : base
  const embedder = config.cache.embeddingTtlSeconds > 0
    ? new CachedEmbedder(providers.embedder, cache, { ttlSeconds: config.cache.embeddingTtlSeconds, onLookup: (hit) => metrics.cacheResult('embedding', hit) })
    : providers.embedder
  const documents = new DocumentLibraries({ ...providers, embedder }, {
    collection: `${config.collectionPrefix}chunks`, ...(sharedStores ? { lazy: true } : {}),
    // the catalog's checkpoint holds only while this process is the vector store's one writer (the embedded store)
    ...(config.vector.backend === 'memory' ? { checkpointDir: join(config.dataDir, 'catalog') } : {})
  })
  const entityNameFailures = config.graphrag.entityVectors ? new EntityNameFailures() : undefined
  const entityVectors = entityNameFailures ? createEntityVectorStatus(providers, config.collectionPrefix, entityNameFailures) : undefined
  serveGauges(metrics, {
    memory: () => memory.usage(), embeddingQueue: () => embedder.backlog?.(), corpus: () => documents.sizes(),
    ...(entityVectors
      ? { entityNames: async () => Promise.all((await providers.graph.namespaces()).map(async (namespace) => ({ namespace, ...await entityVectors.namespace(namespace) }))) }
      : {})
  })
  const catalog = sharedStores
    ? new SharedCatalog(documents, {
        versions: catalogVersions, changes: generations, maxChangedDocuments: config.replicas.changeLog.maxCatchUpDocuments,
        onCatchUp: (kind, reason, ms, phases) => metrics.catalogCatchUp(kind, reason, ms, phases),
        onCatchUpSources: (sources) => metrics.catalogCatchUpSources(sources)
      })
    : undefined
  // Other replicas' writes are caught up as they are recorded, so that a read seldom has to (docs/scale-out-state.md).
  if (catalog && config.replicas.followWrites) generations.follow((namespace, version) => catalog.written(namespace, version))
  // The first read of a large namespace takes seconds: unfiltered retrieves need no catalog to rank on Qdrant.
  const storeViews = catalog && providers.lexical.shared
    ? new StoreViews({ vectors: providers.vectors, lexical: providers.lexical }, documents.collection)
    : undefined
  if (config.cache.responseCacheOff) logger?.warn({ replicas: config.replicas.count }, config.cache.responseCacheOff)
  const namespaceModels = new NamespaceModels(providers.vectors, { ...config.namespaceModels, model: embedder.model })
  const reads = new ReadStates({
    generations, namespaceModels, documents, graph: providers.graph, replicas: config.replicas.count, sharedGenerations: redis !== undefined,
    ...(catalog ? { catalog } : {}), ...(storeViews ? { storeViews } : {}), onStoreViewRead: () => metrics.storeViewRead()
  })
  const writePath = new WritePath({
    documents, graph: providers.graph, episodes: providers.episodes, vectors: providers.vectors, embedder, generations, config,
    catchUpDocuments: (namespace) => reads.catchUp(namespace)
  }, {
    lock: hooks.writeLock ?? writeLockFor(config, redis, writeRedis),
    namespaceModels,
    budget: memory,
    ...(entityNameFailures && entityVectors ? { entityNames: { failures: entityNameFailures, status: entityVectors } } : {}),
    // On Qdrant a write is several store calls: a process killed between them finishes it at restart.
    ...(config.vector.backend === 'qdrant' ? { journalDir: join(config.dataDir, 'journal') } : {}),
    ...(config.failpoints.afterJournal ? { afterJournal: () => process.kill(process.pid, 'SIGKILL') } : {}),
    ...(config.failpoints.afterEntityJournal ? { afterEntityJournal: () => process.kill(process.pid, 'SIGKILL') } : {}),
    ...derivationFor(config, hooks, () => createLlmExtractor(config.derivation.llm!, join(config.dataDir, 'llm-extraction'), metrics))
  })
  const names = backendNames(config)
  const modes = createModes({
    vectors: providers.vectors, embedder, graph: providers.graph, episodes: providers.episodes,
    // while a namespace's catalog is first read, an unfiltered retrieve reads the stores (src/corpus/store-corpus.ts)
    corpus: (namespace: string) => documents.get(namespace) ?? storeViews?.view(namespace),
    images: `${config.collectionPrefix}${IMAGES_COLLECTION}`
  }, modeDeployment(config, names))
  // Replicas that must confirm every lock and record (WAIT): a deployment without them is refused at start-up, not at each write.
  const replicaWatch = writeRedis && config.cache.redisUrl && config.cache.redisWait.replicas > 0
    ? new WaitReplicasWatch({ client: writeRedis, wanted: config.cache.redisWait.replicas, deployment: deploymentOf(config.cache.redisUrl), ...(logger ? { logger } : {}) })
    : undefined
  const startup = new Startup({ ...(logger ? { logger } : {}), ...(hooks.onFatal ? { onFatal: hooks.onFatal } : {}) })
  const demo = { ...providers, config, documents, writePath }
  addStartupSteps(startup, {
    config, embedder: providers.embedder, vectors: providers.vectors, graph: providers.graph, episodes: providers.episodes, documents, writePath, modes,
    ...(hooks.loadDemo === true && config.demoData ? { demo } : {}),
    ...(writeRedis ? { writeRedis } : {}), ...(replicaWatch ? { replicaWatch } : {}), ...(logger ? { logger } : {}),
    catchUp: (namespace) => reads.catchUp(namespace), lazyEmbedder: hooks.lazyEmbedder === true
  })
  // the catalogs kept in their files once start-up has read them, and again when idle after writes (not at the stop alone)
  void startup.settled().then(() => documents.keepCheckpoints(CATALOG_IDLE_CHECKPOINT_MS))
  return {
    ...providers,
    ...(entityVectors ? { entityVectors } : {}),
    embedder,
    config,
    memory,
    documents,
    cache,
    ...(redis ? { redis } : {}),
    names,
    startup,
    generations,
    ...(catalog ? { sharedCatalog: catalog } : {}),
    ...(storeViews ? { storeViews } : {}),
    readState: (mode, namespace, minGeneration, read) => reads.readState(mode, namespace, minGeneration, read),
    catchUpDocuments: (namespace) => reads.catchUp(namespace),
    writePath,
    modes,
    metrics,
    async health() {
      return Promise.all([
        providers.embedder.health(), providers.vectors.health(), providers.lexical.health(), providers.graph.health(),
        providers.episodes.health(), cache.health(), ...(replicaWatch ? [replicaWatch.health()] : [])
      ])
    },
    async close() {
      documents.stopKeeping()
      replicaWatch?.close()
      memory.close()
      // each part of the stop logs its time: a supervisor's grace period (the server's own forced exit: 10 s) must hold it all
      const timed = async (part: string, run: () => Promise<unknown>) => {
        const started = performance.now()
        await run()
        logger?.info({ stop: part, ms: Math.round(performance.now() - started) }, `stop: ${part}`)
      }
      await timed('start-up', () => startup.close())
      await timed('write path', () => writePath.close())
      // the catalogs kept for the next start-up (the writes have landed; a failure only costs that start-up a scroll)
      await timed('catalog checkpoint', () => documents.checkpoint().catch(() => undefined))
      await Promise.allSettled([
        timed('embedder', () => embedder.close()), timed('vectors', () => providers.vectors.close()), timed('lexical', () => providers.lexical.close()),
        timed('knowledge graph', () => providers.graph.close()), timed('episodes', () => providers.episodes.close()), cache.close(), generations.close()
      ])
      for (const client of new Set([redis, writeRedis])) if (client) await client.quit().catch(() => client.disconnect())
      // prom-client's GC-duration collector observes GC for the rest of the process and holds the registry, whose
      // gauges read the stores: emptied, the registry no longer keeps closed services alive (a CLI run, tests, benches)
      metrics.registry.clear()
    }
  }
}

/** Creates the services and waits until each start-up step has made its first attempt (tests, the CLI). */
export async function openServices(config: Config, hooks: ServiceHooks = {}): Promise<Services> {
  const services = createServices(config, hooks)
  services.startup.start()
  await services.startup.settled()
  return services
}

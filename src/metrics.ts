import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'
import type { EmbeddingBacklog } from './providers/embedder/port.js'
import { compactionWaits } from './providers/embedded/task-queue.js'
import type { MemoryUsage } from './memory/budget.js'
import type { HeapReleased, HeapReleaseSkip } from './memory/heap-release.js'

type CacheKind = 'embedding' | 'response'

/**
 * How a document ingest ended: `written` (some document written), `unchanged` (every document held already as sent),
 * `refused` (a 400 or 413: nothing written), `failed` (a backend failed; a job's batches before stay written),
 * `cancelled` (a job cancelled: the documents before its batch in flight's end are written).
 */
export type IngestOutcome = 'written' | 'unchanged' | 'refused' | 'failed' | 'cancelled'

/** One namespace's hybrid corpus as this process holds it. */
interface CorpusSize { namespace: string; documents: number; chunks: number }

/** One backend step of a retrieval, as reported in a response's `legs`. */
interface LegObservation {
  name: string
  status: string
  took_ms: number
}

/**
 * The service's Prometheus metrics: made once by the composition root (src/services.ts), fed by the services
 * (cache lookups, backend errors, catalog catch-ups, lexical searches) and by the HTTP layer, served at `/metrics`.
 */
export interface RecallMetrics {
  readonly registry: Registry
  /** Records one HTTP request under `recall_request_duration_seconds{route,mode,status}`. */
  observeRequest(route: string, mode: string, status: number, seconds: number): void
  /** Records each leg's latency under `recall_leg_duration_seconds{mode,leg,status}`. */
  observeLegs(mode: string, legs: readonly LegObservation[]): void
  /** Counts one cache lookup under `recall_cache_requests_total{kind,result}`. */
  cacheResult(kind: CacheKind, hit: boolean): void
  /** Counts one failed backend call under `recall_backend_errors_total{backend}`. */
  backendError(backend: string): void
  /** Counts each leg with status `error` or `timeout` against its backend (`backends`: leg name -> backend name). */
  failedLegs(backends: Readonly<Record<string, string>>, legs: readonly LegObservation[]): void
  /**
   * Records one catch-up of a replica's catalog under `recall_catalog_catch_up_seconds{kind,reason}`, and each of its
   * phases (ms by name) under `recall_catalog_catch_up_phase_seconds{phase}` (src/corpus/shared-catalog.ts).
   */
  catalogCatchUp(kind: 'documents' | 'namespace', reason: string, ms: number, phases?: Readonly<Record<string, number | undefined>>): void
  /** Counts the documents one catch-up applied from the write window and read back from the vector store, under `recall_catalog_catch_up_documents_total{source}`. */
  catalogCatchUpSources(sources: { window: number; store: number }): void
  /** Counts one lexical search on Qdrant under `recall_lexical_searches_total{path}` (`local-copy`, or `qdrant:<why>`). */
  lexicalSearch(path: string): void
  /** Counts one hybrid retrieve that did not wait for the namespace's first catalog read, under `recall_store_view_reads_total`. */
  storeViewRead(): void
  /**
   * Counts one document ingest (a request, a job, an MCP call) under `recall_ingests_total{outcome}`, and its documents
   * under `recall_ingest_documents_total{outcome}` (`written`, `unchanged`, `refused`).
   */
  ingest(outcome: IngestOutcome, documents: { written: number; unchanged: number; refused: number }): void
  /**
   * Counts the pictures of one documents write under `recall_ingest_images_total{outcome}` (`written`, `unchanged`,
   * `small`, `refused`, `removed`: src/corpus/appliers/images.ts).
   */
  images(counts: Readonly<Record<'written' | 'unchanged' | 'small' | 'refused' | 'removed', number>>): void
  /** Counts one MCP tool call under `recall_mcp_tool_calls_total{tool,outcome}` (`ok`, `error`, `invalid`). */
  toolCall(tool: string, outcome: 'ok' | 'error' | 'invalid'): void
  /**
   * Counts one call of the extraction LLM under `recall_llm_extraction_calls_total{outcome}` and the tokens its server
   * counted under `recall_llm_extraction_tokens_total{kind}` (`prompt`, `completion`): docs/llm-extraction.md.
   */
  llmCall(outcome: string, tokens: { prompt_tokens: number; completion_tokens: number }): void
  /**
   * Records one heap release (src/memory/heap-release.ts): its pause under `recall_memory_release_pause_seconds`, the
   * resident bytes it gave back under `recall_memory_release_freed_bytes_total` and what it was predicted to give back
   * under `recall_memory_release_predicted_bytes_total`.
   */
  heapReleased(report: HeapReleased): void
  /**
   * Counts one quiet time that ran no heap release under `recall_memory_releases_skipped_total{reason}`: `gain` (predicted
   * to give back less than the threshold) or `heap` (the heap in use above `MEMORY_RELEASE_MAX_HEAP`).
   */
  heapReleaseSkipped(because: HeapReleaseSkip): void
}

/** What the gauges read at each scrape, each given when the gauges are made (`serveGauges`). */
export interface MetricsGauges {
  /**
   * The embedder's queue (the one in front of all its sessions, as the overload guard reads it), under
   * `recall_embedding_queued_runs` and `recall_embedding_oldest_wait_seconds` (0 while it answers none).
   */
  embeddingQueue?: () => EmbeddingBacklog | undefined
  /**
   * The memory budget (`MEMORY_LIMIT`), under `recall_memory_limit_bytes`, `recall_memory_held_bytes{kind}` (`rss`, `heap`, `heap_headroom`) and
   * `recall_memory_refuse_at_bytes{kind}` (`rss`, `heap`), `recall_memory_refusing_writes` (1 or 0) and
   * `recall_memory_refused_writes`.
   */
  memory?: () => MemoryUsage
  /**
   * The namespaces this process holds a catalog of (with several replicas over Qdrant, those it has read so far),
   * under `recall_namespace_documents{namespace}` and `recall_namespace_chunks{namespace}`.
   */
  corpus?: () => Iterable<CorpusSize>
  /**
   * Each namespace's distinct entity names and aliases by the state of their vectors (`pending`, `done`, `failed`;
   * docs/derivation.md, "Entities found by meaning"), under `recall_entity_names{namespace,state}`.
   */
  entityNames?: () => Promise<ReadonlyArray<{ namespace: string; pending: number; done: number; failed: number }>>
}

export interface RecallMetricsOptions {
  /** Also export Node's process metrics (CPU, memory, event loop lag, GC). Default true. */
  defaultMetrics?: boolean
  /** Histogram buckets in seconds. Default 1 ms to 10 s, roughly 2.5x apart. */
  buckets?: readonly number[]
}

const DEFAULT_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

export function createRecallMetrics(options: RecallMetricsOptions = {}): RecallMetrics {
  const buckets = [...(options.buckets ?? DEFAULT_BUCKETS)]
  const registry = new Registry()
  if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: registry })

  const requestDuration = new Histogram({
    name: 'recall_request_duration_seconds',
    help: 'HTTP request latency by route pattern, retrieval mode and status code',
    labelNames: ['route', 'mode', 'status'] as const,
    buckets,
    registers: [registry]
  })
  const legDuration = new Histogram({
    name: 'recall_leg_duration_seconds',
    help: 'Latency of each retrieval leg (backend step) by mode, leg and outcome',
    labelNames: ['mode', 'leg', 'status'] as const,
    buckets,
    registers: [registry]
  })
  const cacheRequests = new Counter({
    name: 'recall_cache_requests_total',
    help: 'Cache lookups by kind (embedding, response) and result (hit, miss)',
    labelNames: ['kind', 'result'] as const,
    registers: [registry]
  })
  const backendErrors = new Counter({
    name: 'recall_backend_errors_total',
    help: 'Failed backend calls by backend',
    labelNames: ['backend'] as const,
    registers: [registry]
  })
  const catalogCatchUps = new Histogram({
    name: 'recall_catalog_catch_up_seconds',
    help: 'Catch-ups of a replica\'s document catalog after other replicas wrote: the changed documents from the change log, or the whole namespace',
    labelNames: ['kind', 'reason'] as const,
    buckets,
    registers: [registry]
  })
  const catalogCatchUpPhases = new Histogram({
    name: 'recall_catalog_catch_up_phase_seconds',
    help: 'Where catch-ups of a replica\'s catalog spent their time: log (the change log\'s read), queued (behind this replica\'s own writes), store (the vector store\'s read), lexical (the lexical index brought up to it)',
    labelNames: ['phase'] as const,
    buckets,
    registers: [registry]
  })
  const catalogCatchUpDocuments = new Counter({
    name: 'recall_catalog_catch_up_documents_total',
    help: 'Documents that catch-ups from the change log brought up to date, by where their chunks came from: window (the write window in Redis) or store (read back from the vector store)',
    labelNames: ['source'] as const,
    registers: [registry]
  })
  const lexicalSearches = new Counter({
    name: 'recall_lexical_searches_total',
    help: 'Lexical searches with LEXICAL_BACKEND=qdrant by the path that answered: local-copy, or qdrant:copy-off, qdrant:copy-not-ready, qdrant:copy-behind',
    labelNames: ['path'] as const,
    registers: [registry]
  })
  const storeViewReads = new Counter({
    name: 'recall_store_view_reads_total',
    help: 'Hybrid retrieves that did not wait for this replica\'s first read of the namespace\'s catalog: answered from the shared stores (or the response cache)',
    registers: [registry]
  })
  const toolCalls = new Counter({
    name: 'recall_mcp_tool_calls_total',
    help: 'MCP tool calls by tool and outcome (ok, error: a refusal or failure answered as a tool error, invalid: arguments refused)',
    labelNames: ['tool', 'outcome'] as const,
    registers: [registry]
  })
  const llmCalls = new Counter({
    name: 'recall_llm_extraction_calls_total',
    help: 'Calls of the extraction LLM by outcome (ok, malformed: not the JSON asked for, retryable: 429/408/5xx/timeout/no connection, refused: another 4xx)',
    labelNames: ['outcome'] as const,
    registers: [registry]
  })
  const llmTokens = new Counter({
    name: 'recall_llm_extraction_tokens_total',
    help: 'Tokens of the extraction LLM\'s calls as its server counts them (usage), by kind (prompt, completion)',
    labelNames: ['kind'] as const,
    registers: [registry]
  })
  const ingests = new Counter({
    name: 'recall_ingests_total',
    help: 'Document ingests (requests, jobs, MCP calls) by outcome: written, unchanged, refused, failed, cancelled',
    labelNames: ['outcome'] as const,
    registers: [registry]
  })
  const ingestImages = new Counter({
    name: 'recall_ingest_images_total',
    help: 'Pictures of written documents, by outcome: written (stored and embedded), unchanged (held already), small (under the size floor, not stored), refused (unreadable), removed (no longer in their document, or their document deleted)',
    labelNames: ['outcome'] as const,
    registers: [registry]
  })
  const ingestDocuments = new Counter({
    name: 'recall_ingest_documents_total',
    help: 'Documents sent to be ingested, by outcome: written (new or replaced), unchanged (held already as sent), refused',
    labelNames: ['outcome'] as const,
    registers: [registry]
  })
  // a pause of the whole process, reads included: up to minutes at a large heap under load
  const releasePauses = new Histogram({
    name: 'recall_memory_release_pause_seconds',
    help: 'Heap releases (MEMORY_RELEASE_AFTER_MS) by how long each paused the whole process, reads included',
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [registry]
  })
  const releaseFreed = new Counter({
    name: 'recall_memory_release_freed_bytes_total',
    help: 'Resident memory the heap releases gave back (resident before each minus after)',
    registers: [registry]
  })
  const releasePredicted = new Counter({
    name: 'recall_memory_release_predicted_bytes_total',
    help: 'What the heap releases that ran were predicted to give back (V8\'s page pool and unused committed heap before each)',
    registers: [registry]
  })
  const releasesSkipped = new Counter({
    name: 'recall_memory_releases_skipped_total',
    help: 'Quiet times that ran no heap release, by reason: gain (predicted to give back less than the threshold), heap (the heap in use above MEMORY_RELEASE_MAX_HEAP)',
    labelNames: ['reason'] as const,
    registers: [registry]
  })
  releaseFreed.inc(0)
  releasePredicted.inc(0)
  for (const reason of ['gain', 'heap']) releasesSkipped.labels({ reason }).inc(0)
  for (const outcome of ['written', 'unchanged', 'refused', 'failed', 'cancelled']) ingests.labels({ outcome }).inc(0)
  for (const outcome of ['written', 'unchanged', 'refused']) ingestDocuments.labels({ outcome }).inc(0)
  for (const outcome of ['written', 'unchanged', 'small', 'refused', 'removed']) ingestImages.labels({ outcome }).inc(0)
  // Series that exist from the start, so rate() and hit ratios work before the first lookup.
  for (const kind of ['embedding', 'response']) {
    for (const result of ['hit', 'miss']) cacheRequests.labels({ kind, result }).inc(0)
  }

  return {
    registry,
    observeRequest(route, mode, status, seconds) {
      requestDuration.labels({ route, mode, status: String(status) }).observe(seconds)
    },
    observeLegs(mode, legs) {
      for (const leg of legs) {
        legDuration.labels({ mode, leg: leg.name, status: leg.status }).observe(leg.took_ms / 1000)
      }
    },
    cacheResult(kind, hit) {
      cacheRequests.labels({ kind, result: hit ? 'hit' : 'miss' }).inc()
    },
    backendError(backend) {
      backendErrors.labels({ backend }).inc()
    },
    catalogCatchUp(kind, reason, ms, phases = {}) {
      catalogCatchUps.labels({ kind, reason }).observe(ms / 1000)
      for (const [phase, phaseMs] of Object.entries(phases)) if (phaseMs !== undefined) catalogCatchUpPhases.labels({ phase }).observe(phaseMs / 1000)
    },
    catalogCatchUpSources({ window, store }) {
      if (window > 0) catalogCatchUpDocuments.labels({ source: 'window' }).inc(window)
      if (store > 0) catalogCatchUpDocuments.labels({ source: 'store' }).inc(store)
    },
    lexicalSearch(path) {
      lexicalSearches.labels({ path }).inc()
    },
    storeViewRead() {
      storeViewReads.inc()
    },
    ingest(outcome, documents) {
      ingests.labels({ outcome }).inc()
      for (const [kind, n] of Object.entries(documents)) if (n > 0) ingestDocuments.labels({ outcome: kind }).inc(n)
    },
    images(counts) {
      for (const [outcome, n] of Object.entries(counts)) if (n > 0) ingestImages.labels({ outcome }).inc(n)
    },
    toolCall(tool, outcome) {
      toolCalls.labels({ tool, outcome }).inc()
    },
    heapReleased(report) {
      releasePauses.observe(report.ms / 1000)
      releaseFreed.inc(Math.max(0, report.rss_before_bytes - report.rss_after_bytes))
      releasePredicted.inc(report.predicted_gain_bytes)
    },
    heapReleaseSkipped(because) {
      releasesSkipped.labels({ reason: because }).inc()
    },
    llmCall(outcome, tokens) {
      llmCalls.labels({ outcome }).inc()
      llmTokens.labels({ kind: 'prompt' }).inc(tokens.prompt_tokens)
      llmTokens.labels({ kind: 'completion' }).inc(tokens.completion_tokens)
    },
    failedLegs(backends, legs) {
      for (const leg of legs) {
        if (leg.status === 'error' || leg.status === 'timeout') backendErrors.labels({ backend: backends[leg.name] ?? leg.name }).inc()
      }
    }
  }
}

/** The gauges of `metrics`' registry, each reading its source at each scrape; made once, when the sources exist. */
export function serveGauges(metrics: RecallMetrics, sources: MetricsGauges): void {
  const { registry } = metrics
  const readEmbeddingQueue = sources.embeddingQueue ?? (() => undefined)
  const readMemory = sources.memory
  const corpus = sources.corpus ?? (() => [])
  new Gauge({
    name: 'recall_embedding_queued_runs',
    help: 'Embedding runs waiting for a free session of the local model (one queue for all sessions); 0 for a remote embedder',
    registers: [registry],
    collect() {
      this.set(readEmbeddingQueue()?.queued ?? 0)
    }
  })
  new Gauge({
    name: 'recall_embedding_oldest_wait_seconds',
    help: 'How long the oldest embedding run still waiting for a session has waited',
    registers: [registry],
    collect() {
      this.set((readEmbeddingQueue()?.oldestWaitMs ?? 0) / 1000)
    }
  })
  new Gauge({
    name: 'recall_compaction_wait_seconds_max',
    help: 'The longest one task of an embedded store waited behind compaction steps on the store\'s queue since start, by store',
    labelNames: ['store'] as const,
    registers: [registry],
    collect() {
      for (const [store, ms] of Object.entries(compactionWaits.maxMsByStore)) this.labels({ store }).set(ms / 1000)
    }
  })
  new Gauge({
    name: 'recall_compaction_wait_seconds_sum',
    help: 'Time the embedded stores\' tasks waited behind compaction steps on their queues since start, summed over tasks',
    registers: [registry],
    collect() {
      this.set(compactionWaits.totalMs / 1000)
    }
  })
  const memoryGauge = (name: string, help: string, value: (u: MemoryUsage) => number) => new Gauge({
    name, help, registers: [registry],
    collect() {
      if (readMemory) this.set(value(readMemory()))
    }
  })
  memoryGauge('recall_memory_limit_bytes', 'The resident memory the process may hold (MEMORY_LIMIT, else the cgroup limit or 75% of the machine)', (u) => u.limit_bytes)
  memoryGauge('recall_memory_refusing_writes', '1 while writes that add are refused with 507 (the memory budget is spent), else 0', (u) => (u.refusing_writes ? 1 : 0))
  memoryGauge('recall_memory_refused_writes', 'Writes refused with 507 since start because the memory budget was spent', (u) => u.refused_writes)
  new Gauge({
    name: 'recall_memory_held_bytes',
    help: 'Memory the process holds, by kind: rss (resident), heap (JavaScript heap kept by the last full collection), heap_headroom (what the heap may still take before its next full collection, counted with rss against the limit)',
    labelNames: ['kind'] as const,
    registers: [registry],
    collect() {
      if (!readMemory) return
      const u = readMemory()
      this.labels({ kind: 'rss' }).set(u.rss_bytes)
      this.labels({ kind: 'heap' }).set(u.heap_used_bytes)
      this.labels({ kind: 'heap_headroom' }).set(u.heap_headroom_bytes)
    }
  })
  new Gauge({
    name: 'recall_memory_refuse_at_bytes',
    help: 'Where writes that add start to be refused, by kind: rss (90% of the limit), heap (85% of the V8 heap limit)',
    labelNames: ['kind'] as const,
    registers: [registry],
    collect() {
      if (!readMemory) return
      const u = readMemory()
      this.labels({ kind: 'rss' }).set(u.rss_refuse_at_bytes)
      this.labels({ kind: 'heap' }).set(u.heap_refuse_at_bytes)
    }
  })
  new Gauge({
    name: 'recall_namespace_documents',
    help: 'Documents of each namespace\'s hybrid corpus, as this process holds it',
    labelNames: ['namespace'] as const,
    registers: [registry],
    collect() {
      this.reset()
      for (const c of corpus()) this.labels({ namespace: c.namespace }).set(c.documents)
    }
  })
  new Gauge({
    name: 'recall_namespace_chunks',
    help: 'Chunks of each namespace\'s hybrid corpus, as this process holds it',
    labelNames: ['namespace'] as const,
    registers: [registry],
    collect() {
      this.reset()
      for (const c of corpus()) this.labels({ namespace: c.namespace }).set(c.chunks)
    }
  })
  const entityNames = sources.entityNames ?? (async () => [])
  new Gauge({
    name: 'recall_entity_names',
    help: 'Distinct entity names and aliases of each namespace\'s knowledge graph, by the state of their vectors: pending (not embedded yet), done, failed (the last attempt failed; also counted pending)',
    labelNames: ['namespace', 'state'] as const,
    registers: [registry],
    async collect() {
      this.reset()
      for (const c of await entityNames().catch(() => [])) {
        for (const state of ['pending', 'done', 'failed'] as const) this.labels({ namespace: c.namespace, state }).set(c[state])
      }
    }
  })
}

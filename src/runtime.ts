/**
 * What the HTTP layer is given: the modes, the corpus (its reads and the one write path), the response cache, the
 * start-up, health and metrics of the process, the jobs it runs and the stores of its settings, and how to close it.
 * `createRuntime` builds it over the services (src/services.ts); routes, plugins and the MCP tools read it as
 * `app.runtime` and never see the services behind it (an import rule in .dependency-cruiser.cjs holds them to that).
 */
import type { Config } from './config.js'
import { listNamespaces, type NamespaceCounts } from './corpus/namespaces.js'
import { IMAGES_COLLECTION, readImage, type StoredImage } from './corpus/images/image-records.js'
import type { DocumentCatalogView } from './corpus/document-views.js'
import { documentFingerprint } from './corpus/fingerprint.js'
import { IngestJobs } from './corpus/ingest-jobs.js'
import { openOcrReader, type OcrReader } from './corpus/formats/ocr-pages.js'
import type { EvaluationRun } from './evaluation/evaluate.js'
import { RedisJobBoard } from './evaluation/job-board.js'
import { EvaluationJobs } from './evaluation/jobs.js'
import { recordIngest, writtenOutcome, type IngestLogger } from './ingest-record.js'
import { createRetrievalDefaultsStore, type RetrievalDefaultsStore } from './retrieval-defaults.js'
import type { Services } from './services.js'
import type { WritePath } from './corpus/write-path.js'
import type { IndexStatus } from './corpus/index-status/index-status.js'
import { entityVectorsChannel } from './corpus/index-status/providers.js'
import type { EntityVectorStatus } from './corpus/entity-vectors.js'
import type { ReadState } from './generations.js'
import type { RecallMetrics } from './metrics.js'
import type { MemoryUsage } from './memory/budget.js'
import type { ModeTable } from './modes.js'
import type { Cache } from './providers/cache/port.js'
import type { EmbeddingBacklog } from './providers/embedder/port.js'
import type { BackendHealth } from './providers/errors.js'
import type { BackendNames } from './backend-names.js'
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
  /** Each document's status in every index, and a namespace's sums (docs/api.md, "Index status"). */
  status: Pick<IndexStatus, 'channels' | 'ofDocuments' | 'ofNamespace'>
  /** Every namespace that holds anything in any store, ascending, with its counts; `include` leaves others out unread. */
  namespaces(include?: (namespace: string) => boolean): Promise<NamespaceCounts[]>
  /** Up to `limit` of those namespaces after the name `after`, only they counted. */
  namespacePage(include: (namespace: string) => boolean, after: string | undefined, limit: number): Promise<NamespaceCounts[]>
  /** A picture of a document (`GET /images/{id}`): its stored bytes and their sniffed type; undefined when absent. */
  image(namespace: string, id: string): Promise<StoredImage | undefined>
  /** How far each namespace's (and document's) entity names are embedded (`ENTITY_VECTORS`); absent when off. */
  entityVectors?: EntityVectorStatus
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
  /** Document ingests running as jobs in this process (`POST /ingest/documents` starts them; src/corpus/ingest-jobs.ts). */
  ingestJobs: IngestJobs
  /**
   * The OCR reader every upload job of this process shares (opened on first use), so that OCR_CONCURRENCY bounds the
   * pages in progress across them; a string says why OCR cannot run here.
   */
  ocrReader(): Promise<OcrReader | string>
  /** Evaluations running as jobs (`POST /evaluate`), shared through Redis when there is one. */
  evaluations: EvaluationJobs<EvaluationRun>
  /** Per-namespace retrieval defaults (src/retrieval-defaults.ts): in Redis when there is one, else under `DATA_DIR`. */
  retrievalDefaults: RetrievalDefaultsStore
  /** The memory budget in use (`MEMORY_LIMIT`): `/readyz` and `/metrics` show it. */
  memory(): MemoryUsage
  /** A request begins; call what it returns when it ends (the heap release waits for none to be in flight). */
  requestBegins(): () => void
  /** The query embedder's queue, when it has one (the overload guard reads it). */
  embeddingBacklog(): EmbeddingBacklog | undefined
  health(): Promise<BackendHealth[]>
  /** Lets the jobs' batches in flight land, then closes the services. */
  close(): Promise<void>
}

export interface RuntimeOptions {
  /** Where an ingest job's line goes when it ends (the server's logger); none: no line, the metrics still count it. */
  logger?: IngestLogger
}

const silent: IngestLogger = { info: () => undefined, warn: () => undefined }

/**
 * What the HTTP layer is given, built once over the services: their modes, the corpus's reads and its one write path,
 * and the jobs and settings stores the routes use. Registers nothing on start-up (the services did).
 */
export function createRuntime(services: Services, options: RuntimeOptions = {}): Runtime {
  const { config, documents, writePath, metrics, redis } = services
  const log = options.logger ?? silent
  const ingestJobs = new IngestJobs({
    batchChunks: config.ingest.jobBatchChunks,
    heldChunks: (namespace, document) => documents.get(namespace)?.heldUnchanged(document.id, documentFingerprint(document)),
    write: (namespace, batch, onProgress) => writePath.write(namespace, { kind: 'documents', op: 'upsert', documents: batch }, { onProgress }),
    onEnd: (job) => {
      const result = job.result
      const written = result?.documents ?? 0
      const unchanged = result?.unchanged ?? 0
      recordIngest(log, metrics, {
        namespace: job.namespace, job: job.id,
        outcome: job.state === 'done' ? writtenOutcome(written, unchanged) : job.state === 'cancelled' ? 'cancelled' : 'failed',
        documents: written, chunks: result?.chunks ?? 0, replaced: result?.replaced ?? 0, unchanged, refused: 0, ms: job.took_ms,
        ...(result?.images ? { images: result.images } : {}),
        ...(job.errors.length > 0 ? { error: job.errors.join('; ') } : {})
      })
    }
  })
  const evaluations = new EvaluationJobs<EvaluationRun>({
    maxRunning: 2, timeoutMs: config.evaluation.timeoutSeconds * 1000, keepMs: 3_600_000, ...(redis ? { board: new RedisJobBoard(redis) } : {})
  })
  let ocr: Promise<OcrReader | string> | undefined
  return {
    config,
    modes: services.modes,
    ocrReader: () => (ocr ??= openOcrReader(config.ocr)),
    corpus: {
      write: writePath.write.bind(writePath),
      readState: services.readState,
      catchUp: services.catchUpDocuments,
      documents,
      status: writePath.status.with(entityVectorsChannel(services.entityVectors)),
      namespaces: (include) => listNamespaces(services, include),
      namespacePage: (include, after, limit) => listNamespaces(services, include, { after, limit }),
      image: (namespace, id) => readImage(services.vectors, `${config.collectionPrefix}${IMAGES_COLLECTION}`, namespace, id),
      ...(services.entityVectors ? { entityVectors: services.entityVectors } : {})
    },
    cache: services.cache,
    ...(redis ? { redis } : {}),
    names: services.names,
    startup: services.startup,
    metrics,
    ingestJobs,
    evaluations,
    retrievalDefaults: createRetrievalDefaultsStore(redis, config.dataDir),
    memory: () => services.memory.usage(),
    requestBegins: () => services.memory.requestBegins(),
    embeddingBacklog: () => services.embedder.backlog?.(),
    health: () => services.health(),
    async close() {
      // the batches in flight land before the stores close
      await ingestJobs.close()
      evaluations.close()
      await services.close()
    }
  }
}

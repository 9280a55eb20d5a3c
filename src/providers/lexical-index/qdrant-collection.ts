import type { QdrantClient } from '@qdrant/js-client-rest'
import type { ServiceAnalyzer } from '../../kernel/analyzers.js'
import { backendName, type BackendHealth } from '../errors.js'
import type { QdrantClusterSettings } from '../vector-store/qdrant-cluster.js'

export const BACKEND = backendName('lexical-index', 'qdrant')
export const NAMESPACE_FIELD = 'namespace'
/**
 * Postings per token that a search lists (ids only, all tokens in one batch request) to learn its df; a token
 * with at least this many is counted apart, an exact count per token costing a request of its own.
 */
export const DF_PROBE = 1024

export interface QdrantLexicalIndexesOptions {
  /** Base URL of Qdrant's REST API. */
  url: string
  apiKey?: string
  /** Client-side limit of each reading request, in milliseconds. */
  timeoutMs: number
  /** Client-side limit of each writing request, in milliseconds. Default `timeoutMs`. */
  writeTimeoutMs?: number
  /** The collection whose points carry the lexical leg. */
  collection: string
  /** The analyzer of its texts and queries, recorded in the collection's metadata. Default `cjk-bigram`. */
  analyzer?: ServiceAnalyzer
  /**
   * Who writes the points. `vector-store` (the service): the chunk points are written by `QdrantVectorStore`
   * with their lexical leg, so one upsert carries both legs and one delete removes both; this index reads them,
   * and `sync` writes the lexical leg of points that lack it (a collection written before it existed).
   * `own`: the index writes points holding the lexical leg alone, in a collection it creates (the port's
   * conformance suite, benchmarks).
   */
  points: 'vector-store' | 'own'
  /** Points per write or backfill request. Default 256. */
  batchSize?: number
  /** Shards, replicas and read consistency (docs/deployment.md): a collection of its own is created with them. Default: one server's. */
  cluster?: QdrantClusterSettings
  /** Postings per token a search lists to learn its df before counting it apart (docs/scale-out.md). Default {@link DF_PROBE}. */
  dfProbe?: number
  /**
   * A stamp of the namespace's lexical contents that every writer changes after its points landed and before its
   * write is acknowledged (the service: the namespace's shared `hybrid` version). While it stays the same, a
   * search reuses the statistics (N, total length, df, smallest reference length) read at that stamp; undefined
   * (unknown, or no such stamp) reads them again. Without the option nothing is reused.
   */
  statisticsStamp?: (namespace: string) => Promise<string | undefined>
  /**
   * Each namespace's postings copied into this process, searched instead of Qdrant while the copy is proven to
   * hold what the points hold (docs/scale-out.md, "The local copy"). `dir`: its files (a cache, rebuilt by `sync`).
   * `complete`: whether the changes this process was handed are all of the namespace's up to a stamp:
   * `sole-writer` (one process writes, so always), or a check (several replicas: the shared catalog was read at
   * that stamp). Without a stamp and not the sole writer, the copy is never searched.
   */
  /** Told of each search, which path answered it and why (metrics): see {@link LexicalSearchPath}. */
  onSearch?: (path: LexicalSearchPath) => void
  localCopy?: {
    dir: string; complete: 'sole-writer' | ((namespace: string, stamp: string) => boolean)
    /** Longest wait of a search for the copy's pending changes before it ranks on Qdrant, in ms. Default {@link LOCAL_COPY_SEARCH_WAIT_MS}. */
    waitMs?: number
  }
}

/** How long a search waits for the local copy to apply the changes it was handed (see `search`), in ms. */
export const LOCAL_COPY_SEARCH_WAIT_MS = 200


export type Filter = { must: Record<string, unknown>[]; must_not?: Record<string, unknown>[] }
export const inNamespace = (namespace: string) => ({ key: NAMESPACE_FIELD, match: { value: namespace } })

/**
 * Which path answered a search: the local copy (proven current), or Qdrant because the copy is off, not ready (its
 * first build, or a change not yet applied) or behind (not proven to hold every write: another replica's write not
 * yet caught up, or no version known).
 */
type LexicalSearchPath = 'local-copy' | 'qdrant:copy-off' | 'qdrant:copy-not-ready' | 'qdrant:copy-behind'

/** What one namespace's index uses of the shared collection ({@link QdrantLexicalIndexes} in ./qdrant.ts holds it). */
export interface QdrantLexicalCollection {
  readonly options: QdrantLexicalIndexesOptions
  readonly client: QdrantClient
  readonly writer: QdrantClient
  readonly analyzer: ServiceAnalyzer
  readonly consistency: { consistency: QdrantClusterSettings['readConsistency'] }
  count(filter: Filter): Promise<number>
  ensure(create: boolean): Promise<boolean>
  health(): Promise<BackendHealth>
  read<T>(request: () => Promise<T>): Promise<T>
  call<T>(request: () => Promise<T>): Promise<T>
}

import type { ServiceAnalyzer } from '../../kernel/analyzers.js'
import type { BackendHealth } from '../errors.js'

export interface LexicalDocument {
  id: string
  text: string
}

export interface LexicalHit {
  id: string
  /** BM25 score; higher is better. */
  score: number
}

export interface LexicalSearchOptions {
  /**
   * Keeps only the documents whose id it accepts, applied before the top `limit` is chosen: while enough
   * accepted documents match, a search returns `limit` hits however few documents the filter keeps.
   */
  filter?: (id: string) => boolean
  /** When it aborts, a search not yet answered is dropped (a worker job is cancelled) and rejects with `abortError`. */
  signal?: AbortSignal
  /**
   * The namespace's hybrid index version the request read before it ran: an index that checks a stamp
   * (the Qdrant one's statistics and local copy) takes it rather than reading it again. Others ignore it.
   */
  stamp?: string
}

/** One change: the documents named in `delete` go, then `upsert` is written (re-upserting an id replaces it). */
export interface LexicalChange {
  delete?: readonly string[]
  upsert?: readonly LexicalDocument[]
}

/**
 * An in-process BM25 index over the CJK analyzer's tokens.
 *
 * - `sync` makes the index hold exactly `documents` (the source of truth, e.g. the vector store's records);
 *   what it already holds with the same id and text is kept, not rebuilt. It is not atomic: a sync that fails
 *   part-way leaves a mix, which the next sync completes.
 * - `write` applies one change atomically: when its promise resolves, searches see all of it, and its
 *   statistics (document count, document frequencies, average length) are those of the documents now
 *   held; when it rejects, the index is as it was, in memory and in its files. Deleting an unknown id is
 *   not an error. Writes apply in call order.
 * - `search` returns at most `limit` hits with a positive score, best first, equal scores by id ascending.
 *   An empty index, a query with no indexed token or a `limit` below 1 gives `[]`. Scores equal those of
 *   wink-bm25-text-search over the same documents (k1 1.2, b 0.75, each term weight rounded to 4 decimals).
 * - Any number of documents works, including 0, 1 and 2; a document without tokens is held and never found.
 * - `version` changes whenever a write or sync changes what searches see.
 */
export interface LexicalIndex {
  sync(documents: Iterable<LexicalDocument>): Promise<void>
  write(change: LexicalChange): Promise<void>
  search(query: string, limit: number, options?: LexicalSearchOptions): Promise<LexicalHit[]>
  /** Which of `ids` the index holds now (an id never written, or deleted, is not among them); order not kept. */
  holding(ids: readonly string[]): Promise<Set<string>>
  /**
   * Optional, with `holds`: an order-free digest of `documents` (ids and texts) as this index compares them. A reader
   * that keeps a copy of its documents (the catalog's checkpoint) keeps the digest of what it synced beside it.
   */
  digest?(documents: Iterable<LexicalDocument>): string
  /** Whether the index holds exactly the documents of this digest, so that a `sync` with them would change nothing. */
  holds?(digest: string): Promise<boolean>
  readonly size: number
  readonly version: number
  health(): Promise<BackendHealth>
  close(): Promise<void>
}

/**
 * The lexical indexes of every namespace: one `LexicalIndex` per namespace, each with files of its own.
 *
 * - `get(namespace)` is that namespace's index, made on first use. Nothing is read or written until the
 *   index's first call, and a read (search, or a sync to no documents) writes nothing.
 * - Namespaces never share anything: documents, statistics (N, document frequencies, average length) and
 *   versions are each namespace's own, so the same id in two namespaces is two documents.
 * - `drop(namespace)` closes that index and removes its files; a later `get` starts empty. Dropping a
 *   namespace that has no index is not an error.
 */
export interface LexicalIndexes {
  /** The analyzer of every namespace's texts and queries (chunks record its tag in `versions.analyzer`); `cjk-bigram` when absent. */
  readonly analyzer?: ServiceAnalyzer
  /** The indexes live in the shared store (not fed by this process's catalog): a search needs no catalog read first. */
  readonly shared?: boolean
  get(namespace: string): LexicalIndex
  /** Checks (or records) the store's settings without reading a namespace, where it has any; throws as a first read would. */
  open?(): Promise<void>
  drop(namespace: string): Promise<void>
  health(): Promise<BackendHealth>
  close(): Promise<void>
}

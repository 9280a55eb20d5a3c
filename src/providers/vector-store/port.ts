import type { BackendHealth } from '../errors.js'
import type { VectorFilter } from './filter.js'
import type { VectorPayload } from './payload.js'

export type { VectorFilter, MetadataCondition,   } from './filter.js'

/** Payload stored beside a vector. `doc_id` names the document (or episode, entity) that owns the record. */
export type { VectorPayload } from './payload.js'

export interface VectorRecord {
  /** Our own id (a chunk id such as `guide-cough#3`, a node id); backends that need another id form derive it. */
  id: string
  vector: Float32Array
  payload: VectorPayload
}

/** A search hit without its payload: what a caller that holds the records itself (a catalog) reads. */
export interface VectorRank {
  id: string
  /** Cosine similarity in [-1, 1]; higher is closer. */
  score: number
}

export interface VectorHit extends VectorRank {
  payload: VectorPayload
}

/** One atomic change to a collection: first every record owned by `deleteDocIds` goes, then `upsert` is written. */
export interface VectorWrite {
  deleteDocIds?: readonly string[]
  upsert?: readonly VectorRecord[]
}

/**
 * Named collections of unit vectors with payloads, each partitioned by namespace.
 *
 * - `ensureCollection` creates the collection if missing and is idempotent; a second call with another
 *   dimension throws. It serves every namespace.
 * - Every read and write names its namespace (`src/providers/namespace.ts`). A record is known by
 *   (namespace, id): the same id in two namespaces is two records, and nothing a call in one namespace
 *   does is seen, counted or changed in another. A read of a namespace that holds nothing gives nothing
 *   and creates nothing.
 * - `write` applies its deletes, then its upserts. Re-upserting an id replaces the record. Deleting a doc id
 *   that has no record is not an error. On the embedded store the whole write is atomic and durable when
 *   the promise resolves.
 * - `search` returns at most `limit` hits, best first (cosine similarity descending), equal scores by id
 *   ascending. With a `filter`, the top hits are chosen among the records it keeps only, so a search
 *   returns `limit` hits whenever that many records pass, however few do. A missing collection gives `[]`,
 *   not an error.
 * - `rank` returns exactly the ids and scores, in the same order, that `search` with the same arguments returns,
 *   without the payloads (a networked store then fetches none).
 * - `vectorsOf` gives the vectors of the records it names (the others are left out).
 * - `scroll` yields every record's id and payload (no vectors) in id order (plain string order, `'a#10' < 'a#9'`);
 *   with `docIds`, only the records those documents own (none for `[]`); a missing collection yields none.
 * - `write` to a collection that was never ensured throws; `count` of a missing collection is 0; a search
 *   `limit` of 0 or less gives `[]`.
 * - The payload keys `id` and `namespace` are reserved (the record id and its namespace); a payload whose
 *   `id` differs from the record id, or that has a `namespace`, is rejected.
 * - Each write is atomic within its collection and namespace only; a change spanning them must be safe to re-run.
 * - A payload is the store's own once written, and the reader's own once read (scroll, search): changing the object
 *   written, or one read, changes nothing stored.
 */
export interface VectorStore {
  readonly backend: 'memory' | 'qdrant'
  ensureCollection(collection: string, dimensions: number): Promise<void>
  write(collection: string, namespace: string, change: VectorWrite): Promise<void>
  /** With `signal`: an abort cancels the backend request and rejects with `abortError(signal)`. */
  search(collection: string, namespace: string, vector: Float32Array, limit: number, filter?: VectorFilter, signal?: AbortSignal): Promise<VectorHit[]>
  /** `search` without payloads; with `signal` as `search`. */
  rank(collection: string, namespace: string, vector: Float32Array, limit: number, filter?: VectorFilter, signal?: AbortSignal): Promise<VectorRank[]>
  scroll(collection: string, namespace: string, docIds?: readonly string[]): AsyncIterable<{ id: string; payload: VectorPayload }>
  count(collection: string, namespace: string): Promise<number>
  /**
   * The stored vectors of these records of the namespace, by id (unit length, as stored); an id without a record is
   * left out, and a missing collection gives an empty map. Lets a writer keep the vector of a chunk whose embedded
   * text did not change.
   */
  vectorsOf(collection: string, namespace: string, ids: readonly string[]): Promise<Map<string, Float32Array>>
  /**
   * A value naming the state of the namespace's records in the collection: it differs after any write that changed
   * them (a drop and the same records written again included) and stays the same across reopening the store with no
   * write between. Undefined when the backend cannot tell (Qdrant: other writers) or the partition does not exist. A
   * reader that keeps a copy of the records (the chunk catalog's checkpoint) uses its copy only while this is unchanged.
   */
  stamp?(collection: string, namespace: string): Promise<string | undefined>
  /** The namespaces holding at least one record of the collection, ascending; `[]` for a missing collection. */
  namespaces(collection: string): Promise<string[]>
  /**
   * Records a version before namespaces wrote (no namespace stored with them; only Qdrant can hold any): how many the
   * collection holds, 0 for a missing collection. Reads never see them until they are adopted.
   */
  legacyRecords(collection: string): Promise<number>
  /**
   * Gives every such record of the collection to `default` (their ids are already default's); how many it adopted.
   * Only the legacy-points applier calls it (src/corpus/appliers/legacy-points.ts), under the lock the write path took.
   */
  adoptLegacyRecords(collection: string): Promise<number>
  /** Removes every record of one namespace from the collection; a namespace or collection that holds none is not an error. */
  dropNamespace(collection: string, namespace: string): Promise<void>
  /** Removes the collection and its data in every namespace; a missing collection is not an error. */
  dropCollection(collection: string): Promise<void>
  health(): Promise<BackendHealth>
  close(): Promise<void>
}

import type { BackendHealth } from '../errors.js'

/** Payload stored beside a vector. `doc_id` names the document (or episode, entity) that owns the record. */
export interface VectorPayload {
  doc_id: string
  text: string
  [key: string]: unknown
}

export interface VectorRecord {
  /** Our own id (a chunk id such as `guide-cough#3`, a node id); backends that need another id form derive it. */
  id: string
  vector: Float32Array
  payload: VectorPayload
}

export interface VectorHit {
  id: string
  /** Cosine similarity in [-1, 1]; higher is closer. */
  score: number
  payload: VectorPayload
}

/** One atomic change to a collection: first every record owned by `deleteDocIds` goes, then `upsert` is written. */
export interface VectorWrite {
  deleteDocIds?: readonly string[]
  upsert?: readonly VectorRecord[]
}

/**
 * Named collections of unit vectors with payloads.
 *
 * - `ensureCollection` creates the collection if missing and is idempotent; a second call with another
 *   dimension throws.
 * - `write` applies its deletes, then its upserts. Re-upserting an id replaces the record. Deleting a doc id
 *   that has no record is not an error. On the embedded store the whole write is atomic and durable when
 *   the promise resolves.
 * - `search` returns at most `limit` hits, best first (cosine similarity descending), equal scores by id
 *   ascending. A missing collection gives `[]`, not an error.
 * - `scroll` yields every record's id and payload (no vectors) in id order (plain string order, `'a#10' < 'a#9'`);
 *   a missing collection yields none.
 * - `write` to a collection that was never ensured throws; `count` of a missing collection is 0; a search
 *   `limit` of 0 or less gives `[]`.
 * - The payload key `id` is reserved for the record id; a payload whose `id` differs is rejected.
 * - Each write is atomic within its collection only; a change spanning collections must be safe to re-run.
 */
export interface VectorStore {
  readonly backend: 'memory' | 'qdrant'
  ensureCollection(collection: string, dimensions: number): Promise<void>
  write(collection: string, change: VectorWrite): Promise<void>
  search(collection: string, vector: Float32Array, limit: number): Promise<VectorHit[]>
  scroll(collection: string): AsyncIterable<{ id: string; payload: VectorPayload }>
  count(collection: string): Promise<number>
  /** Removes the collection and its data; a missing collection is not an error. */
  dropCollection(collection: string): Promise<void>
  health(): Promise<BackendHealth>
  close(): Promise<void>
}

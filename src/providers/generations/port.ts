/** The indexes a write may change, one kind per retrieval mode. */
export type IndexKind = 'hybrid' | 'graphrag' | 'episodic'

export const INDEX_KINDS: readonly IndexKind[] = ['hybrid', 'graphrag', 'episodic']

/** What a namespace's writes have reached, as one read of the store saw it. */
export interface NamespaceGenerations {
  /** Grows by at least 1 with every recorded write of the namespace and never comes back to an earlier value. */
  generation: number
  /**
   * Per kind, a token that differs after every recorded write touching that kind (and after the store lost its state):
   * `<epoch>:<generation of the kind's last write>` (./version.ts).
   */
  versions: Record<IndexKind, string>
}

/**
 * What a write changed in a namespace's hybrid corpus, for the change log: the ids of the documents it wrote or
 * deleted. A hybrid write recorded without it (a namespace drop, a demo load, a late record) changed something
 * unknown: readers synced before it read the whole namespace again.
 */
export interface DocumentChangeSet {
  docIds: readonly string[]
  /**
   * The write window: what this write left of each document (an encoded state, opaque to the store), kept beside the
   * log for other replicas to apply without reading the vector store. `token` is the one `markWriting` put on the
   * documents under the write lock: a state is kept only where that mark still stands, so that a write recorded after
   * a later writer's never overwrites its state. Without it (a failed write, a replay) the documents keep no state.
   */
  window?: { token: string; states: ReadonlyMap<string, string> }
}

/** Where a replica's copy of a namespace's catalog was read: the epoch and the hybrid generation it reflects. */
export interface CatalogPosition {
  epoch: string
  generation: number
}

/** What the change log says happened to a namespace's documents since a position. */
export interface DocumentChanges {
  /** The position now: the epoch and the generation of the last hybrid write (the hybrid version is its `formatVersion`, ./version.ts). */
  position: CatalogPosition
  /**
   * Every document written or deleted after the position asked about, up to `position` or later; undefined when the
   * log cannot show it is complete (another epoch, trimmed past it, a write of unknown documents, too many).
   */
  docIds?: string[]
  /**
   * Of those documents, the ones whose state the write window keeps from the write the log lists them at (the last
   * that named them): their encoded state as that write left it. The others are read from the vector store.
   */
  window?: Map<string, string>
}

/**
 * Per-namespace write counters: the namespace's `generation` (what a client may ask a replica to have seen)
 * and each index kind's version (part of the response cache key).
 *
 * - `recordWrite` is called after a write reached its stores; it returns the namespace's new generation,
 *   greater than every generation `read` or `recordWrite` returned before for that namespace.
 * - A store that lost its state (a flushed or evicted Redis key, a restarted process) starts again from
 *   a value above every earlier generation (it is seeded from the clock, in microseconds) and under a new
 *   random epoch, so no earlier version token comes back.
 * - The change log (`documentChanges`) lists, per namespace, the documents each hybrid write changed, by the
 *   generation that recorded it; a write's ids are in it exactly when its generation is (one atomic step).
 * - Every method throws when the store cannot be reached; they never guess.
 */
export interface GenerationStore {
  readonly backend: 'memory' | 'redis'
  /** With `changes` (and `hybrid` among the kinds), the documents also go into the change log, in the same atomic step. */
  recordWrite(namespace: string, kinds: readonly IndexKind[], changes?: DocumentChangeSet): Promise<number>
  read(namespace: string): Promise<NamespaceGenerations>
  /**
   * The namespace's position now and, when the log can prove it, the documents changed after `since`; at most
   * `limit` of them (more answers no ids: reading the namespace again is then as cheap). Without `since`, only the position.
   */
  documentChanges(namespace: string, since: CatalogPosition | undefined, limit: number): Promise<DocumentChanges>
  /**
   * Where the replicas share the store: tells `listener` of hybrid writes recorded from now on (by any replica), with
   * the namespace's new hybrid version, as soon as they are recorded. Best effort: a message may be lost (a
   * reconnect), so a listener only gets ahead of reads, which still read the version themselves.
   */
  follow?(listener: (namespace: string, version: string) => void): void
  /**
   * Where the store keeps a write window: marks these documents as being written by `token` (called under the write
   * lock, before the vector store is written), which ends whatever state the window kept of them. False when this
   * store keeps no window (then the record keeps no state either).
   */
  markWriting?(namespace: string, docIds: readonly string[], token: string): Promise<boolean>
  close(): Promise<void>
}

/** The first generation of a namespace whose counter starts now: the clock in microseconds (safe integers until the year 2255). */
export function clockSeed(now: number = Date.now()): number {
  return Math.floor(now) * 1000
}

/** The indexes a write may change, one kind per retrieval mode. */
export type IndexKind = 'hybrid' | 'graphrag' | 'episodic'

export const INDEX_KINDS: readonly IndexKind[] = ['hybrid', 'graphrag', 'episodic']

/** What a namespace's writes have reached, as one read of the store saw it. */
export interface NamespaceGenerations {
  /** Grows by at least 1 with every recorded write of the namespace and never comes back to an earlier value. */
  generation: number
  /** Per kind, a token that differs after every recorded write touching that kind (and after the store lost its state). */
  versions: Record<IndexKind, string>
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
 * - Both methods throw when the store cannot be reached; they never guess.
 */
export interface GenerationStore {
  readonly backend: 'memory' | 'redis'
  recordWrite(namespace: string, kinds: readonly IndexKind[]): Promise<number>
  read(namespace: string): Promise<NamespaceGenerations>
  close(): Promise<void>
}

/** The first generation of a namespace whose counter starts now: the clock in microseconds (safe integers until the year 2255). */
export function clockSeed(now: number = Date.now()): number {
  return Math.floor(now) * 1000
}

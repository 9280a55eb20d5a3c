import type { DurableLog } from './durable-log.js'
import { foldWithinLimit, type FoldLimits } from './fold-client.js'
import type { FoldTask } from './fold-thread.js'

/** Runs a store's writes one after another (the store's own queue). */
type Serialise = <T>(task: () => Promise<T>) => Promise<T>

/**
 * A store's compactions off its write queue, at most one per namespace at a time: the log is set aside in
 * the queue (`beginCompaction`: a rename and an empty log, so a write waits for nothing more), folded into
 * the next snapshot by a thread from the files alone (`entry`, a module calling `serveFold`; its heap limited
 * as `foldWithinLimit` sizes it, or not when it ran out), and the new
 * snapshot renamed into place beside the writes that go on meanwhile. A crash at any step leaves files
 * that `DurableLog.open` reads whole; a failed fold is kept and run again at the next due compaction.
 */
export class BackgroundCompaction {
  private readonly running = new Map<string, Promise<void>>()
  /** Per namespace: gives up a fold still waiting for its turn or for memory (`foldTurn`). */
  private readonly waiting = new Map<string, AbortController>()
  /** The last compaction's failure, for the store's health. */
  lastError: unknown

  constructor(
    private readonly entry: URL,
    private readonly identity: Omit<FoldTask, 'fold'>,
    private readonly serialise: Serialise,
    /** `blocks`: the entry folds a block at a time; `warn`: default, a process warning (Node prints it on stderr). */
    private readonly limits: Pick<FoldLimits, 'blocks'> & Partial<FoldLimits>
  ) {}

  /** Starts the namespace's compaction unless one runs; the caller does not wait for it. */
  start(namespace: string, log: DurableLog): void {
    if (this.running.has(namespace)) return
    const waiting = new AbortController()
    const run = (async () => {
      const fold = await this.serialise(() => log.beginCompaction())
      if (!fold) return
      const warn = this.limits.warn ?? ((message: string) => process.emitWarning(message, { code: 'RECALL_FOLD_HEAP' }))
      const written = await foldWithinLimit(this.entry, { ...this.identity, fold }, { ...this.limits, warn }, waiting.signal)
      await log.finishCompaction(fold, written)
    })()
      .catch((error: unknown) => {
        // put off by `finished`/`settled` while it waited: the log stays set aside, and the next due compaction folds it
        if (!waiting.signal.aborted || (error as Error).name !== 'AbortError') this.lastError = error
      })
      .finally(() => {
        this.running.delete(namespace)
        this.waiting.delete(namespace)
      })
    this.running.set(namespace, run)
    this.waiting.set(namespace, waiting)
  }

  /**
   * Settles when the namespace's compaction (if any) has, e.g. before its files are dropped; one still waiting for its
   * turn or for memory is put off (memory that only a drop would give back could keep it waiting for ever).
   */
  async finished(namespace: string): Promise<void> {
    this.waiting.get(namespace)?.abort()
    await this.running.get(namespace)
  }

  get idle(): boolean {
    return this.running.size === 0
  }

  /** Settles when every compaction under way has; those still waiting are put off (`finished`). */
  async settled(): Promise<void> {
    for (const waiting of this.waiting.values()) waiting.abort()
    await Promise.all(this.running.values())
  }
}

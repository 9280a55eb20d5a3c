import { performance } from 'node:perf_hooks'

/**
 * The time tasks of every store's queue spent waiting behind compaction steps on that queue, process-wide (issue 44:
 * no write waits more than 100 ms for a compaction). A bench that writes one batch at a time reads `totalMs` before
 * and after each write: the difference is what that write waited.
 */
export const compactionWaits = {
  /** Summed over every task that waited. */
  totalMs: 0,
  /** The longest one task waited. */
  maxMs: 0,
  /** Tasks that waited behind a compaction step at all. */
  tasks: 0,
  /** The longest wait by the store whose queue it was (`TaskQueue`'s name). */
  maxMsByStore: {} as Record<string, number>
}

/**
 * A store's tasks, one after another in the order queued, whether the ones before failed or not. Compaction steps
 * (`runCompaction`) run in turn like any task; the queue counts the time they hold it, so that each task says how
 * much of its wait was spent behind them (`compactionWaits`).
 */
export class TaskQueue {
  #tail: Promise<unknown> = Promise.resolve()
  /** Time compaction steps held the queue, summed over the queue's life (the one running counted at `#since`). */
  #compactionMs = 0
  #since: number | undefined

  /** `store`: whose queue, as `compactionWaits.maxMsByStore` names it. */
  constructor(private readonly store: string) {}

  /** Settles when every task queued so far has; a new task after it makes a new tail. */
  get tail(): Promise<unknown> {
    return this.#tail
  }

  run<T>(task: () => Promise<T>): Promise<T> {
    const queuedAt = this.#compactionClock()
    return this.#chain(() => {
      const waited = this.#compactionClock() - queuedAt
      if (waited > 0) {
        compactionWaits.totalMs += waited
        compactionWaits.tasks += 1
        if (waited > compactionWaits.maxMs) compactionWaits.maxMs = waited
        if (waited > (compactionWaits.maxMsByStore[this.store] ?? 0)) compactionWaits.maxMsByStore[this.store] = waited
      }
      return task()
    })
  }

  /** Runs a compaction step in turn: the tasks behind it count the time it holds the queue as waited for compaction. */
  runCompaction<T>(task: () => Promise<T>): Promise<T> {
    return this.#chain(async () => {
      this.#since = performance.now()
      try {
        return await task()
      } finally {
        this.#compactionMs += performance.now() - this.#since
        this.#since = undefined
      }
    })
  }

  #chain<T>(task: () => Promise<T>): Promise<T> {
    const result = this.#tail.then(task, task)
    this.#tail = result.catch(() => undefined)
    return result
  }

  #compactionClock(): number {
    return this.#since === undefined ? this.#compactionMs : this.#compactionMs + performance.now() - this.#since
  }
}

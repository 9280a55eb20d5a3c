import type { BackendHealth } from '../errors.js'
import { lastResortCollection } from '../../memory/heap-release.js'
import { foldRuns, type FoldRun } from './fold-client.js'
import { storeThreadData } from './fold-gate.js'
import { PortThread, type ErrorRebuilders } from './port-thread.js'
import { compactionWaits } from './task-queue.js'

/** A store thread's own compaction waits and the folds it ran: what a bench reads (`threadCounters`). */
export interface ThreadCounters {
  compactionWaits: typeof compactionWaits
  foldRuns: FoldRun[]
}

/**
 * The event loop's side of an embedded store that lives in a thread of its own (`PortThread`): its calls by method
 * name, its health (a stopped thread answers unhealthy, naming it), its close, and its counters. The thread gets the
 * store's options with the process's fold count (`threadOptions`).
 */
export abstract class ThreadedStore {
  readonly backend = 'memory' as const
  private readonly thread: PortThread

  constructor(entry: URL, options: unknown, private readonly backendName: string, holds: string, errors: ErrorRebuilders = {}) {
    this.thread = new PortThread(entry, storeThreadData(options), backendName, holds, errors)
  }

  protected call<T>(method: string, ...args: unknown[]): Promise<T> {
    return this.thread.call<T>(method, args)
  }

  /** The thread's `compactionWaits`, and with `takeFolds` the folds it ran since they were last taken (`ThreadHeld`). */
  threadCounters(takeFolds = false): Promise<ThreadCounters> {
    return this.thread.call('threadCounters', [takeFolds])
  }

  health(): Promise<BackendHealth> {
    return this.call<BackendHealth>('health').catch((error: unknown) => ({ backend: this.backendName, ok: false, latency_ms: 0, detail: (error as Error).message }))
  }

  close(): Promise<void> {
    return this.thread.close()
  }
}

/**
 * The thread's side: one full collection of the thread's heap once its load is done (`afterLoad`) and one after each
 * namespace dropped (`afterDrop`). What the load or the namespace held is otherwise kept until the thread's next
 * collection, which an idle thread does not run: 0.9 GiB at 1M chunks for the knowledge graph
 * (bench/results/memory.log.md, "The knowledge graph in a thread of its own").
 */
export class ThreadHeld {
  #collected = false
  readonly #collect = lastResortCollection()

  async afterLoad(): Promise<void> {
    if (this.#collected) return
    this.#collected = true
    await this.#collect()
  }

  afterDrop(): Promise<void> {
    return this.#collect()
  }

  /** This thread's counters (its own module instances of them), the folds taken with `takeFolds`. */
  counters(takeFolds: boolean): ThreadCounters {
    return { compactionWaits, foldRuns: takeFolds ? foldRuns.splice(0) : [] }
  }
}

import { workerData } from 'node:worker_threads'
import { lastResortCollection } from '../../memory/heap-release.js'
import { foldRuns, type FoldRun } from '../embedded/fold-client.js'
import { servePort } from '../embedded/serve-port.js'
import { compactionWaits } from '../embedded/task-queue.js'
import { EmbeddedEpisodicGraphStore, type EmbeddedEpisodicGraphStoreOptions } from './embedded.js'

/**
 * The store as the thread holds it: a full collection of the thread's heap once its load is done, and after a namespace
 * is dropped; an idle thread runs none of its own, and would keep what the load parsed (as the knowledge graph's thread,
 * `knowledge-graph/store-thread.ts`).
 */
class ThreadEpisodicGraphStore extends EmbeddedEpisodicGraphStore {
  #collected = false
  readonly #collect = lastResortCollection()

  protected override async load(): Promise<void> {
    await super.load()
    if (this.#collected) return
    this.#collected = true
    await this.#collect()
  }

  override async dropNamespace(namespace: string): Promise<void> {
    await super.dropNamespace(namespace)
    await this.#collect()
  }

  /** The thread's own `compactionWaits`, and with `takeFolds` the folds it ran since they were last taken: what a bench reads. */
  threadCounters(takeFolds: boolean): { compactionWaits: typeof compactionWaits; foldRuns: FoldRun[] } {
    return { compactionWaits, foldRuns: takeFolds ? foldRuns.splice(0) : [] }
  }
}

// The thread that holds the embedded episodic graph (`ThreadedEpisodicGraphStore`): its load, writes and reads.
servePort(new ThreadEpisodicGraphStore(workerData as EmbeddedEpisodicGraphStoreOptions))

import { workerData } from 'node:worker_threads'
import { lastResortCollection } from '../../memory/heap-release.js'
import { foldRuns, type FoldRun } from '../embedded/fold-client.js'
import { servePort } from '../embedded/serve-port.js'
import { compactionWaits } from '../embedded/task-queue.js'
import { EmbeddedKnowledgeGraphStore, type EmbeddedKnowledgeGraphOptions } from './embedded.js'

/**
 * The store as the thread holds it: a full collection of the thread's heap once its load is done, and after a
 * namespace is dropped. What the load or the namespace held is otherwise kept until the thread's next collection, which
 * an idle thread does not run: 0.9 GiB at 1M chunks (bench/results/memory.log.md, "The knowledge graph in a thread of its own").
 */
class ThreadKnowledgeGraphStore extends EmbeddedKnowledgeGraphStore {
  #collected = false
  readonly #collect = lastResortCollection()

  override async init(): Promise<void> {
    await super.init()
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

// The thread that holds the embedded knowledge graph (`ThreadedKnowledgeGraphStore`): its load, writes and reads.
servePort(new ThreadKnowledgeGraphStore(workerData as EmbeddedKnowledgeGraphOptions))

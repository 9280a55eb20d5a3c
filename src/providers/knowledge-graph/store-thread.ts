import { workerData } from 'node:worker_threads'
import { lastResortCollection } from '../../memory/heap-release.js'
import { servePort } from '../embedded/serve-port.js'
import { EmbeddedKnowledgeGraphStore, type EmbeddedKnowledgeGraphOptions } from './embedded.js'

/**
 * The store as the thread holds it: once its load is done, a full collection of the thread's heap. The load's garbage
 * (its snapshot's blocks, its log's records) is otherwise held until the thread's next collection, which an idle
 * thread does not run: 0.9 GiB at 1M chunks (bench/results/memory.log.md, "The knowledge graph in a thread").
 */
class ThreadKnowledgeGraphStore extends EmbeddedKnowledgeGraphStore {
  #collected = false

  override async init(): Promise<void> {
    await super.init()
    if (this.#collected) return
    this.#collected = true
    await lastResortCollection()()
  }
}

// The thread that holds the embedded knowledge graph (`ThreadedKnowledgeGraphStore`): its load, writes and reads.
servePort(new ThreadKnowledgeGraphStore(workerData as EmbeddedKnowledgeGraphOptions))

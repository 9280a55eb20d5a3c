import { threadOptions } from '../embedded/fold-gate.js'
import { servePort } from '../embedded/serve-port.js'
import { ThreadHeld, type ThreadCounters } from '../embedded/threaded-store.js'
import { EmbeddedKnowledgeGraphStore, type EmbeddedKnowledgeGraphOptions } from './embedded.js'

/** The store as the thread holds it: its heap collected after its load and after a drop (`ThreadHeld`). */
class ThreadKnowledgeGraphStore extends EmbeddedKnowledgeGraphStore {
  readonly #held = new ThreadHeld()

  override async init(): Promise<void> {
    await super.init()
    await this.#held.afterLoad()
  }

  override async dropNamespace(namespace: string): Promise<void> {
    await super.dropNamespace(namespace)
    await this.#held.afterDrop()
  }

  threadCounters(takeFolds: boolean): ThreadCounters {
    return this.#held.counters(takeFolds)
  }
}

// The thread that holds the embedded knowledge graph (`ThreadedKnowledgeGraphStore`): its load, writes and reads.
servePort(new ThreadKnowledgeGraphStore(threadOptions<EmbeddedKnowledgeGraphOptions>()))

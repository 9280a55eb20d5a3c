import { threadOptions } from '../embedded/fold-gate.js'
import { servePort } from '../embedded/serve-port.js'
import { ThreadHeld, type ThreadCounters } from '../embedded/threaded-store.js'
import { EmbeddedEpisodicGraphStore, type EmbeddedEpisodicGraphStoreOptions } from './embedded.js'

/** The store as the thread holds it: its heap collected after its load and after a drop (`ThreadHeld`). */
class ThreadEpisodicGraphStore extends EmbeddedEpisodicGraphStore {
  readonly #held = new ThreadHeld()

  protected override async load(): Promise<void> {
    await super.load()
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

// The thread that holds the embedded episodic graph (`ThreadedEpisodicGraphStore`): its load, writes and reads.
servePort(new ThreadEpisodicGraphStore(threadOptions<EmbeddedEpisodicGraphStoreOptions>()))

import { randomUUID } from 'node:crypto'
import { clockSeed, type DocumentChanges, type GenerationStore, type IndexKind, type NamespaceGenerations } from './port.js'
import { formatVersion } from './version.js'

interface Counters {
  generation: number
  last: Record<IndexKind, number>
}

/** The counters of one process (no Redis): right for a single replica, whose restart starts a new epoch. */
export class MemoryGenerationStore implements GenerationStore {
  readonly backend = 'memory'
  readonly #epoch = randomUUID().slice(0, 8)
  readonly #namespaces = new Map<string, Counters>()

  async recordWrite(namespace: string, kinds: readonly IndexKind[]): Promise<number> {
    const counters = this.#counters(namespace)
    counters.generation += 1
    for (const kind of kinds) counters.last[kind] = counters.generation
    return counters.generation
  }

  async read(namespace: string): Promise<NamespaceGenerations> {
    const { generation, last } = this.#counters(namespace)
    return {
      generation,
      versions: { hybrid: formatVersion(this.#epoch, last.hybrid), graphrag: formatVersion(this.#epoch, last.graphrag), episodic: formatVersion(this.#epoch, last.episodic) }
    }
  }

  /** No change log: one process is the only writer of its catalog, which a full re-read keeps right should it be asked. */
  async documentChanges(namespace: string): Promise<DocumentChanges> {
    return { position: { epoch: this.#epoch, generation: this.#counters(namespace).last.hybrid } }
  }

  async close(): Promise<void> {}

  #counters(namespace: string): Counters {
    let counters = this.#namespaces.get(namespace)
    if (!counters) {
      counters = { generation: clockSeed(), last: { hybrid: 0, graphrag: 0, episodic: 0 } }
      this.#namespaces.set(namespace, counters)
    }
    return counters
  }
}

import { EmbeddedEpisodicGraphStore, type EmbeddedEpisodicGraphStoreOptions } from './embedded.js'
import { Neo4jEpisodicGraphStore, type Neo4jEpisodicGraphStoreOptions } from './neo4j.js'
import type { EpisodicGraphStore } from './port.js'
import { ThreadedEpisodicGraphStore } from './threaded.js'

export type EpisodicGraphStoreOptions =
  | ({
      backend: 'memory'
      /** The graph in a thread of its own (`ThreadedEpisodicGraphStore`, `EPISODIC_THREAD`); default none. */
      thread?: boolean
    } & EmbeddedEpisodicGraphStoreOptions)
  | ({ backend: 'neo4j' } & Neo4jEpisodicGraphStoreOptions)

/** The episodic graph store that `options.backend` names; connects and reads files only when first used. */
export function createEpisodicGraphStore(options: EpisodicGraphStoreOptions): EpisodicGraphStore {
  switch (options.backend) {
    case 'memory': {
      const { backend: _, thread, ...rest } = options
      return thread ? new ThreadedEpisodicGraphStore(rest) : new EmbeddedEpisodicGraphStore(rest)
    }
    case 'neo4j': {
      const { backend: _, ...rest } = options
      return new Neo4jEpisodicGraphStore(rest)
    }
    default: {
      const unknown: never = options
      throw new Error(`unknown episodic graph backend ${String((unknown as { backend: unknown }).backend)}`)
    }
  }
}

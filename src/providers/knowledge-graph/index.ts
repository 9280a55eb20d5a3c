import { createNeo4jConnection, type Neo4jConnection, type Neo4jConnectionOptions } from '../neo4j/connection.js'
import { EmbeddedKnowledgeGraphStore } from './embedded.js'
import { Neo4jKnowledgeGraphStore } from './neo4j.js'
import { ThreadedKnowledgeGraphStore } from './threaded.js'
import type { KnowledgeGraphStore } from './port.js'

export type { KnowledgeGraphStore } from './port.js'

/** Which knowledge graph store to create, as `GRAPH_BACKEND` and its companions configure it. */
export type KnowledgeGraphStoreOptions =
  | {
      backend: 'memory'
      /** Directory the embedded graph persists to (e.g. `<DATA_DIR>/graph`); none keeps it in memory only. */
      dir?: string
      /** The graph in a thread of its own (`ThreadedKnowledgeGraphStore`, `GRAPH_THREAD`); default in the caller's. */
      thread?: boolean
    }
  | {
      backend: 'neo4j'
      /** Connection options, or a connection shared with other providers (then `close()` closes it too). */
      neo4j: Neo4jConnectionOptions | Neo4jConnection
      /** Prefix for labels and schema names (keeps stores apart in one database, e.g. test runs); default none. */
      labelPrefix?: string
    }

/** Creates the configured store; nothing connects until the first call (or `init()`). */
export function createKnowledgeGraphStore(options: KnowledgeGraphStoreOptions): KnowledgeGraphStore {
  switch (options.backend) {
    case 'memory':
    {
      const embedded = options.dir === undefined ? {} : { dir: options.dir }
      return options.thread ? new ThreadedKnowledgeGraphStore(embedded) : new EmbeddedKnowledgeGraphStore(embedded)
    }
    case 'neo4j':
      return new Neo4jKnowledgeGraphStore({
        connection: 'run' in options.neo4j ? options.neo4j : createNeo4jConnection(options.neo4j),
        ...(options.labelPrefix === undefined ? {} : { labelPrefix: options.labelPrefix })
      })
    default: {
      const unknown: never = options
      throw new Error(`unknown graph backend: ${JSON.stringify((unknown as { backend: unknown }).backend)}`)
    }
  }
}

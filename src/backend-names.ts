import type { Config } from './config.js'
import { backendName } from './providers/errors.js'

/** Each backend's name by the slot it fills. */
export interface BackendNames {
  embedder: string
  vectors: string
  lexical: string
  graph: string
  episodes: string
  cache: string
}

/** The name of each backend, as `/readyz`, metrics and errors give it. */
export function backendNames(config: Config): BackendNames {
  return {
    embedder: backendName('embedder', config.embedder.backend),
    vectors: backendName('vector-store', config.vector.backend),
    lexical: backendName('lexical-index', config.lexical.backend === 'qdrant' ? 'qdrant' : 'bm25'),
    graph: backendName('knowledge-graph', config.graph.backend),
    episodes: backendName('episodic-graph', config.graph.backend),
    cache: backendName('cache', config.cache.redisUrl ? 'redis' : 'memory')
  }
}

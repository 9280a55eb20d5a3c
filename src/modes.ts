import { createEpisodicAdapter, type EpisodicRequest } from '../adapters/episodic/index.js'
import { createGraphragAdapter, type GraphragAdapter } from '../adapters/graphrag/index.js'
import { createHybridAdapter, type HybridRequest } from '../adapters/hybrid/index.js'
import type { ModeAdapter } from '../adapters/types.js'
import type { Services } from './services.js'

export type ModeTable = {
  hybrid: ModeAdapter<HybridRequest>
  graphrag: GraphragAdapter
  episodic: ModeAdapter<EpisodicRequest>
}

/** Mode name -> adapter, wired from the services. The only place that knows which adapter serves a mode. */
export function createModes(services: Services): ModeTable {
  const { config } = services
  return {
    hybrid: createHybridAdapter(
      { vectors: services.vectors, embedder: services.embedder, lexical: services.lexical, chunks: services.documents },
      { rrfK: 60, window: 50, timeouts: { embedding: config.timeouts.embedding, vector: config.timeouts.vector, lexical: config.timeouts.lexical } }
    ),
    graphrag: createGraphragAdapter({ graph: services.graph }),
    episodic: createEpisodicAdapter(
      { graph: services.episodes, vectors: services.vectors, embedder: services.embedder },
      {
        collectionPrefix: config.collectionPrefix,
        timeouts: { embedding: config.timeouts.embedding, vector: config.timeouts.vector, graph: config.timeouts.graph }
      }
    )
  }
}

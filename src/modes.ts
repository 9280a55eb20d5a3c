import { createEpisodicAdapter, type EpisodicAdapterDefaults, type EpisodicRequest } from '../adapters/episodic/index.js'
import { createGraphragAdapter, type GraphragAdapter } from '../adapters/graphrag/index.js'
import { createHybridAdapter, type HybridDefaults, type HybridRequest } from '../adapters/hybrid/index.js'
import type { ModeAdapter } from '../adapters/types.js'
import type { Mode } from './schemas/recall-bundle.js'
import type { BackendNames, Services } from './services.js'

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
      { vectors: services.vectors, embedder: services.embedder, corpus: (namespace) => services.documents.get(namespace) },
      {
        rrfK: 60, window: 50,
        timeouts: { embedding: config.timeouts.embedding, vector: config.timeouts.vector, lexical: config.timeouts.lexical },
        backends: legBackendsOf(services.names).hybrid as HybridDefaults['backends']
      }
    ),
    graphrag: createGraphragAdapter({ graph: services.graph }),
    episodic: createEpisodicAdapter(
      { graph: services.episodes, vectors: services.vectors, embedder: services.embedder },
      {
        collectionPrefix: config.collectionPrefix,
        timeouts: { embedding: config.timeouts.embedding, vector: config.timeouts.vector, graph: config.timeouts.graph },
        backends: legBackendsOf(services.names).episodic as EpisodicAdapterDefaults['backends']
      }
    )
  }
}

/** The backend behind each leg of each mode, by leg name: a failed leg is counted against it, and a timeout names it. */
export function legBackendsOf(names: BackendNames): Record<Mode, Record<string, string>> {
  return {
    hybrid: { embedding: names.embedder, vector: names.vectors, lexical: names.lexical },
    graphrag: { graph: names.graph },
    episodic: { embedding: names.embedder, vector: names.vectors, graph: names.episodes, time_range: names.episodes }
  }
}

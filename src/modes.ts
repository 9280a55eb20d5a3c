import { createGraphragAdapter, type GraphragAdapter } from '../adapters/graphrag/index.js'
import { createHybridAdapter, type HybridRequest } from '../adapters/hybrid/index.js'
import type { ModeAdapter } from '../adapters/types.js'
import type { Mode } from './schemas/recall-bundle.js'
import type { Services } from './services.js'

/** A mode that cannot answer in this build, with the reason given in the 501. */
export interface UnavailableMode {
  readonly unavailable: string
}

export type ModeTable = {
  hybrid: ModeAdapter<HybridRequest>
  graphrag: GraphragAdapter
  episodic: ModeAdapter<{ query: string; top_k: number }> | UnavailableMode
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
    episodic: { unavailable: 'the episodic bundle search lands with its own issue' }
  }
}

export const isUnavailable = (m: ModeTable[Mode]): m is UnavailableMode => 'unavailable' in m

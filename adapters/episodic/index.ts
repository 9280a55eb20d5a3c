/**
 * `mode=episodic`: m-flow's episodic bundle search (docs/episodic.md). The definition below is all the
 * service knows of the mode; the adapter (`adapter.ts`) fetches, and the scoring steps are the pure
 * functions of this folder (preprocess, normalise, bonuses, projection, bundle scoring, output).
 */
import type { EpisodicGraphStore } from '../../src/providers/episodic-graph/port.js'
import { defineMode } from '../definition.js'
import { createEpisodicAdapter, type EpisodicAdapter, type EpisodicPorts, type EpisodicRequest } from './adapter.js'
import { EPISODIC_LEGS, EPISODIC_STARTUP, episodicFilter, EpisodicMetadataSchema, episodicOptions, type EpisodicMetadata } from './spec.js'

export * from './adapter.js'
export * from './spec.js'

/** The service's ports the mode reads, by slot: its graph is the `episodes` slot (`graph` is the knowledge graph's). */
type EpisodicSlots = Omit<EpisodicPorts, 'graph'> & { episodes: EpisodicGraphStore }

export const episodicMode = defineMode<'episodic', EpisodicSlots, EpisodicRequest, EpisodicMetadata, EpisodicAdapter>({
  name: 'episodic',
  options: episodicOptions,
  queryOptions: {},
  filter: episodicFilter,
  metadata: EpisodicMetadataSchema,
  startup: EPISODIC_STARTUP,
  legs: EPISODIC_LEGS,
  index: 'episodes',
  fromQuery: () => ({}),
  embedsQuery: () => true,
  adapterRequest: (common, options, filter) => {
    const range = filter?.time_range as { start?: string; end?: string } | undefined
    return {
      ...common,
      ...((options.episodic as Record<string, unknown> | undefined) ?? {}),
      ...(range ? {
        time_range: {
          ...(range.start !== undefined ? { start_ms: Date.parse(range.start) } : {}),
          ...(range.end !== undefined ? { end_ms: Date.parse(range.end) } : {})
        }
      } : {})
    }
  },
  // A derived Episode cites its document's chunks; an imported one carries no chunk lineage and stands for itself.
  evidence: (item) => {
    const chunks = Array.isArray(item.metadata.evidence)
      ? (item.metadata.evidence as Array<{ chunk_id?: unknown }>).map((e) => e.chunk_id).filter((id): id is string => typeof id === 'string') : []
    return chunks.length > 0 ? chunks : [item.source]
  },
  create: (ports, deployment) => createEpisodicAdapter({ graph: ports.episodes, vectors: ports.vectors, embedder: ports.embedder }, {
    collectionPrefix: deployment.collectionPrefix,
    ...(deployment.lexicalAnalyzer ? { analyzer: deployment.lexicalAnalyzer } : {}),
    timeouts: { embedding: deployment.timeouts.embedding, vector: deployment.timeouts.vector, graph: deployment.timeouts.graph },
    backends: { embedding: deployment.backends.embedder, vector: deployment.backends.vectors, graph: deployment.backends.episodes }
  })
})

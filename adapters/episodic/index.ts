/**
 * `mode=episodic`: m-flow's episodic bundle search (spec/episodic.md). The definition below is all the
 * service knows of the mode; the adapter (`adapter.ts`) fetches, and the scoring steps are the pure
 * functions of this folder (preprocess, normalise, bonuses, projection, bundle scoring, output).
 */
import { defineMode } from '../definition.js'
import { createEpisodicAdapter, type EpisodicPorts, type EpisodicRequest } from './adapter.js'
import { EPISODIC_LEGS, EPISODIC_STARTUP, episodicFilter, EpisodicMetadataSchema, episodicOptions, type EpisodicMetadata } from './spec.js'

export * from './adapter.js'
export * from './spec.js'

export const episodicMode = defineMode<'episodic', EpisodicPorts, EpisodicRequest, EpisodicMetadata>({
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
  // An Episode carries no chunk lineage in this project: it stands for itself, as its source (`episode:<id>`).
  evidence: (item) => [item.source],
  create: (ports, deployment) => createEpisodicAdapter(ports, {
    collectionPrefix: deployment.collectionPrefix,
    timeouts: { embedding: deployment.timeouts.embedding, vector: deployment.timeouts.vector, graph: deployment.timeouts.graph },
    backends: { embedding: deployment.backends.embedder, vector: deployment.backends.vectors, graph: deployment.backends.episodes }
  })
})

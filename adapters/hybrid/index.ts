/**
 * `mode=hybrid`: dense vectors and BM25 over the same chunks, fused by default as a convex combination of each
 * leg's per-query min-max normalised scores (alpha 0.5, the lexical leg's weight: `DEFAULT_FUSION` in
 * `fusion.ts`); `fusion: "rrf"` fuses by Reciprocal Rank Fusion instead (k 60). A namespace's stored retrieval
 * defaults replace these (docs/api.md, "Hybrid in detail"). The definition below is all the service knows of the
 * mode; the adapter (`adapter.ts`) runs it, and the scoring steps are the pure functions of this folder
 * (`fusion-convex.ts`, `rrf.ts`, `strength.ts`).
 */
import type { MetadataCondition } from '../../src/providers/vector-store/port.js'
import { defineMode } from '../definition.js'
import { mixedFusionOptions } from './fusion.js'
import { createHybridAdapter, HYBRID_DEFAULTS, type HybridAdapter, type HybridFilter, type HybridPorts, type HybridRequest } from './adapter.js'
import { HYBRID_LEGS, HYBRID_STARTUP, hybridFilter, HybridMetadataSchema, hybridOptions, hybridQueryOptions, type HybridLeg, type HybridMetadata } from './spec.js'

export * from './adapter.js'
export * from './spec.js'

type FilterCondition = string | number | boolean | { any_of: Array<string | number | boolean> } | { gt?: number; gte?: number; lt?: number; lte?: number }

/** The metadata conditions of a filter in the stores' terms. */
function metadataConditions(metadata: Readonly<Record<string, FilterCondition>>): MetadataCondition[] {
  return Object.entries(metadata).map(([key, c]): MetadataCondition => {
    if (typeof c !== 'object') return { key, equals: c }
    if ('any_of' in c) return { key, any_of: c.any_of }
    return { key, range: c }
  })
}

/** What the hybrid adapter takes of a normalised filter. */
function hybridFilterOf(filter: Readonly<Record<string, unknown>>): HybridFilter {
  const f = filter as { doc_ids?: string[]; source_prefix?: string; metadata?: Record<string, FilterCondition> }
  return {
    ...(f.doc_ids ? { doc_ids: f.doc_ids } : {}),
    ...(f.source_prefix !== undefined ? { source_prefix: f.source_prefix } : {}),
    ...(f.metadata ? { metadata: metadataConditions(f.metadata) } : {})
  }
}

export const hybridMode = defineMode<'hybrid', HybridPorts, HybridRequest, HybridMetadata, HybridAdapter>({
  name: 'hybrid',
  options: hybridOptions,
  queryOptions: hybridQueryOptions,
  filter: hybridFilter,
  metadata: HybridMetadataSchema,
  startup: HYBRID_STARTUP,
  legs: HYBRID_LEGS,
  index: 'documents',
  fromQuery: (q) => ({
    ...(q.legs !== undefined ? { legs: [...new Set(String(q.legs).split(','))] } : {}),
    ...(q.rrf_k !== undefined ? { rrf_k: q.rrf_k } : {}),
    ...(q.window !== undefined ? { window: q.window } : {}),
    ...(q.fusion !== undefined ? { fusion: q.fusion } : {}),
    ...(q.alpha !== undefined ? { alpha: q.alpha } : {}),
    ...(q.normalisation !== undefined ? { normalisation: q.normalisation } : {}),
    ...(q.graph_weight !== undefined ? { graph_weight: q.graph_weight } : {}),
    ...(q.include_images !== undefined ? { include_images: q.include_images } : {})
  }),
  embedsQuery: (options) => options.legs === undefined || (options.legs as readonly HybridLeg[]).includes('vector') || options.include_images === true,
  adapterRequest: (common, options, filter) => ({
    ...common,
    ...(options as Pick<HybridRequest, 'legs' | 'rrf_k' | 'window' | 'weights' | 'fusion' | 'alpha' | 'normalisation' | 'graph_weight' | 'include_images'>),
    ...(filter ? { filter: hybridFilterOf(filter) } : {})
  }),
  checkOptions: (options, at) => mixedFusionOptions(options, at),
  evidence: (item) => [item.id],
  create: (ports, deployment) => createHybridAdapter(ports, {
    ...HYBRID_DEFAULTS,
    timeouts: { embedding: deployment.timeouts.embedding, vector: deployment.timeouts.vector, lexical: deployment.timeouts.lexical, graph: deployment.timeouts.graph },
    backends: { embedding: deployment.backends.embedder, vector: deployment.backends.vectors, lexical: deployment.backends.lexical, graph: deployment.backends.graph }
  })
})

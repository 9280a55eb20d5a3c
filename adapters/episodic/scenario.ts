/**
 * The scenario runner (docs/episodic.md): the pipeline from the point after vector search, on an
 * in-memory graph, with injected post-normalisation scores, or raw distances that the configured
 * `normalisation` rule turns into scores. Used by golden tests and for debugging.
 */
import { DEFAULT_EPISODIC_CONFIG, NORMALISATIONS, RELATION_COLLECTION, type EpisodicConfig } from './config.js'
import { normaliseCollections, type DistanceHit } from './normalise.js'
import { runEpisodicPipeline, effectiveVectorLimit, type PipelineGraph } from './pipeline.js'
import { preprocessQuery } from './preprocess.js'
import { buildInMemoryGraph, projectNodeset, projectTwoPhases } from '../../src/providers/episodic-graph/projection.js'
import type { CollectionHits, EpisodeBundle, EpisodicEdge, EpisodicNode, ScoredHit } from './types.js'

export interface ScenarioInput {
  query: string
  /** ISO 8601; defaults to the current time. */
  now?: string
  config?: Partial<Record<keyof EpisodicConfig, unknown>>
  graph: { nodes: EpisodicNode[]; edges: EpisodicEdge[]; members?: string[] }
  /**
   * Per collection, either every hit with `score` (after normalisation)
   * or every hit with `distance` (raw, lower is closer), normalised by `config.normalisation`.
   */
  hits: Record<string, Array<{ id?: string; score?: number; distance?: number; text?: string }>>
}

export interface ScenarioOutput {
  vector_limit: number
  /** Only when the hits were given as distances: the scores they became, per collection, before bonuses. */
  normalised?: Record<string, Array<{ id: string; score: number }>>
  best_by_id: Record<string, number>
  edge_hit_map: Record<string, number>
  bundles: EpisodeBundle[]
  text: string
}

/** Thrown for a malformed scenario; the message names the field. */
export class ScenarioError extends Error {
  override name = 'ScenarioError'
}

/** The node field each collection embeds. */
const COLLECTION_FIELD: Readonly<Record<string, keyof EpisodicNode>> = {
  Episode_summary: 'summary',
  Facet_search_text: 'search_text',
  Facet_anchor_text: 'anchor_text',
  FacetPoint_search_text: 'search_text',
  Entity_name: 'name',
  Concept_name: 'name'
}

function scenarioConfig(overrides: ScenarioInput['config']): EpisodicConfig {
  const cfg: EpisodicConfig = { ...DEFAULT_EPISODIC_CONFIG }
  const out = cfg as unknown as Record<string, unknown>
  for (const [key, value] of Object.entries(overrides ?? {})) {
    if (!(key in DEFAULT_EPISODIC_CONFIG)) throw new ScenarioError(`config.${key}: unknown constant`)
    const expected = DEFAULT_EPISODIC_CONFIG[key as keyof EpisodicConfig]
    const same = Array.isArray(expected) ? Array.isArray(value) : typeof value === typeof expected
    if (!same) throw new ScenarioError(`config.${key}: expected ${Array.isArray(expected) ? 'array' : typeof expected}`)
    if (key === 'normalisation' && !(NORMALISATIONS as readonly unknown[]).includes(value)) {
      throw new ScenarioError(`config.normalisation: must be one of ${NORMALISATIONS.join(', ')}`)
    }
    out[key] = value
  }
  return cfg
}

/**
 * Runs one scenario and returns the runner's JSON output. `options.graph` replaces the in-memory
 * projection of `input.graph` (tests run the same scenarios against a graph store holding that graph).
 */
export async function runScenario(input: ScenarioInput, options: { graph?: PipelineGraph } = {}): Promise<ScenarioOutput> {
  if (typeof input.query !== 'string' || input.query === '') throw new ScenarioError('query: must be a non-empty string')
  if (!input.graph || !Array.isArray(input.graph.nodes) || !Array.isArray(input.graph.edges)) {
    throw new ScenarioError('graph: must have nodes and edges')
  }
  const nowMs = input.now === undefined ? Date.now() : Date.parse(input.now)
  if (Number.isNaN(nowMs)) throw new ScenarioError('now: not an ISO 8601 time')
  const cfg = scenarioConfig(input.config)
  const graph = buildInMemoryGraph(input.graph.nodes, input.graph.edges, input.graph.members)

  const entries = Object.entries(input.hits ?? {})
  const byDistance = entries.some(([, list]) => list.some((h) => h.distance !== undefined))
  const key = byDistance ? 'distance' : 'score'
  const given: Record<string, Array<{ id: string; value: number; text: string }>> = {}
  for (const [collection, list] of entries) {
    given[collection] = list.map((h, i) => {
      const value = h[key]
      if (typeof value !== 'number' || !Number.isFinite(value)) {
        throw new ScenarioError(`hits.${collection}[${i}].${key}: must be a number (give every hit a score, or every hit a distance)`)
      }
      if (collection === RELATION_COLLECTION) {
        const text = h.text ?? h.id
        if (text === undefined) throw new ScenarioError(`hits.${collection}[${i}]: needs text (the edge label)`)
        return { id: h.id ?? text, value, text }
      }
      if (h.id === undefined) throw new ScenarioError(`hits.${collection}[${i}].id: missing`)
      const field = COLLECTION_FIELD[collection]
      const fromNode = field ? graph.nodes.get(h.id)?.[field] : undefined
      return { id: h.id, value, text: h.text ?? (typeof fromNode === 'string' ? fromNode : '') }
    })
  }
  const as = <T>(f: (h: { id: string; value: number; text: string }) => T) =>
    Object.fromEntries(Object.entries(given).map(([c, list]) => [c, list.map(f)]))
  const hits: CollectionHits = byDistance
    ? normaliseCollections(as((h): DistanceHit => ({ id: h.id, distance: h.value, text: h.text })), cfg.normalisation)
    : as((h): ScoredHit => ({ id: h.id, score: h.value, text: h.text }))

  const pre = preprocessQuery(input.query, cfg, nowMs)
  const inMemory = async (ids: readonly string[]) => projectNodeset(graph, ids)
  const result = await runEpisodicPipeline(pre, hits, cfg, options.graph ?? {
    project: (request) => projectTwoPhases(inMemory, request),
    describe: inMemory
  })
  return {
    vector_limit: effectiveVectorLimit(pre, cfg),
    ...(byDistance ? { normalised: Object.fromEntries(Object.entries(hits).map(([c, l]) => [c, l.map((h) => ({ id: h.id, score: h.score }))])) } : {}),
    best_by_id: Object.fromEntries(result.best_by_id),
    edge_hit_map: Object.fromEntries(result.edge_hit_map),
    bundles: result.top.map((b) => ({
      episode_id: b.episode_id,
      score: b.score,
      best_path: b.best_path,
      best_support_id: b.best_support_id,
      best_facet_id: b.best_facet_id,
      best_point_id: b.best_point_id,
      best_entity_id: b.best_entity_id
    })),
    text: result.output.text
  }
}

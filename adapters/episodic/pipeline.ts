/**
 * The scoring pipeline from the point after vector search (docs/episodic.md, "The pipeline, step by step"), over any
 * graph reachable through a `project` function (one round trip per call).
 */
import { computeAdaptiveContext, computeCollectionStats } from './adaptive.js'
import { buildEdgeHitMap, computeBestById } from './best-by-id.js'
import { applyBonuses } from './bonuses.js'
import { computeEpisodeBundles, selectTopBundles } from './bundle-scoring.js'
import type { EpisodicConfig } from './config.js'
import { assembleOutput, edgeKey, type AssembledOutput } from './output.js'
import { relevantIds } from '../../src/providers/episodic-graph/projection.js'
import { buildRelationshipIndex, type RelationshipIndex } from './relationship-index.js'
import { applyTimeBonusToBundles, timeApplies } from './time-bonus.js'
import type { CollectionHits, EpisodeBundle, EpisodicEdge, EpisodicNode, GraphFragment, PreprocessedQuery, ProjectionRequest } from './types.js'

/** The per-collection vector limit: widened when the query has a confident time. */
export function effectiveVectorLimit(pre: PreprocessedQuery, cfg: EpisodicConfig): number {
  if (timeApplies(pre.time_info, cfg)) {
    return Math.min(Math.floor(cfg.wide_search_top_k * cfg.time_wide_multiplier), cfg.time_wide_cap)
  }
  return cfg.wide_search_top_k
}

export interface PipelineResult {
  best_by_id: Map<string, number>
  edge_hit_map: Map<string, number>
  /** The scoring projection. */
  fragment: GraphFragment
  /** Every finite bundle after the time bonus, before top-k. */
  all_bundles: EpisodeBundle[]
  top: EpisodeBundle[]
  output: AssembledOutput
}

/** The graph as the pipeline reaches it: one round trip per call (EpisodicGraphStore's `project` and `describe`). */
export interface PipelineGraph {
  /**
   * The two-phase projection with what the scorer reads: node ids, types and times;
   * edge ends, relationships and texts. An edge whose label is none of the retrieved ones may come
   * without its text, marked `label_withheld`.
   */
  project(request: ProjectionRequest): Promise<GraphFragment>
  /** One hop from each id, with every display property and the edges' descriptions: for the few Episodes shown. */
  describe(ids: readonly string[]): Promise<GraphFragment>
}

export interface PipelineOptions {
  /** Only these Episodes may be returned: bundles of others are dropped before top-k (a request's `time_range`). */
  episodes?: ReadonlySet<string>
  /** Only Episodes it keeps may be returned (the part of the memory a request reads). */
  keep?: (episodeId: string) => boolean
  /**
   * Costs some Episodes otherwise, after the time bonus and before top-k: it may change, add or leave bundles (a
   * conversation session ranked by its turns, turn-evidence.ts). An added Episode the projection did not reach is
   * described with the others shown.
   */
  rescore?: (bundles: EpisodeBundle[], nodes: ReadonlyMap<string, EpisodicNode>) => EpisodeBundle[]
}

/**
 * Runs bonuses, best_by_id, projection, the relationship index, edge_hit_map, bundle scoring, the time
 * bonus, top-k and output assembly. `hits` are normalised scores (lower is better).
 */
export async function runEpisodicPipeline(
  pre: PreprocessedQuery,
  hits: CollectionHits,
  cfg: EpisodicConfig,
  graph: PipelineGraph,
  options: PipelineOptions = {}
): Promise<PipelineResult> {
  // Adaptive context reads raw distances before bonuses and only orders detail-mode edges.
  const adaptive =
    cfg.enable_adaptive_weights && cfg.display_mode === 'detail'
      ? computeAdaptiveContext(computeCollectionStats(hits, cfg), cfg)
      : null
  const bonused = applyBonuses(hits, pre, cfg)
  const bestById = computeBestById(bonused)
  const edgeHitMap = buildEdgeHitMap(bonused)
  const request: ProjectionRequest = {
    relevant_ids: relevantIds(bestById, cfg.max_relevant_ids),
    best_by_id: bestById,
    max_ids: 2 * cfg.max_relevant_ids,
    episode_hit_ids: (hits['Episode_summary'] ?? []).map((h) => h.id),
    retrieved_labels: new Set(edgeHitMap.keys())
  }
  // With no relevant id upstream projects the whole nodeset, where every cost is +∞: nothing to fetch.
  const fragment = request.relevant_ids.length > 0 ? await graph.project(request) : { nodes: new Map(), edges: [] }
  const index = buildRelationshipIndex(fragment)
  let bundles = computeEpisodeBundles(index, bestById, edgeHitMap, cfg)
  if (timeApplies(pre.time_info, cfg)) bundles = applyTimeBonusToBundles(bundles, index.nodes, pre.time_info, cfg)
  const episodes = options.episodes
  if (episodes) bundles = bundles.filter((b) => episodes.has(b.episode_id))
  const keep = options.keep
  if (keep) bundles = bundles.filter((b) => keep(b.episode_id))
  if (options.rescore) bundles = options.rescore(bundles, index.nodes)
  const top = selectTopBundles(bundles, cfg.top_k)
  const shown = await describeShown(graph, top, index, cfg)
  const output = assembleOutput(top, { ...shown, bestById, edgeHitMap, cfg, time: pre.time_info, adaptive })
  return { best_by_id: bestById, edge_hit_map: edgeHitMap, fragment, all_bundles: bundles, top, output }
}

/**
 * The display properties of what the output shows: the top Episodes with their facets and entities, and
 * in `detail` also their facets' entities, the edge texts and the entity links' descriptions. One more
 * round trip, over a few ids; nothing is fetched when no Episode is returned.
 */
async function describeShown(
  graph: PipelineGraph,
  top: readonly EpisodeBundle[],
  index: RelationshipIndex,
  cfg: EpisodicConfig
): Promise<{ index: RelationshipIndex; described: Map<string, EpisodicEdge> }> {
  const described = new Map<string, EpisodicEdge>()
  if (top.length === 0) return { index, described }
  const ids = top.map((b) => b.episode_id)
  if (cfg.display_mode === 'detail') for (const b of top) ids.push(...(index.facets_by_episode.get(b.episode_id)?.keys() ?? []))
  const fragment = await graph.describe(ids)
  const nodes = new Map(index.nodes)
  const shown = new Set(top.map((b) => b.episode_id))
  for (const [id, node] of fragment.nodes) if (nodes.has(id) || shown.has(id)) nodes.set(id, node)
  for (const e of fragment.edges) described.set(edgeKey(e), e)
  return { index: { ...index, nodes }, described }
}

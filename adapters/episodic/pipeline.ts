/**
 * The scoring pipeline from the point after vector search (spec section 1, steps 4 to 14), over any
 * graph reachable through a `project` function (one round trip per call).
 */
import { computeAdaptiveContext, computeCollectionStats } from './adaptive.js'
import { buildEdgeHitMap, computeBestById } from './best-by-id.js'
import { applyBonuses } from './bonuses.js'
import { computeEpisodeBundles, selectTopBundles } from './bundle-scoring.js'
import type { EpisodicConfig } from './config.js'
import { assembleOutput, type AssembledOutput } from './output.js'
import { projectTwoPhases, type ProjectionResult } from './projection.js'
import { buildRelationshipIndex } from './relationship-index.js'
import { applyTimeBonusToBundles, timeApplies } from './time-bonus.js'
import type { CollectionHits, EpisodeBundle, GraphFragment, PreprocessedQuery } from './types.js'

/** The per-collection vector limit: widened when the query has a confident time (spec section 1 step 2). */
export function effectiveVectorLimit(pre: PreprocessedQuery, cfg: EpisodicConfig): number {
  if (timeApplies(pre.time_info, cfg)) {
    return Math.min(Math.floor(cfg.wide_search_top_k * cfg.time_wide_multiplier), cfg.time_wide_cap)
  }
  return cfg.wide_search_top_k
}

export interface PipelineResult {
  best_by_id: Map<string, number>
  edge_hit_map: Map<string, number>
  projection: ProjectionResult
  /** Every finite bundle after the time bonus, before top-k. */
  all_bundles: EpisodeBundle[]
  top: EpisodeBundle[]
  output: AssembledOutput
}

/**
 * Runs bonuses, best_by_id, projection, the relationship index, edge_hit_map, bundle scoring, the time
 * bonus, top-k and output assembly. `hits` are normalised scores (lower is better).
 */
export async function runEpisodicPipeline(
  pre: PreprocessedQuery,
  hits: CollectionHits,
  cfg: EpisodicConfig,
  project: (ids: readonly string[]) => Promise<GraphFragment>
): Promise<PipelineResult> {
  // Adaptive context reads raw distances before bonuses and only orders detail-mode edges.
  const adaptive =
    cfg.enable_adaptive_weights && cfg.display_mode === 'detail'
      ? computeAdaptiveContext(computeCollectionStats(hits, cfg), cfg)
      : null
  const bonused = applyBonuses(hits, pre, cfg)
  const bestById = computeBestById(bonused)
  const edgeHitMap = buildEdgeHitMap(bonused)
  const projection = await projectTwoPhases(project, bestById, cfg, (hits['Episode_summary'] ?? []).map((h) => h.id))
  const index = buildRelationshipIndex(projection.fragment)
  let bundles = computeEpisodeBundles(index, bestById, edgeHitMap, cfg)
  if (timeApplies(pre.time_info, cfg)) bundles = applyTimeBonusToBundles(bundles, index.nodes, pre.time_info, cfg)
  const top = selectTopBundles(bundles, cfg.top_k)
  const output = assembleOutput(top, { index, bestById, edgeHitMap, cfg, time: pre.time_info, adaptive })
  return { best_by_id: bestById, edge_hit_map: edgeHitMap, projection, all_bundles: bundles, top, output }
}

/**
 * Adaptive scoring (m-flow's adaptive weights). It only orders output edges in `detail` mode; bundle costs,
 * ranking and membership never depend on it.
 */
import type { EpisodicConfig } from './config.js'
import type { CollectionHits } from './types.js'

export interface CollectionStat {
  collection: string
  kind: 'node' | 'edge'
  top1: number
  top2: number
  gap: number
  ratio: number
  confidence: number
}

export interface AdaptiveContext {
  conf_node: number
  conf_edge: number
  w_node: number
  w_edge: number
  best_gap: number
}

const clip = (x: number, lo: number, hi: number): number => Math.min(hi, Math.max(lo, x))

export function fDist(r: number, cfg: EpisodicConfig): number {
  if (r < cfg.ratio_good) return 1.0
  if (r < cfg.ratio_avg) return 1 - ((r - cfg.ratio_good) / (cfg.ratio_avg - cfg.ratio_good)) * 0.5
  if (r < cfg.ratio_poor) return 0.5 - ((r - cfg.ratio_avg) / (cfg.ratio_poor - cfg.ratio_avg)) * 0.2
  return Math.max(0.1, 0.3 - (r - cfg.ratio_poor) * 0.2)
}

function fGap(g: number, cfg: EpisodicConfig): number {
  if (g > cfg.gap_high) return 1.0
  if (g > cfg.gap_low) return 0.6 + ((g - cfg.gap_low) / (cfg.gap_high - cfg.gap_low)) * 0.4
  if (g > cfg.gap_trivial) return 0.2 + ((g - cfg.gap_trivial) / (cfg.gap_low - cfg.gap_trivial)) * 0.4
  return 0.2
}

function collectionKind(name: string): 'node' | 'edge' {
  if (name.includes('relationship') || name.includes('edge')) return 'edge'
  if (['search_text', 'anchor_text', 'name', 'summary'].some((s) => name.includes(s))) return 'node'
  return 'edge'
}

/** Upstream `compute_collection_stats`, on raw distances, before bonuses; empty collections are skipped. */
export function computeCollectionStats(hits: CollectionHits, cfg: EpisodicConfig): CollectionStat[] {
  const stats: CollectionStat[] = []
  for (const [collection, list] of Object.entries(hits)) {
    if (list.length === 0) continue
    const baseline = cfg.collection_baselines[collection] ?? cfg.default_baseline
    const top1 = list[0]?.raw_distance ?? baseline
    const top2 = list.length > 1 ? list[1]?.raw_distance ?? 1.1 * baseline : 1.1 * baseline
    const gap = list.length > 1 ? Math.max(0, top2 - top1) : 0
    const ratio = top1 / baseline
    stats.push({ collection, kind: collectionKind(collection), top1, top2, gap, ratio, confidence: fDist(ratio, cfg) * fGap(gap, cfg) })
  }
  return stats
}

/** Upstream `compute_adaptive_context`. */
export function computeAdaptiveContext(stats: readonly CollectionStat[], cfg: EpisodicConfig): AdaptiveContext {
  const nodeConfs = stats.filter((s) => s.kind === 'node').map((s) => s.confidence)
  const edgeConfs = stats.filter((s) => s.kind === 'edge').map((s) => s.confidence)
  const confNode = nodeConfs.length > 0 ? Math.max(...nodeConfs) : 0.5
  const confEdge = edgeConfs.length > 0 ? Math.max(...edgeConfs) : 0.5
  const wNode = clip(confNode / (confNode + confEdge + 0.01), cfg.weight_clip_min, cfg.weight_clip_max)
  return {
    conf_node: confNode,
    conf_edge: confEdge,
    w_node: wNode,
    w_edge: 1 - wNode,
    best_gap: stats.length > 0 ? Math.max(...stats.map((s) => s.gap)) : 0
  }
}

/** The adaptive sort key of one output edge: `node` and `edge` costs, `rank` the Episode's 0-based rank. */
export function adaptiveEdgeScore(node: number, edge: number, rank: number, ctx: AdaptiveContext, cfg: EpisodicConfig): number {
  const semantic = Math.max(0, ctx.w_node * node + ctx.w_edge * edge)
  const low = Math.min(node, edge)
  const exactProxy = low < cfg.exact_match_threshold_weak ? 0.15 : low < cfg.exact_match_threshold_strong ? 0.08 : 0
  const match = exactProxy > 0.1 ? cfg.lambda_match_strong : exactProxy > 0.05 ? cfg.lambda_match_weak : 0
  const gap = ctx.best_gap > cfg.gap_high ? cfg.lambda_gap_high : ctx.best_gap > 0.1 ? cfg.lambda_gap_mid : 0
  const sem =
    semantic < cfg.semantic_threshold_excellent && exactProxy > 0.1
      ? cfg.lambda_semantic_boost
      : semantic < cfg.semantic_threshold_good
        ? cfg.lambda_semantic_mid
        : 0
  const lambda = clip(Math.max(ctx.conf_node, ctx.conf_edge) + match + gap + sem, cfg.lambda_min, cfg.lambda_max)
  const struct = 1 - 1 / (1 + rank * cfg.struct_decay_factor)
  return lambda * semantic + (1 - lambda) * struct
}

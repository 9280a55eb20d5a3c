/** Bundle scoring (m-flow `compute_episode_bundles`; docs/episodic.md, "The pipeline, step by step", step 8). Costs: lower is better, +∞ = unreachable. */
import type { EpisodicConfig } from './config.js'
import { byNeighbourId, type RelationshipIndex } from './relationship-index.js'
import type { BestPath, EpisodeBundle, EpisodicEdge } from './types.js'

/** Edge cost: the RelationType hit of the edge's label, looked up by text, else `edge_miss_cost`. */
export function edgeCost(edge: EpisodicEdge, edgeHitMap: ReadonlyMap<string, number>, missCost: number): number {
  if (edge.label_withheld) return missCost
  const key = edge.edge_text || edge.relationship_type || edge.relationship_name || ''
  if (key === '') return missCost
  return edgeHitMap.get(key) ?? missCost
}

type FacetFrom = { kind: 'direct' | 'point' | 'facet_entity'; id: string }

interface FacetCost {
  cost: number
  from: FacetFrom
}

const byId = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

/** fc(f): the facet's own score, or cheaper through one of its points or entities. */
function computeFacetCosts(
  index: RelationshipIndex,
  d: (id: string) => number,
  ec: (edge: EpisodicEdge) => number,
  hop: number
): Map<string, FacetCost> {
  const out = new Map<string, FacetCost>()
  for (const f of index.facet_ids) {
    let cost = d(f)
    let from: FacetFrom = { kind: 'direct', id: f }
    for (const [p, edge] of byNeighbourId(index.points_by_facet.get(f))) {
      if (!Number.isFinite(d(p))) continue
      const c = d(p) + ec(edge) + hop
      if (c < cost) { cost = c; from = { kind: 'point', id: p } }
    }
    for (const [n, edge] of byNeighbourId(index.entities_by_facet.get(f))) {
      if (!Number.isFinite(d(n))) continue
      const c = d(n) + ec(edge) + hop
      if (c < cost) { cost = c; from = { kind: 'facet_entity', id: n } }
    }
    out.set(f, { cost, from })
  }
  return out
}

/**
 * Scores every Episode by its cheapest path. Candidates are tried direct, then
 * facets, then entities, with strict `<`, so on equal cost the earlier kind wins.
 *
 * Difference 5: Episodes of the fragment that are not in the index (no has_facet or involves_entity
 * edge) are scored too, by their direct path.
 */
export function computeEpisodeBundles(
  index: RelationshipIndex,
  bestById: ReadonlyMap<string, number>,
  edgeHitMap: ReadonlyMap<string, number>,
  cfg: Pick<EpisodicConfig, 'hop_cost' | 'direct_episode_penalty' | 'edge_miss_cost'>
): EpisodeBundle[] {
  const d = (id: string): number => bestById.get(id) ?? Infinity
  const ec = (edge: EpisodicEdge): number => edgeCost(edge, edgeHitMap, cfg.edge_miss_cost)
  const H = cfg.hop_cost
  const facetCosts = computeFacetCosts(index, d, ec, H)
  const episodes = new Set(index.episode_ids)
  for (const node of index.nodes.values()) if (node.type === 'Episode' && Number.isFinite(d(node.id))) episodes.add(node.id)

  const bundles: EpisodeBundle[] = []
  for (const e of episodes) {
    let best = Number.isFinite(d(e)) ? d(e) + cfg.direct_episode_penalty : Infinity
    let bundle: Omit<EpisodeBundle, 'score' | 'episode_id'> = {
      best_path: 'direct_episode', best_support_id: e, best_facet_id: null, best_point_id: null, best_entity_id: null
    }
    for (const [f, edge] of byNeighbourId(index.facets_by_episode.get(e))) {
      const fc = facetCosts.get(f)
      if (!fc || !Number.isFinite(fc.cost)) continue
      const fd = d(f)
      let E: number
      let Hh: number
      // The discount tiers are keyed on the facet's own score, not fc(f); tier 1 replaces the edge cost
      // with an absolute 0.1 even when the real edge is cheaper, as upstream.
      if (fd < 0.1) { E = 0.1; Hh = 0.05 } else if (fd < 0.2) { E = ec(edge) * 0.3; Hh = H * 0.3 } else { E = ec(edge); Hh = H }
      const c = fc.cost + E + Hh
      if (c < best) {
        best = c
        const path: BestPath = fc.from.kind === 'direct' ? 'facet' : fc.from.kind
        bundle = {
          best_path: path,
          best_support_id: fc.from.id,
          best_facet_id: f,
          best_point_id: fc.from.kind === 'point' ? fc.from.id : null,
          best_entity_id: fc.from.kind === 'facet_entity' ? fc.from.id : null
        }
      }
    }
    for (const [n, edge] of byNeighbourId(index.entities_by_episode.get(e))) {
      if (!Number.isFinite(d(n))) continue
      const c = d(n) + ec(edge) + H
      if (c < best) {
        best = c
        bundle = { best_path: 'entity', best_support_id: n, best_facet_id: null, best_point_id: null, best_entity_id: n }
      }
    }
    if (Number.isFinite(best)) bundles.push({ episode_id: e, score: best, ...bundle })
  }
  return bundles
}

/** Difference 1: ascending cost, equal costs by Episode id ascending; the first `topK`. */
export function selectTopBundles(bundles: readonly EpisodeBundle[], topK: number): EpisodeBundle[] {
  return [...bundles].sort((a, b) => a.score - b.score || byId(a.episode_id, b.episode_id)).slice(0, topK)
}

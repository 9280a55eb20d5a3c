/**
 * Shapes shared by the steps of the episodic pipeline (docs/episodic.md). Node attributes use the
 * projected property names (`src/providers/episodic-graph/fragment.ts`); times are epoch milliseconds.
 */

export type { EpisodicEdge, EpisodicNode,  GraphFragment, ProjectionRequest } from '../../src/providers/episodic-graph/fragment.js'

/** One vector hit after min-max normalisation: `score` in [0, 1], lower is better (normalise.ts). */
export interface ScoredHit {
  id: string
  score: number
  /** The embedded field value (`payload.text` upstream); for RelationType hits, the edge label. */
  text: string
  /** The unnormalised distance, used only by adaptive scoring. */
  raw_distance?: number
}

/** Hits per collection name (unprefixed: `Episode_summary`, …). */
export type CollectionHits = Record<string, ScoredHit[]>

export type BestPath = 'direct_episode' | 'facet' | 'point' | 'facet_entity' | 'entity'

/** One scored Episode. `score` is the cost: lower is better. */
export interface EpisodeBundle {
  episode_id: string
  score: number
  best_path: BestPath
  best_support_id: string
  best_facet_id: string | null
  best_point_id: string | null
  best_entity_id: string | null
}

export type DisplayMode = 'summary' | 'highly_related_summary' | 'detail'

/** How raw distances become scores: one pool per query (difference 6) or per collection (m-flow). */
export type Normalisation = 'query' | 'collection'

/** A parsed query time; times are epoch ms, UTC midnight boundaries. */
export interface QueryTime {
  has_time: boolean
  start_ms: number | null
  end_ms: number | null
  confidence: number
  duration_days: number
  query_wo_time: string
  /** The matched expressions, in the order they were recorded. */
  matches: Array<{ text: string; start_ms: number; end_ms: number; confidence: number }>
}

export type HybridReason = 'mixed_lang' | 'number' | 'short_query' | null

export interface PreprocessedQuery {
  original: string
  vector_query: string
  /** Difference 2: the keyword is a list of terms; upstream's string is their concatenation. */
  keyword_terms: string[]
  /** Upstream's keyword string (the terms joined with no separator), for display and comparison. */
  keyword: string
  hybrid_reason: HybridReason
  use_hybrid: boolean
  time_info: QueryTime | null
}

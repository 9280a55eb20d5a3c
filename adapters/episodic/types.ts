/**
 * Shapes shared by the steps of the episodic pipeline (spec/episodic.md). Node attributes use the
 * projected property names of spec section 6.1; times are epoch milliseconds.
 */

/** Node types the relationship index recognises (spec section 7); anything else is carried but ignored. */
export type EpisodicNodeType = 'Episode' | 'Facet' | 'FacetPoint' | 'Entity'

export interface EpisodicNode {
  id: string
  type: string
  name?: string | null
  summary?: string | null
  signature?: string | null
  facet_type?: string | null
  search_text?: string | null
  anchor_text?: string | null
  description?: string | null
  text?: string | null
  created_at?: number | null
  updated_at?: number | null
  mentioned_time_start_ms?: number | null
  mentioned_time_end_ms?: number | null
  mentioned_time_confidence?: number | null
  mentioned_time_text?: string | null
}

/** A stored edge; retrieval treats it as undirected. */
export interface EpisodicEdge {
  from: string
  to: string
  relationship_name: string
  edge_text?: string | null
  /** An Episode's or Facet's link to an Entity: what the entity is or did there (difference 7). */
  description?: string | null
  /**
   * Set by a projection asked for the retrieved labels only, when this edge's label is none of them: its
   * text was not sent, and its cost is `edge_miss_cost` whatever the text (spec section 5).
   */
  label_withheld?: boolean
  /** The database relationship label; set by projection (spec section 6.1). */
  relationship_type?: string | null
}

/** What a projection returns: the nodes by id and the kept edges. */
export interface GraphFragment {
  nodes: Map<string, EpisodicNode>
  edges: EpisodicEdge[]
}

/** The scoring projection's input (spec section 6.3, difference 5). */
export interface ProjectionRequest {
  /** Phase-1 targets: hit ids by ascending best_by_id (ties by id), at most `max_relevant_ids`. */
  relevant_ids: readonly string[]
  /** best_by_id: orders the phase-2 neighbours. */
  best_by_id: ReadonlyMap<string, number>
  /** Phase-2 cap on the targets, the relevant ids included (2 × `max_relevant_ids`). */
  max_ids: number
  /** Episode_summary hits: kept as nodes when neither phase reaches them (difference 5). */
  episode_hit_ids: readonly string[]
  /** The RelationType hits' labels: the only edge texts that can change a cost (spec section 5). */
  retrieved_labels?: ReadonlySet<string>
}

/** One vector hit after min-max normalisation: `score` in [0, 1], lower is better (normalise.ts). */
export interface ScoredHit {
  id: string
  score: number
  /** The embedded field value (`payload.text` upstream); for RelationType hits, the edge label. */
  text: string
  /** The unnormalised distance, used only by adaptive scoring (spec section 11). */
  raw_distance?: number
}

/** Hits per collection name (unprefixed: `Episode_summary`, …). */
export type CollectionHits = Record<string, ScoredHit[]>

export type BestPath = 'direct_episode' | 'facet' | 'point' | 'facet_entity' | 'entity'

/** One scored Episode (spec section 8.4). `score` is the cost: lower is better. */
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

/** How raw distances become scores: one pool per query (difference 6) or per collection (m-flow, spec 4.2). */
export type Normalisation = 'query' | 'collection'

/** A parsed query time (spec section 9.1); times are epoch ms, UTC midnight boundaries. */
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

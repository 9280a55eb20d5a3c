/**
 * The episodic graph as stores hold it and projections return it: node attributes use the
 * projected property names; times are epoch milliseconds. The scoring pipeline in adapters/episodic reads it.
 */

/** Node types the relationship index recognises; anything else is carried but ignored. */

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
  /** A derived Episode's document (docs/derivation.md, "Derived Episodes"); absent on an imported one. */
  derived_doc?: string | null
  /** A derived Episode's content hash: a re-derivation that gives the same writes nothing. */
  derived_hash?: string | null
  /** A derived Episode's evidence: JSON of its chunks, each with its heading path and the nodes drawn from it. */
  evidence?: string | null
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
   * text was not sent, and its cost is `edge_miss_cost` whatever the text.
   */
  label_withheld?: boolean
  /** The database relationship label; set by projection. */
  relationship_type?: string | null
}

/** What a projection returns: the nodes by id and the kept edges. */
export interface GraphFragment {
  nodes: Map<string, EpisodicNode>
  edges: EpisodicEdge[]
}

/** The scoring projection's input (its two phases, and difference 5: docs/episodic.md). */
export interface ProjectionRequest {
  /** Phase-1 targets: hit ids by ascending best_by_id (ties by id), at most `max_relevant_ids`. */
  relevant_ids: readonly string[]
  /** best_by_id: orders the phase-2 neighbours. */
  best_by_id: ReadonlyMap<string, number>
  /** Phase-2 cap on the targets, the relevant ids included (2 × `max_relevant_ids`). */
  max_ids: number
  /** Episode_summary hits: kept as nodes when neither phase reaches them (difference 5). */
  episode_hit_ids: readonly string[]
  /** The RelationType hits' labels: the only edge texts that can change a cost. */
  retrieved_labels?: ReadonlySet<string>
}

import type { EpisodicEdge, EpisodicNode, GraphFragment, ProjectionRequest } from '../../../adapters/episodic/types.js'
import type { BackendHealth } from '../errors.js'

export type { EpisodicEdge, EpisodicNode, GraphFragment, ProjectionRequest }

/** The relationships the episodic graph stores (spec section 13.2); retrieval reads them undirected. */
export const EPISODIC_RELATIONSHIPS = ['has_facet', 'has_point', 'involves_entity'] as const
export type EpisodicRelationship = (typeof EPISODIC_RELATIONSHIPS)[number]

/** One Episode with everything it owns: its facets and points (`nodes`) and every edge it brings. */
export interface EpisodeGraph {
  episode: EpisodicNode
  /** Facets and FacetPoints; they belong to this Episode and go with it. */
  nodes: EpisodicNode[]
  /** has_facet, has_point and involves_entity edges (to entities of the same write or already stored). */
  edges: EpisodicEdge[]
}

/** One atomic change: first `deleteEpisodeIds` and the earlier versions of `episodes` go, then all is written. */
export interface EpisodicGraphChange {
  deleteEpisodeIds?: readonly string[]
  /** Entities are shared: written (replaced) by id, never owned by an Episode. */
  entities?: readonly EpisodicNode[]
  episodes?: readonly EpisodeGraph[]
}

/** What a change removed, so the caller can remove the matching vectors. */
export interface EpisodicGraphChangeResult {
  /** Episode ids that existed and were deleted (not those merely replaced). */
  deletedEpisodeIds: string[]
  /** Facet and FacetPoint ids that were removed and not written again. */
  removedNodeIds: string[]
  /** Entities that lost their last edge in this change and were not written by it; they are removed. */
  removedEntityIds: string[]
  /** Edge labels (edge_text, else relationship name) no edge uses any more. */
  unusedLabels: string[]
}

/**
 * The graph of Episodes, Facets, FacetPoints and Entities that episodic retrieval projects.
 *
 * - Node ids are unique across types. Labels and namespaces keep it apart from the graphrag knowledge graph.
 * - `apply` is atomic: either the whole change is visible afterwards or none of it. Re-writing an
 *   Episode id replaces its facets, points and edges. Deleting an unknown Episode id is not an error.
 *   An Entity another Episode still links to is never removed.
 * - `describe(ids)` is one round trip: for every given id that exists it returns the node, every edge
 *   incident to it (either direction) and that edge's other end, with every property of spec section
 *   6.1 on the nodes and `description` on the edges. Unknown ids are skipped; edges appear once;
 *   `relationship_type` is set to the stored relationship.
 * - `project(request)` is the scoring projection: spec section 6.3's two phases over that one-hop reach
 *   (phase 1 the relevant ids, phase 2 their neighbours by type priority, best score and id, up to
 *   `max_ids` targets) plus difference 5's stray Episode hits as bare nodes; exactly what
 *   `projectTwoPhases` of adapters/episodic/projection.ts returns over `describe`, in as few round trips
 *   as the backend allows. It carries what the scorer reads, at least: node `id`, `type` and the time
 *   properties (`created_at`, `mentioned_time_*_ms`, `mentioned_time_confidence`); edge ends,
 *   `relationship_name` and `edge_text`, except that an edge whose label (its `edge_text`, else its
 *   relationship) is none of `retrieved_labels` may come without its text and with
 *   `label_withheld: true` (its cost is a miss whatever the text).
 * - An entity link's `description` (difference 7) is stored with the edge; re-writing the Episode
 *   replaces it, as every other edge of the Episode.
 * - `nodeTypes(ids)` returns the type of every given id that exists; unknown ids are absent.
 * - `facetLabelEpisodes(labels)` returns, for each given facet `search_text` that a stored facet has,
 *   the ids of the Episodes owning such a facet, ascending; labels no facet has are absent.
 * - Failures are thrown as the provider errors of `../errors.ts`.
 */
export interface EpisodicGraphStore {
  readonly backend: 'memory' | 'neo4j'
  apply(change: EpisodicGraphChange): Promise<EpisodicGraphChangeResult>
  project(request: ProjectionRequest): Promise<GraphFragment>
  describe(ids: readonly string[]): Promise<GraphFragment>
  nodeTypes(ids: readonly string[]): Promise<Map<string, string>>
  facetLabelEpisodes(labels: readonly string[]): Promise<Map<string, string[]>>
  /** Counts of stored nodes by type. */
  countByType(): Promise<Record<string, number>>
  health(): Promise<BackendHealth>
  close(): Promise<void>
}

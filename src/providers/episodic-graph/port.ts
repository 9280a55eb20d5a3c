import type { EpisodicEdge, EpisodicNode, GraphFragment, ProjectionRequest } from './fragment.js'
import type { BackendHealth } from '../errors.js'

export type { EpisodicEdge, EpisodicNode, GraphFragment, ProjectionRequest }

/** The relationships the episodic graph stores (their texts: docs/episodic.md, "Edge texts"); retrieval reads them undirected. */
export const EPISODIC_RELATIONSHIPS = ['has_facet', 'has_point', 'involves_entity'] as const

/**
 * Every Episode derived from a document has an id that starts so (`d:ep:<document>`, `d:ep:<document>#<k>`) and a
 * `derived_doc` (docs/derivation.md, "Derived Episodes").
 */
export const DERIVED_EPISODE_PREFIX = 'd:ep:'

/** A conversation's Episodes (its record and its sessions', docs/conversations.md) have ids that start so. */
export const CONVERSATION_EPISODE_PREFIX = `${DERIVED_EPISODE_PREFIX}conversation/`

/** One Episode with everything it owns: its facets and points (`nodes`) and every edge it brings. */
export interface EpisodeGraph {
  episode: EpisodicNode
  /** Facets and FacetPoints; they belong to this Episode and go with it. */
  nodes: EpisodicNode[]
  /** has_facet, has_point and involves_entity edges (to entities of the same write or already stored). */
  edges: EpisodicEdge[]
}

/**
 * One atomic change: first `deleteEpisodeIds` and the earlier versions of `episodes` go, then all is written. An Episode
 * id given twice in `episodes` is its last version alone (`lastVersions`).
 */
export interface EpisodicGraphChange {
  deleteEpisodeIds?: readonly string[]
  /** Entities are shared: written (replaced) by id, never owned by an Episode. */
  entities?: readonly EpisodicNode[]
  episodes?: readonly EpisodeGraph[]
}

/**
 * The Episodes a change writes, one per id: an id given more than once is its last version, in the place of its first
 * (where a snapshot lists it). Nothing of an earlier version is written: its nodes, edges and labels are not there.
 */
export function lastVersions(episodes: readonly EpisodeGraph[]): readonly EpisodeGraph[] {
  const byId = new Map(episodes.map((e) => [e.episode.id, e]))
  return byId.size === episodes.length ? episodes : [...byId.values()]
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

/** A time range in epoch milliseconds; an absent bound is unbounded. */
export interface TimeRangeMs {
  start_ms?: number
  end_ms?: number
}

/**
 * The graph of Episodes, Facets, FacetPoints and Entities that episodic retrieval projects.
 *
 * - Namespaces: every call names its namespace (`src/providers/namespace.ts`), the memory space it works
 *   in, as m-flow scopes a search to a memory space: node ids are unique within a
 *   namespace, the same id in two namespaces is two nodes, an edge only ever joins nodes of one namespace,
 *   and a projection or description starts from the namespace's nodes and never leaves it (strict: nothing
 *   of another namespace, and no fallback). A namespace that holds nothing reads as an empty graph, and a
 *   read creates nothing.
 * - Node ids are unique across types. Labels and namespaces keep it apart from the graphrag knowledge graph.
 * - `apply` is atomic: either the whole change is visible afterwards or none of it. Re-writing an
 *   Episode id replaces its facets, points and edges. Deleting an unknown Episode id is not an error.
 *   An Entity another Episode still links to is never removed.
 * - `describe(ids)` is one round trip: for every given id that exists it returns the node, every edge
 *   incident to it (either direction) and that edge's other end, with every projected property
 *   (`EpisodicNode`) on the nodes and `description` on the edges. Unknown ids are skipped; edges appear once;
 *   `relationship_type` is set to the stored relationship.
 * - `project(request)` is the scoring projection: the two phases over that one-hop reach
 *   (phase 1 the relevant ids, phase 2 their neighbours by type priority, best score and id, up to
 *   `max_ids` targets) plus difference 5's stray Episode hits as bare nodes; exactly what
 *   `projectTwoPhases` of ./projection.ts returns over `describe`, in as few round trips
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
 * - `episodesInTimeRange(range)` returns, ascending, the ids of the Episodes whose mentioned time overlaps
 *   the closed range: an Episode from s to e (only one of them given: that instant) overlaps when
 *   s <= end and e >= start; an Episode without a mentioned time never does.
 * - The reads take an optional `signal`: an abort cancels the backend call (a Neo4j transaction) and rejects with
 *   `abortError(signal)`.
 * - Failures are thrown as the provider errors of `../errors.ts`.
 */
export interface EpisodicGraphStore {
  readonly backend: 'memory' | 'neo4j'
  apply(namespace: string, change: EpisodicGraphChange): Promise<EpisodicGraphChangeResult>
  project(namespace: string, request: ProjectionRequest, signal?: AbortSignal): Promise<GraphFragment>
  describe(namespace: string, ids: readonly string[], signal?: AbortSignal): Promise<GraphFragment>
  nodeTypes(namespace: string, ids: readonly string[]): Promise<Map<string, string>>
  facetLabelEpisodes(namespace: string, labels: readonly string[]): Promise<Map<string, string[]>>
  episodesInTimeRange(namespace: string, range: TimeRangeMs, signal?: AbortSignal): Promise<string[]>
  /** Counts of stored nodes by type. */
  countByType(namespace: string): Promise<Record<string, number>>
  /** The namespaces holding at least one node, ascending. */
  namespaces(): Promise<string[]>
  /** Removes every node and edge of the namespace; a namespace that holds nothing is not an error. */
  dropNamespace(namespace: string): Promise<void>
  health(): Promise<BackendHealth>
  close(): Promise<void>
}

/** Whether an Episode's mentioned time overlaps `range` (see `episodesInTimeRange`). */
export function overlapsTimeRange(node: Pick<EpisodicNode, 'mentioned_time_start_ms' | 'mentioned_time_end_ms'>, range: TimeRangeMs): boolean {
  const s = node.mentioned_time_start_ms ?? node.mentioned_time_end_ms
  const e = node.mentioned_time_end_ms ?? node.mentioned_time_start_ms
  if (s === undefined || s === null || e === undefined || e === null) return false
  return (range.end_ms === undefined || s <= range.end_ms) && (range.start_ms === undefined || e >= range.start_ms)
}

/**
 * Graph projection (docs/episodic.md, "The pipeline, step by step", step 6): the nodeset-filtered one-hop primitive and the two phases that
 * give every hit a two-hop reach.
 */
import type { EpisodicEdge, EpisodicNode, GraphFragment, ProjectionRequest } from './fragment.js'

/** An in-memory graph: nodes by id and each node's incident edges (both directions); maps, or what reads as one. */
export interface InMemoryGraph {
  nodes: Pick<ReadonlyMap<string, EpisodicNode>, 'get' | 'has'>
  incident: Pick<ReadonlyMap<string, readonly EpisodicEdge[]>, 'get'>
  /** The nodeset members; `undefined` means every node. */
  members?: ReadonlySet<string>
}

/** Builds an {@link InMemoryGraph} from node and edge lists. */
export function buildInMemoryGraph(
  nodes: readonly EpisodicNode[],
  edges: readonly EpisodicEdge[],
  members?: readonly string[]
): InMemoryGraph {
  const byId = new Map(nodes.map((n) => [n.id, n] as const))
  const incident = new Map<string, EpisodicEdge[]>()
  const push = (id: string, edge: EpisodicEdge): void => {
    const list = incident.get(id)
    if (list) list.push(edge)
    else incident.set(id, [edge])
  }
  for (const given of edges) {
    const edge = given.relationship_type ? given : { ...given, relationship_type: given.relationship_name }
    push(edge.from, edge)
    if (edge.to !== edge.from) push(edge.to, edge)
  }
  return { nodes: byId, incident, ...(members ? { members: new Set(members) } : {}) }
}

/** Edges of this relationship are the nodeset links themselves and never projected. */
const MEMORY_SPACES = 'memory_spaces'

/**
 * The projection primitive (upstream `get_nodeset_id_filtered_graph_data`): every edge incident to a
 * target member, in either direction, whose two ends are members, with its endpoints.
 *
 * Difference 5: the member targets themselves are returned even without a kept edge, so that an
 * isolated Episode can still be scored by its direct path; upstream drops them.
 */
export function projectNodeset(graph: InMemoryGraph, targetIds: readonly string[]): GraphFragment {
  const members = graph.members
  const all = graph.nodes
  const isMember = (id: string): boolean => (members ? members.has(id) : true) && all.has(id)
  const nodes = new Map<string, EpisodicNode>()
  const edges: EpisodicEdge[] = []
  const seenEdges = new Set<EpisodicEdge>()
  for (const id of targetIds) {
    if (!isMember(id)) continue
    if (!nodes.has(id)) nodes.set(id, all.get(id)!)
    const incident = graph.incident.get(id)
    if (!incident) continue
    for (const edge of incident) {
      if (seenEdges.has(edge) || edge.relationship_name === MEMORY_SPACES) continue
      const other = edge.from === id ? edge.to : edge.from
      if (!isMember(other)) continue
      seenEdges.add(edge)
      // Stores that already set relationship_type hand out their own objects, read-only, with no copy.
      edges.push(edge.relationship_type ? edge : { ...edge, relationship_type: edge.relationship_name })
      if (!nodes.has(other)) nodes.set(other, all.get(other)!)
    }
  }
  return { nodes, edges }
}

/** Phase 2's order of neighbour types (lower first); a type not listed sorts after them all, at {@link OTHER_TYPE_PRIORITY}. */
export const TYPE_PRIORITY: Readonly<Record<string, number>> = { Episode: 0, Facet: 1, FacetPoint: 2, Entity: 3 }
export const OTHER_TYPE_PRIORITY = 9

const byId = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

/** Phase 1's targets: hit ids by ascending score, ties by id (upstream: set order), capped. */
export function relevantIds(bestById: ReadonlyMap<string, number>, maxRelevantIds: number): string[] {
  return [...bestById.entries()].sort((a, b) => a[1] - b[1] || byId(a[0], b[0])).slice(0, maxRelevantIds).map(([id]) => id)
}

/**
 * The two phases over a one-hop primitive (one round trip per call): phase 1 projects
 * the relevant ids, phase 2 their neighbours by (type priority, best score, id), up to `max_ids` targets.
 * With no relevant id the result is empty (upstream projects the whole nodeset, where every cost is +∞).
 *
 * Difference 5: `episode_hit_ids` that neither phase reaches, because they lie outside `max_relevant_ids`
 * and next to nothing that was projected, ride along in the phase-2 round trip so that a member among them
 * is still scored by its direct path. Only their nodes are kept: any edge of theirs joins them to nodes
 * outside both phases, which the upstream projection would not return.
 *
 * Upstream keeps fragment 1 when fragment 2 has no edge; fragment 2 holds every edge of fragment 1, so
 * then neither has one, and fragment 2 differs only by the stray Episodes that difference 5 adds.
 */
export async function projectTwoPhases(
  project: (ids: readonly string[]) => Promise<GraphFragment>,
  request: ProjectionRequest
): Promise<GraphFragment> {
  const relevant = request.relevant_ids
  if (relevant.length === 0) return { nodes: new Map(), edges: [] }
  const first = await project(relevant)
  const relevantSet = new Set(relevant)
  const neighbours = [...first.nodes.values()]
    .filter((n) => !relevantSet.has(n.id))
    .map((n) => ({ id: n.id, p: TYPE_PRIORITY[n.type] ?? OTHER_TYPE_PRIORITY, d: request.best_by_id.get(n.id) ?? Infinity }))
    .sort((a, b) => a.p - b.p || a.d - b.d || byId(a.id, b.id))
    .map((n) => n.id)
  const ids2 = [...relevant, ...neighbours].slice(0, request.max_ids)
  // Phase 2 projects relevant + neighbours; the relevant ids' part is exactly phase 1's result, so only
  // the neighbours are fetched and merged in (same fragment, half the work).
  const extra = ids2.slice(relevant.length)
  const targets2 = new Set(ids2)
  const stray = [...new Set(request.episode_hit_ids)].filter((id) => !targets2.has(id) && !first.nodes.has(id))
  if (extra.length === 0 && stray.length === 0) return first
  const fetched = await project([...extra, ...stray])
  const second = mergeFragments(first, stray.length === 0 ? fetched : {
    nodes: fetched.nodes,
    edges: fetched.edges.filter((e) => targets2.has(e.from) || targets2.has(e.to))
  })
  return stray.length > 0 ? keepReachedNodes(second, targets2, stray) : second
}

/** Drops nodes that only a stray Episode's dropped edges brought in: kept are targets, edge ends and the strays. */
function keepReachedNodes(fragment: GraphFragment, targets: ReadonlySet<string>, stray: readonly string[]): GraphFragment {
  const keep = new Set<string>(stray)
  for (const e of fragment.edges) { keep.add(e.from); keep.add(e.to) }
  const nodes = new Map<string, EpisodicNode>()
  for (const [id, n] of fragment.nodes) if (keep.has(id) || targets.has(id)) nodes.set(id, n)
  return { nodes, edges: fragment.edges }
}

/**
 * The union of two fragments. An edge object present in both is kept once; stores that build new
 * objects per call may leave a duplicate, which the relationship index and the scorer absorb (upstream
 * itself returns an edge twice when both its ends are targets).
 */
function mergeFragments(a: GraphFragment, b: GraphFragment): GraphFragment {
  const nodes = new Map(a.nodes)
  for (const [id, n] of b.nodes) if (!nodes.has(id)) nodes.set(id, n)
  const seen = new Set(a.edges)
  const edges = [...a.edges]
  for (const e of b.edges) if (!seen.has(e)) edges.push(e)
  return { nodes, edges }
}

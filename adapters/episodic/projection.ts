/**
 * Graph projection (spec section 6): the nodeset-filtered one-hop primitive and the two phases that
 * give every hit a two-hop reach.
 */
import type { EpisodicConfig } from './config.js'
import type { EpisodicEdge, EpisodicNode, GraphFragment } from './types.js'

/** An in-memory graph: nodes by id and each node's incident edges (both directions). */
export interface InMemoryGraph {
  nodes: ReadonlyMap<string, EpisodicNode>
  incident: ReadonlyMap<string, readonly EpisodicEdge[]>
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
export const MEMORY_SPACES = 'memory_spaces'

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

const TYPE_PRIORITY: Readonly<Record<string, number>> = { Episode: 0, Facet: 1, FacetPoint: 2, Entity: 3 }

export interface ProjectionResult {
  fragment: GraphFragment
  relevant_ids: string[]
  phase1: { ids: number; nodes: number; edges: number }
  phase2: { ids: number; nodes: number; edges: number }
}

/**
 * The two phases (spec section 6.3). `project` is one graph round trip for a list of target ids.
 * Ties in the relevant-id order are broken by id (upstream leaves them to set iteration).
 *
 * Difference 5: `episodeHitIds` (the Episode_summary hits) that neither phase reaches, because they lie
 * outside `max_relevant_ids` and next to nothing that was projected, ride along in the phase-2 round trip
 * so that a member among them is still scored by its direct path. Only their nodes are kept: any edge of
 * theirs joins them to nodes outside both phases, which the upstream projection would not return.
 */
export async function projectTwoPhases(
  project: (ids: readonly string[]) => Promise<GraphFragment>,
  bestById: ReadonlyMap<string, number>,
  cfg: Pick<EpisodicConfig, 'max_relevant_ids'>,
  episodeHitIds: readonly string[] = []
): Promise<ProjectionResult> {
  const empty = { ids: 0, nodes: 0, edges: 0 }
  const relevant = [...bestById.entries()]
    .sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .slice(0, cfg.max_relevant_ids)
    .map(([id]) => id)
  if (relevant.length === 0) {
    // Upstream projects the whole nodeset here; every cost would be infinite, so the result is empty.
    return { fragment: { nodes: new Map(), edges: [] }, relevant_ids: [], phase1: empty, phase2: empty }
  }
  const first = await project(relevant)
  const relevantSet = new Set(relevant)
  const neighbours = [...first.nodes.values()]
    .filter((n) => !relevantSet.has(n.id))
    .map((n) => ({ id: n.id, p: TYPE_PRIORITY[n.type] ?? 9, d: bestById.get(n.id) ?? Infinity }))
    .sort((a, b) => a.p - b.p || a.d - b.d || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map((n) => n.id)
  const ids2 = [...relevant, ...neighbours].slice(0, 2 * cfg.max_relevant_ids)
  // Phase 2 projects relevant + neighbours; the relevant ids' part is exactly phase 1's result, so only
  // the neighbours are fetched and merged in (same fragment, half the work).
  const extra = ids2.slice(relevant.length)
  const targets2 = new Set(ids2)
  const stray = [...new Set(episodeHitIds)].filter((id) => !targets2.has(id) && !first.nodes.has(id))
  let second = first
  if (extra.length > 0 || stray.length > 0) {
    const fetched = await project([...extra, ...stray])
    second = mergeFragments(first, stray.length === 0 ? fetched : {
      nodes: fetched.nodes,
      edges: fetched.edges.filter((e) => targets2.has(e.from) || targets2.has(e.to))
    })
    if (stray.length > 0) second = keepReachedNodes(second, targets2, stray)
  }
  // Upstream keeps fragment 1 when fragment 2 has no edge; fragment 2 holds every edge of fragment 1, so
  // then neither has one, and fragment 2 differs only by the stray Episodes that difference 5 adds.
  return {
    fragment: second,
    relevant_ids: relevant,
    phase1: { ids: relevant.length, nodes: first.nodes.size, edges: first.edges.length },
    phase2: { ids: ids2.length, nodes: second.nodes.size, edges: second.edges.length }
  }
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
 * itself returns an edge twice when both its ends are targets, spec section 6.2).
 */
export function mergeFragments(a: GraphFragment, b: GraphFragment): GraphFragment {
  const nodes = new Map(a.nodes)
  for (const [id, n] of b.nodes) if (!nodes.has(id)) nodes.set(id, n)
  const seen = new Set(a.edges)
  const edges = [...a.edges]
  for (const e of b.edges) if (!seen.has(e)) edges.push(e)
  return { nodes, edges }
}

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
 */
export async function projectTwoPhases(
  project: (ids: readonly string[]) => Promise<GraphFragment>,
  bestById: ReadonlyMap<string, number>,
  cfg: Pick<EpisodicConfig, 'max_relevant_ids'>
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
  const second = extra.length > 0 ? mergeFragments(first, await project(extra)) : first
  return {
    fragment: second.edges.length > 0 ? second : first,
    relevant_ids: relevant,
    phase1: { ids: relevant.length, nodes: first.nodes.size, edges: first.edges.length },
    phase2: { ids: ids2.length, nodes: second.nodes.size, edges: second.edges.length }
  }
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

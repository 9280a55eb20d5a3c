/** The relationship index over a projected fragment (m-flow `build_relationship_index`). */
import type { EpisodicEdge, EpisodicNode, GraphFragment } from './types.js'

/** Neighbour id -> the edge to it; the last edge written for a pair wins, as upstream. */
export type EdgesByNeighbour = Map<string, EpisodicEdge>

export interface RelationshipIndex {
  nodes: ReadonlyMap<string, EpisodicNode>
  episode_ids: Set<string>
  facet_ids: Set<string>
  point_ids: Set<string>
  entity_ids: Set<string>
  facets_by_episode: Map<string, EdgesByNeighbour>
  points_by_facet: Map<string, EdgesByNeighbour>
  entities_by_episode: Map<string, EdgesByNeighbour>
  entities_by_facet: Map<string, EdgesByNeighbour>
}

/** The edge between `a` and its neighbour `b` in one of the index's maps, if any. */
export function edgeOf(map: ReadonlyMap<string, EdgesByNeighbour>, a: string, b: string): EpisodicEdge | undefined {
  return map.get(a)?.get(b)
}

/** A map's entries ordered by neighbour id, so that equal costs resolve the same way on every store. */
export function byNeighbourId(map: EdgesByNeighbour | undefined): Array<[string, EpisodicEdge]> {
  if (!map) return []
  const entries = [...map]
  if (entries.length > 1) entries.sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0))
  return entries
}

function link(map: Map<string, EdgesByNeighbour>, key: string, neighbour: string, edge: EpisodicEdge): void {
  let inner = map.get(key)
  if (!inner) {
    inner = new Map()
    map.set(key, inner)
  }
  inner.set(neighbour, edge)
}

/**
 * Records `has_facet` (Episode–Facet), `has_point` (Facet–FacetPoint) and `involves_entity`
 * (Episode–Entity, Facet–Entity) edges in either orientation; anything else is ignored.
 */
export function buildRelationshipIndex(fragment: GraphFragment): RelationshipIndex {
  const index: RelationshipIndex = {
    nodes: fragment.nodes,
    episode_ids: new Set(), facet_ids: new Set(), point_ids: new Set(), entity_ids: new Set(),
    facets_by_episode: new Map(), points_by_facet: new Map(), entities_by_episode: new Map(), entities_by_facet: new Map()
  }
  for (const edge of fragment.edges) {
    const rel = edge.relationship_name || edge.relationship_type || ''
    const a = fragment.nodes.get(edge.from)
    const b = fragment.nodes.get(edge.to)
    if (!a || !b) continue
    const ta = a.type
    const tb = b.type
    if (rel === 'has_facet') {
      const [ep, fa] = ta === 'Episode' && tb === 'Facet' ? [a.id, b.id] : ta === 'Facet' && tb === 'Episode' ? [b.id, a.id] : [null, null]
      if (ep === null || fa === null) continue
      index.episode_ids.add(ep); index.facet_ids.add(fa)
      link(index.facets_by_episode, ep, fa, edge)
    } else if (rel === 'has_point') {
      const [fa, pt] = ta === 'Facet' && tb === 'FacetPoint' ? [a.id, b.id] : ta === 'FacetPoint' && tb === 'Facet' ? [b.id, a.id] : [null, null]
      if (fa === null || pt === null) continue
      index.facet_ids.add(fa); index.point_ids.add(pt)
      link(index.points_by_facet, fa, pt, edge)
    } else if (rel === 'involves_entity') {
      const entityIsB = tb === 'Entity'
      const owner = entityIsB ? a : ta === 'Entity' ? b : null
      const entity = entityIsB ? b : a
      if (owner === null) continue
      if (owner.type === 'Episode') {
        index.episode_ids.add(owner.id); index.entity_ids.add(entity.id)
        link(index.entities_by_episode, owner.id, entity.id, edge)
      } else if (owner.type === 'Facet') {
        index.facet_ids.add(owner.id); index.entity_ids.add(entity.id)
        link(index.entities_by_facet, owner.id, entity.id, edge)
      }
    }
  }
  return index
}

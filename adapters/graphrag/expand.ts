/**
 * One-hop expansion: each entity the question names, then the entities its relations
 * reach. Direct matches weigh 1.0 and neighbours 0.6. Relations to another entity named in the question come
 * first, then by weight; the order is total, so equal scores always come out the same way.
 */
import type { KgEntity, KgNeighbourhood, KgRelation } from '../../src/providers/knowledge-graph/port.js'
import type { NameMatch } from './match.js'

export const DIRECT_SCORE = 1.0
export const NEIGHBOUR_SCORE = 0.6

export type MatchedBy = 'name' | 'alias' | 'keyword'

/** One future recall item, before rendering. */
export interface GraphCandidate {
  entity: KgEntity
  score: number
  matchedBy: MatchedBy
  hop: 0 | 1
  /** The relations shown for the entity, in order, at most `maxRelations`. */
  relations: KgRelation[]
}

const compareIds = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

/**
 * Orders an entity's relations: those whose other end is another named entity first, then weight descending,
 * then relation id.
 */
export function orderRelations(entityId: string, relations: readonly KgRelation[], named: ReadonlySet<string>): KgRelation[] {
  const toNamed = (r: KgRelation) => {
    const other = r.source === entityId ? r.target : r.source
    return other !== entityId && named.has(other) ? 0 : 1
  }
  return [...relations].sort((a, b) => toNamed(a) - toNamed(b) || b.weight - a.weight || compareIds(a.id, b.id))
}

/**
 * The candidates of a name match: the matched entities in the order of the question (`matches` order), then
 * the neighbours, those linked to more named entities first, then by their strongest link's weight, then id.
 */
export function expandMatches(matches: readonly NameMatch[], hood: KgNeighbourhood, maxRelations: number): GraphCandidate[] {
  const entities = new Map(hood.entities.map((e) => [e.id, e]))
  const named = new Set(matches.filter((m) => entities.has(m.entityId)).map((m) => m.entityId))
  const touching = new Map<string, KgRelation[]>()
  for (const relation of hood.relations) {
    for (const end of new Set([relation.source, relation.target])) {
      let list = touching.get(end)
      if (!list) touching.set(end, (list = []))
      list.push(relation)
    }
  }

  const direct: GraphCandidate[] = []
  for (const match of matches) {
    const entity = entities.get(match.entityId)
    if (!entity) continue
    direct.push({
      entity,
      score: DIRECT_SCORE,
      matchedBy: match.matchedBy,
      hop: 0,
      relations: orderRelations(entity.id, touching.get(entity.id) ?? [], named).slice(0, maxRelations)
    })
  }

  const neighbours: Array<GraphCandidate & { links: number; strongest: number }> = []
  for (const entity of hood.entities) {
    if (named.has(entity.id)) continue
    // Only the relations that join it to a named entity reached it.
    const links = (touching.get(entity.id) ?? []).filter((r) => named.has(r.source) || named.has(r.target))
    if (links.length === 0) continue
    const linkedNamed = new Set(links.map((r) => (r.source === entity.id ? r.target : r.source)))
    neighbours.push({
      entity,
      score: NEIGHBOUR_SCORE,
      matchedBy: matchedByOfNeighbour(links, entity.id, matches),
      hop: 1,
      relations: orderRelations(entity.id, links, named).slice(0, maxRelations),
      links: linkedNamed.size,
      strongest: Math.max(...links.map((r) => r.weight))
    })
  }
  neighbours.sort((a, b) => b.links - a.links || b.strongest - a.strongest || compareIds(a.entity.id, b.entity.id))
  return [...direct, ...neighbours.map(({ links: _links, strongest: _strongest, ...candidate }) => candidate)]
}

/** A neighbour was reached through a named entity: it inherits how that entity matched (`name` if any did). */
function matchedByOfNeighbour(links: readonly KgRelation[], id: string, matches: readonly NameMatch[]): 'name' | 'alias' {
  const via = new Set(links.map((r) => (r.source === id ? r.target : r.source)))
  return matches.some((m) => via.has(m.entityId) && m.matchedBy === 'name') ? 'name' : 'alias'
}

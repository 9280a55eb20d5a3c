/**
 * One-hop expansion: each entity the question names, then the entities its relations
 * reach. Direct matches weigh 1.0, names the question holds only in part between 0.6 and 1.0 by the share it holds
 * (`partialScore`), and neighbours 0.6. Relations to another entity named in the question come
 * first, then by weight; the order is total, so equal scores always come out the same way. A named entity contributes
 * at most `MAX_NEIGHBOURS` neighbours (those linked to more named entities, then by the heaviest relation): a hub
 * the corpus names everywhere reaches a thousand entities, which would each be scored and only a few shown.
 */
import type { KgEntity, KgNeighbourhood, KgRelation } from '../../src/providers/knowledge-graph/port.js'
import type { NameMatch } from './match.js'

/** Neighbours one named entity contributes at most, when the caller does not say. */
export const MAX_NEIGHBOURS = 50

const DIRECT_SCORE = 1.0
const NEIGHBOUR_SCORE = 0.6

type MatchedBy = 'name' | 'alias' | 'partial' | 'meaning' | 'keyword' | 'evidence'

/**
 * A partial match's score: from the neighbour score up to the direct one, by the share of its name the question holds;
 * a match by meaning's the same way by its similarity.
 */
function partialScore(share: number): number {
  return Math.round((NEIGHBOUR_SCORE + (DIRECT_SCORE - NEIGHBOUR_SCORE) * share) * 10_000) / 10_000
}

/** One future recall item, before rendering. */
export interface GraphCandidate {
  entity: KgEntity
  score: number
  matchedBy: MatchedBy
  hop: 0 | 1
  /**
   * The relations that may be shown for the entity, in no order: ordered and cut (`withRelations`) only for the
   * candidates that become items, since a question naming a hub reaches a thousand neighbours.
   */
  links: readonly KgRelation[]
  /** A partial match's share of its name the question holds (`match.ts`), a match by meaning's similarity; absent otherwise. */
  share?: number
  /** A match by meaning: the name or alias the question is near, and how near. */
  meaning?: { text: string; similarity: number }
}

/** A candidate that becomes an item, with the relations it shows. */
export interface ShownCandidate extends GraphCandidate {
  /** The relations shown for the entity, in order (`orderRelations`), at most `maxRelations`. */
  relations: KgRelation[]
}

/**
 * The candidates with the relations each shows: `links` ordered, relations to the entities the question names
 * (`named`) first, and cut at `maxRelations`.
 */
export function withRelations(candidates: readonly GraphCandidate[], named: ReadonlySet<string>, maxRelations: number): ShownCandidate[] {
  return candidates.map((c) => ({ ...c, relations: orderRelations(c.entity.id, c.links, named, maxRelations).slice(0, maxRelations) }))
}

const compareIds = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

/**
 * Orders an entity's relations: those whose other end is another named entity first, then weight descending,
 * then relation id.
 */
export function orderRelations(entityId: string, relations: readonly KgRelation[], named: ReadonlySet<string>, limit = Infinity): KgRelation[] {
  const toNamed = (r: KgRelation) => {
    const other = r.source === entityId ? r.target : r.source
    return other !== entityId && named.has(other) ? 0 : 1
  }
  const order = (a: KgRelation, b: KgRelation) => toNamed(a) - toNamed(b) || b.weight - a.weight || compareIds(a.id, b.id)
  if (relations.length <= limit) return [...relations].sort(order)
  if (limit <= 0) return []
  // a hub touches thousands of relations and ten are shown: keep the first `limit` without sorting them all (ids
  // are unique, so the order is total and the result is the sort's)
  const kept: KgRelation[] = []
  for (const r of relations) {
    if (kept.length === limit && order(r, kept[limit - 1]!) >= 0) continue
    let at = kept.length
    while (at > 0 && order(r, kept[at - 1]!) < 0) at--
    kept.splice(at, 0, r)
    if (kept.length > limit) kept.pop()
  }
  return kept
}

/**
 * The candidates of a name match: the matched entities in the order of the question (`matches` order), then
 * the neighbours, those linked to more named entities first, then by their strongest link's weight, then id; of each
 * named entity's neighbours only the first `maxNeighbours` in that order (`capNeighbours`).
 */
export function expandMatches(matches: readonly NameMatch[], hood: KgNeighbourhood, maxNeighbours = MAX_NEIGHBOURS): GraphCandidate[] {
  const entities = new Map(hood.entities.map((e) => [e.id, e]))
  const named = new Set(matches.filter((m) => entities.has(m.entityId)).map((m) => m.entityId))
  const touching = new Map<string, KgRelation[]>()
  const touch = (end: string, relation: KgRelation) => {
    let list = touching.get(end)
    if (!list) touching.set(end, (list = []))
    list.push(relation)
  }
  for (const relation of hood.relations) {
    touch(relation.source, relation)
    if (relation.target !== relation.source) touch(relation.target, relation)
  }

  const direct: GraphCandidate[] = []
  for (const match of matches) {
    const entity = entities.get(match.entityId)
    if (!entity) continue
    direct.push({
      entity,
      score: inPart(match) ? partialScore(match.share) : DIRECT_SCORE,
      matchedBy: match.matchedBy,
      hop: 0,
      ...(inPart(match) ? { share: match.share } : {}),
      ...(match.matchedBy === 'meaning' ? { meaning: { text: match.key, similarity: match.share } } : {}),
      links: touching.get(entity.id) ?? []
    })
  }

  const neighbours: GraphCandidate[] = []
  // the sort keys: how many named entities link to it, its strongest link's weight
  const keys = new Map<GraphCandidate, { linked: number; strongest: number }>()
  for (const entity of hood.entities) {
    if (named.has(entity.id)) continue
    // Only the relations that join it to a named entity reached it.
    const links = (touching.get(entity.id) ?? []).filter((r) => named.has(r.source) || named.has(r.target))
    if (links.length === 0) continue
    const linkedNamed = new Set<string>()
    let strongest = -Infinity
    for (const r of links) {
      linkedNamed.add(r.source === entity.id ? r.target : r.source)
      if (r.weight > strongest) strongest = r.weight
    }
    const candidate: GraphCandidate = { entity, score: NEIGHBOUR_SCORE, matchedBy: matchedByOfNeighbour(linkedNamed, matches), hop: 1, links }
    neighbours.push(candidate)
    keys.set(candidate, { linked: linkedNamed.size, strongest })
  }
  const byKeys = (a: GraphCandidate, b: GraphCandidate) => {
    const ka = keys.get(a)!
    const kb = keys.get(b)!
    return kb.linked - ka.linked || kb.strongest - ka.strongest || compareIds(a.entity.id, b.entity.id)
  }
  neighbours.sort(byKeys)
  return [...direct, ...capNeighbours(neighbours, named, maxNeighbours)]
}

/**
 * The neighbours (in their order) that are among the first `limit` of at least one named entity they link to, each
 * named entity's taken in that same order (linked to more named entities, then the heaviest relation, then id).
 */
function capNeighbours(ordered: readonly GraphCandidate[], named: ReadonlySet<string>, limit: number): GraphCandidate[] {
  const taken = new Map<string, number>()
  return ordered.filter((c) => {
    let kept = false
    for (const end of new Set(c.links.map((r) => (r.source === c.entity.id ? r.target : r.source)))) {
      if (!named.has(end)) continue
      const n = taken.get(end) ?? 0
      if (n < limit) {
        kept = true
        taken.set(end, n + 1)
      }
    }
    return kept
  })
}

/** A neighbour was reached through a named entity: it inherits how that entity matched (`name` if any did, then `alias`). */
function matchedByOfNeighbour(via: ReadonlySet<string>, matches: readonly NameMatch[]): NameMatch['matchedBy'] {
  const how = new Set(matches.filter((m) => via.has(m.entityId)).map((m) => m.matchedBy))
  return how.has('name') ? 'name' : how.has('alias') ? 'alias' : how.has('partial') ? 'partial' : 'meaning'
}

const inPart = (match: NameMatch) => match.matchedBy === 'partial' || match.matchedBy === 'meaning'

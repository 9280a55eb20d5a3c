/**
 * The neighbours a store keeps under `KgNeighbourhoodOptions.maxNeighbours`, for a store that holds the relations in
 * memory (the embedded one; Neo4j cuts in its query by the same rule).
 */
import type { KgRelation } from './port.js'

const compareIds = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

/**
 * The ids of the neighbours kept: per requested entity, its neighbours ordered by the number of requested entities
 * they are joined to (descending), then their heaviest relation to a requested entity (descending), then id, and the
 * first `max` of them. `touching` holds every relation with an end among `requested` (those of existing entities).
 */
export function keptNeighbours(requested: ReadonlySet<string>, touching: Iterable<KgRelation>, max: number): Set<string> {
  const keys = new Map<string, { linked: Set<string>; strongest: number }>()
  const byRequested = new Map<string, Set<string>>()
  for (const r of touching) {
    for (const [end, other] of [[r.source, r.target], [r.target, r.source]] as const) {
      if (!requested.has(end) || requested.has(other)) continue
      let key = keys.get(other)
      if (!key) keys.set(other, (key = { linked: new Set(), strongest: -Infinity }))
      key.linked.add(end)
      if (r.weight > key.strongest) key.strongest = r.weight
      let mine = byRequested.get(end)
      if (!mine) byRequested.set(end, (mine = new Set()))
      mine.add(other)
    }
  }
  const order = (a: string, b: string) => {
    const ka = keys.get(a)!
    const kb = keys.get(b)!
    return kb.linked.size - ka.linked.size || kb.strongest - ka.strongest || compareIds(a, b)
  }
  const kept = new Set<string>()
  for (const mine of byRequested.values()) {
    for (const id of [...mine].sort(order).slice(0, Math.max(0, max))) kept.add(id)
  }
  return kept
}

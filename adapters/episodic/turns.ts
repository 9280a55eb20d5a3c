/**
 * A conversation session's item cites its turns (docs/conversations.md): the turn of the winning FacetPoint first, then
 * the other turns whose FacetPoints the question's vector found, closest first; when it found none of them, the winning
 * Facet's topic segment in the order its turns were said; at most `max`. An Episode that is not a session's has none.
 */
import { storedTurnsOf, type StoredTurn } from '../../src/kernel/conversation-turns.js'
import type { ScoredTurns } from './turn-evidence.js'

export interface CitedTurn {
  id: string
  speaker: string
  time: string
  text: string
}

/** Turns cited per item when the deployment does not say. */
const MAX_ITEM_TURNS = 10

export function turnsOf(
  node: { evidence?: string | null }, path: { best_point_id?: string | null; best_facet_id?: string | null },
  similarity: ReadonlyMap<string, number>, max = MAX_ITEM_TURNS
): CitedTurn[] | undefined {
  const turns = storedTurnsOf(node)
  if (turns.length === 0) return undefined
  const hit = turns.filter((t) => similarity.has(t.point)).sort((a, b) => similarity.get(b.point)! - similarity.get(a.point)!)
  const best = turns.filter((t) => t.point === path.best_point_id)
  // the winning segment's turns stand in only when the question's vector found none of the session's turns
  const ordered = best.length + hit.length > 0 ? [...best, ...hit]
    : turns.filter((t) => t.facet === (path.best_facet_id ?? turns[0]!.facet))
  return cite(ordered, max)
}

/**
 * A session ranked by its turns' evidence (turn-evidence.ts) cites its scored turns best first: the best one, then those
 * scoring at least the question's threshold, at most `max`.
 */
export function citedTurns(node: { evidence?: string | null }, scored: ScoredTurns, max = MAX_ITEM_TURNS): CitedTurn[] | undefined {
  const turns = storedTurnsOf(node)
  if (turns.length === 0) return undefined
  const at = (t: StoredTurn) => scored.score.get(t.point) ?? -Infinity
  const ranked = turns.filter((t) => scored.score.has(t.point)).sort((a, b) => at(b) - at(a))
  return cite(ranked.filter((t, i) => i === 0 || at(t) >= scored.threshold), max)
}

function cite(ordered: readonly StoredTurn[], max: number): CitedTurn[] {
  const seen = new Set<string>()
  const cited: CitedTurn[] = []
  for (const t of ordered) {
    if (seen.has(t.turn_id) || cited.length >= max) continue
    seen.add(t.turn_id)
    cited.push({ id: t.turn_id, speaker: t.speaker, time: t.time, text: t.text })
  }
  return cited
}

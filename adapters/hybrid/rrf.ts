/**
 * Reciprocal Rank Fusion (hybrid's `fusion: "rrf"`): score(d) = Σ_leg w_leg / (k + rank_leg(d)), ranks from 1,
 * each leg contributing its first `window` candidates; a candidate missing from a leg gets nothing from it.
 * Equal fused scores: the better best single-leg rank first, then the vector leg's order, then id.
 */

export interface RankedList {
  leg: string
  /** Candidate ids, best first. */
  ids: readonly string[]
}

export interface FusedCandidate {
  id: string
  score: number
  /** Rank from 1 in each leg that has the candidate within the window. */
  ranks: Record<string, number>
  contributions: Record<string, number>
}

export interface RrfOptions {
  k: number
  window: number
  weights?: Record<string, number>
  /** The leg whose order breaks ties after the best single-leg rank. */
  tieBreakLeg?: string
}

export function fuseByRrf(lists: readonly RankedList[], options: RrfOptions): FusedCandidate[] {
  const byId = new Map<string, FusedCandidate>()
  for (const { leg, ids } of lists) {
    const weight = options.weights?.[leg] ?? 1
    ids.slice(0, options.window).forEach((id, i) => {
      const rank = i + 1
      let c = byId.get(id)
      if (!c) {
        c = { id, score: 0, ranks: {}, contributions: {} }
        byId.set(id, c)
      }
      if (c.ranks[leg] !== undefined) return // a leg lists an id once; keep its best rank
      const contribution = weight / (options.k + rank)
      c.ranks[leg] = rank
      c.contributions[leg] = contribution
      c.score += contribution
    })
  }
  const tieLeg = options.tieBreakLeg ?? 'vector'
  const bestRank = (c: FusedCandidate) => Math.min(...Object.values(c.ranks))
  return [...byId.values()].sort((a, b) =>
    b.score - a.score ||
    bestRank(a) - bestRank(b) ||
    (a.ranks[tieLeg] ?? Infinity) - (b.ranks[tieLeg] ?? Infinity) ||
    (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
  )
}

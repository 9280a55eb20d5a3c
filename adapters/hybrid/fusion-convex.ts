/**
 * Convex combination of normalised leg scores (Bruch, Gai and Ingber, arXiv:2210.11934):
 *
 *   score(d) = alpha · N_lexical(d) + (1 − alpha) · N_vector(d)
 *
 * where N_leg maps the leg's native scores for this one query onto a common scale and a candidate the leg
 * did not return within `window` gets the leg's floor (0 for tmm and minmax). Normalisations, all per query:
 *
 * - `tmm` (theoretical min-max, the paper's main choice): (s − m) / (max − m), m the leg's theoretical minimum
 *   (0 for BM25, −1 for cosine similarity), max the best score the leg returned for this query. Unlike
 *   min-max it does not depend on the lowest score inside the window, so widening `window` does not move
 *   the scores of the top candidates.
 * - `minmax` (the service default, measured better here: README "Quality"): (s − min) / (max − min) over the
 *   leg's returned scores.
 * - `zscore`: (s − mean) / std over the returned scores (unbounded); a candidate the leg did not return gets
 *   the leg's lowest returned z, not 0 (0 is the leg's average).
 *
 * Equal fused scores: the better best single-leg rank first, then the vector leg's order, then id (as RRF).
 */

export const NORMALISATIONS = ['tmm', 'minmax', 'zscore'] as const
export type Normalisation = (typeof NORMALISATIONS)[number]

export interface ScoredList {
  leg: string
  /** Candidates best first, with the leg's native score (higher is better). */
  hits: readonly { id: string; score: number }[]
  /** The lowest score the leg's scoring function can give (tmm): 0 for BM25, −1 for cosine. */
  theoreticalMin: number
}

export interface ConvexOptions {
  /** Weight of the lexical leg, in [0, 1]; the vector leg gets 1 − alpha. */
  alpha: number
  window: number
  normalisation: Normalisation
  /** The leg whose order breaks ties after the best single-leg rank. */
  tieBreakLeg?: string
  /** Each leg's weight where it is not alpha's (`convexWeight`): with a third leg, the fusion gives every leg its own. */
  legWeights?: Readonly<Record<string, number>>
}

export interface ConvexCandidate {
  id: string
  score: number
  /** Rank from 1 in each leg that has the candidate within the window. */
  ranks: Record<string, number>
  /** The leg's normalised score of the candidate (in [0, 1] except for zscore). */
  normalised: Record<string, number>
  /** What each leg added to `score`: its weight times its normalised score. */
  contributions: Record<string, number>
}

/** The weight of a leg under alpha: `lexical` gets alpha, every other leg (the vector leg) 1 − alpha. */
const convexWeight = (leg: string, alpha: number): number => (leg === 'lexical' ? alpha : 1 - alpha)

/** Each score of `scores` (best first) normalised into [0, 1] by `normalisation`. */
export function normaliseScores(scores: readonly number[], normalisation: Normalisation, theoreticalMin: number): number[] {
  if (scores.length === 0) return []
  const max = Math.max(...scores)
  if (normalisation === 'tmm') {
    const span = max - theoreticalMin
    return scores.map((s) => (span > 0 ? clamp01((s - theoreticalMin) / span) : 1))
  }
  if (normalisation === 'minmax') {
    const min = Math.min(...scores)
    const span = max - min
    return scores.map((s) => (span > 0 ? (s - min) / span : 1))
  }
  const mean = scores.reduce((a, b) => a + b, 0) / scores.length
  const std = Math.sqrt(scores.reduce((a, s) => a + (s - mean) ** 2, 0) / scores.length)
  if (std === 0) return scores.map(() => 0)
  return scores.map((s) => (s - mean) / std)
}

export function fuseByConvex(lists: readonly ScoredList[], options: ConvexOptions): ConvexCandidate[] {
  const byId = new Map<string, ConvexCandidate>()
  const floors: { leg: string; weight: number; floor: number }[] = []
  for (const { leg, hits, theoreticalMin } of lists) {
    const weight = options.legWeights?.[leg] ?? convexWeight(leg, options.alpha)
    const kept = firstOfEach(hits.slice(0, options.window))
    const normalised = normaliseScores(kept.map((h) => h.score), options.normalisation, theoreticalMin)
    if (options.normalisation === 'zscore' && normalised.length > 0) floors.push({ leg, weight, floor: Math.min(...normalised) })
    kept.forEach((hit, i) => {
      let c = byId.get(hit.id)
      if (!c) {
        c = { id: hit.id, score: 0, ranks: {}, normalised: {}, contributions: {} }
        byId.set(hit.id, c)
      }
      const n = normalised[i]!
      c.ranks[leg] = i + 1
      c.normalised[leg] = n
      c.contributions[leg] = weight * n
      c.score += weight * n
    })
  }
  // zscore: a candidate a leg did not return scores that leg's floor (tmm and minmax: 0, nothing to add)
  for (const { leg, weight, floor } of floors) {
    for (const c of byId.values()) if (c.ranks[leg] === undefined) c.score += weight * floor
  }
  const tieLeg = options.tieBreakLeg ?? 'vector'
  const bestRank = (c: ConvexCandidate) => Math.min(...Object.values(c.ranks))
  return [...byId.values()].sort((a, b) =>
    b.score - a.score ||
    bestRank(a) - bestRank(b) ||
    (a.ranks[tieLeg] ?? Infinity) - (b.ranks[tieLeg] ?? Infinity) ||
    (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
  )
}

/** A leg lists an id once; keep its best (first) position. */
function firstOfEach<T extends { id: string }>(hits: readonly T[]): T[] {
  const seen = new Set<string>()
  return hits.filter((h) => (seen.has(h.id) ? false : (seen.add(h.id), true)))
}

const clamp01 = (x: number) => Math.min(1, Math.max(0, x))

import type { MatchStrength } from '../types.js'

/**
 * How far the first Episode can be trusted. Bundle costs are built on scores min-max normalised per
 * query (spec section 4.2), so the best hit of every query costs about the same whatever it is; the
 * raw cosine of the winning path's support node says how close the evidence really is (bge-small-zh-v1.5:
 * paraphrases score about 0.7-0.85, unrelated Chinese text 0.3-0.5).
 * `strong` >= 0.65, `medium` >= 0.5, `weak` below, `none` when no Episode is returned.
 */
export function episodicMatchStrength(supportSimilarity: number | null | undefined): MatchStrength {
  if (supportSimilarity === undefined) return 'none'
  if (supportSimilarity === null) return 'weak'
  if (supportSimilarity >= 0.65) return 'strong'
  if (supportSimilarity >= 0.5) return 'medium'
  return 'weak'
}

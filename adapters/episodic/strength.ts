import type { MatchStrength, TopTie } from '../types.js'
import type { EpisodeBundle } from './types.js'

/**
 * How far the first Episode can be trusted. Bundle costs are built on scores min-max normalised per
 * query, so the best hit of every query costs about the same whatever it is; the
 * raw cosine of the winning path's support node says how close the evidence really is (bge-small-zh-v1.5:
 * paraphrases score about 0.7-0.85, unrelated Chinese text 0.3-0.5).
 * `strong` >= 0.65, `medium` >= 0.5, `weak` below, `none` when no Episode is returned. When the first
 * two Episodes tie, their order is the id order, so the first is at most `medium`.
 */
export function episodicMatchStrength(supportSimilarity: number | null | undefined, tied = false): MatchStrength {
  if (supportSimilarity === undefined) return 'none'
  if (supportSimilarity === null) return 'weak'
  if (supportSimilarity >= 0.65) return tied ? 'medium' : 'strong'
  if (supportSimilarity >= 0.5) return 'medium'
  return 'weak'
}

/**
 * The Episodes tied with the first when the first two bundles have the same cost, else undefined. Equal
 * means equal, as in the top-k order (difference 1): that order is what the tie makes meaningless.
 */
export function topTie(bundles: readonly EpisodeBundle[]): TopTie | undefined {
  const [first, second] = bundles
  if (!first || !second || second.score !== first.score) return undefined
  const ids = bundles.filter((b) => b.score === first.score).map((b) => b.episode_id)
  return { ids, value: first.score, ordered_by: 'id' }
}

import type { MatchStrength } from '../types.js'

/** Below this cosine, a chunk that shares no token with the question is not evidence (bge-small-zh). */
const VECTOR_ONLY_FLOOR = 0.45

/**
 * How far the top of a hybrid bundle can be trusted, from agreement of the legs:
 * `strong`: the first item is in the top 3 of both legs; `medium`: it is in both legs;
 * `weak`: only one leg found it; `none`: no items, or no indexed token of the question occurs in the corpus
 * and the best vector similarity is below VECTOR_ONLY_FLOOR.
 */
export function hybridMatchStrength(
  top: { ranks: Partial<Record<'vector' | 'lexical', number>>; vectorScore?: number } | undefined,
  lexicalRanWithoutHits: boolean
): MatchStrength {
  if (!top) return 'none'
  const { vector, lexical } = top.ranks
  if (vector !== undefined && lexical !== undefined) return vector <= 3 && lexical <= 3 ? 'strong' : 'medium'
  if (lexicalRanWithoutHits && (top.vectorScore ?? 0) < VECTOR_ONLY_FLOOR) return 'none'
  return 'weak'
}

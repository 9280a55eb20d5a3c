/**
 * The keyword fallback, used when the question names no entity: entities whose name or
 * description shares lexical tokens with the question, scored below every name match.
 */
import type { KgKeywordHit, KgNeighbourhood } from '../../src/providers/knowledge-graph/port.js'
import type { GraphCandidate } from './expand.js'

/** Keyword items score in (0, KEYWORD_CEILING], below the neighbour score 0.6 and the direct score 1.0. */
export const KEYWORD_CEILING = 0.45

/**
 * Scales a store hit into (0, 0.45]: the hit's score (2 per question token in the name, 1 per other token in
 * the description) over the best possible, 2 per distinct question token.
 */
function keywordScore(hitScore: number, distinctTokens: number): number {
  if (distinctTokens <= 0) return 0
  return (KEYWORD_CEILING * hitScore) / (2 * distinctTokens)
}

/** Candidates of the fallback, in the store's order (score descending, then id), with the relations touching each. */
export function keywordCandidates(hits: readonly KgKeywordHit[], distinctTokens: number, hood: KgNeighbourhood): GraphCandidate[] {
  return hits.map((hit) => ({
    entity: hit.entity,
    score: keywordScore(hit.score, distinctTokens),
    matchedBy: 'keyword' as const,
    hop: 0 as const,
    links: hood.relations.filter((r) => r.source === hit.entity.id || r.target === hit.entity.id)
  }))
}

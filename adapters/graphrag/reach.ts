/**
 * The graph leg's view of a graphrag search (`adapters/graph-reach.ts`): the entities the question names (in full or in
 * part) and their one-hop neighbours, each with the chunks it came from, weighted by `evidence.ts` (named 1.0, one hop
 * 0.6, the n-th chunk score/√n, at most `maxEvidence`). No keyword or passage fallback: those find entities by the
 * question's words, which the hybrid legs already read.
 */
import type { ReachedEntity } from '../graph-reach.js'
import { evidenceOf } from './evidence.js'
import { withRelations, type GraphCandidate } from './expand.js'
import type { ChunkSupport } from './support.js'

/**
 * The first `maxEntities` candidates (named ones first, as `orderBySupport` left them) as reached entities. A neighbour
 * keeps the one relation that reached it (relations to named entities first, then by weight); its evidence puts the
 * chunks stating that relation first among equally supported ones.
 */
export function reachedEntities(
  candidates: readonly GraphCandidate[], named: ReadonlySet<string>, support: ChunkSupport, maxEntities: number, maxEvidence: number
): ReachedEntity[] {
  return withRelations(candidates.slice(0, maxEntities), named, 1).flatMap((c): ReachedEntity[] => {
    if (c.matchedBy === 'keyword' || c.matchedBy === 'evidence') return []
    const via = c.hop === 1 ? c.relations[0] : undefined
    return [{
      id: c.entity.id,
      name: c.entity.name,
      matched_by: c.matchedBy,
      hop: c.hop,
      ...(c.matchedBy === 'meaning' && c.hop === 0 && c.share !== undefined ? { similarity: c.share } : {}),
      score: c.score,
      ...(via ? { via: { type: via.type, source: via.source, target: via.target } } : {}),
      evidence: evidenceOf(c.hop === 1 ? c : { ...c, relations: [] }, maxEvidence, support)
    }]
  })
}

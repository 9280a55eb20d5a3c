/**
 * Which chunks hold what was asked: each chunk's support, from the question's named entities, the relations between
 * them, and for each one-hop neighbour the share of its name's tokens (the CJK analyzer's bigrams, as the keyword
 * fallback uses) that occur in the question: a neighbour `访问令牌有效期` of a question asking `访问令牌多久过期`
 * adds 3/6 of its weight (访问 问令 令牌 of 访问 问令 令牌 牌有 有效 效期) to each chunk it cites.
 *
 * Every entity's part is weighted by its specificity, an IDF on entity support: 1 / (1 + ln n) for an entity cited by
 * n chunks, so that a hub the whole corpus names (ref, 组件: hundreds of chunks) adds little to each of its chunks
 * and the chunk where the question's specific entities meet wins. A relation between two named entities adds, to
 * each chunk that states it, the smaller specificity of its two ends: a passage stating the relation asked about
 * beats one where the two merely both occur. Support orders each item's evidence (`evidence.ts`) and the named
 * entities among themselves (the one citing the best-supported chunk first; equal ones keep the question's order).
 */
import { analyze } from '../../src/kernel/cjk-analyzer.js'
import type { KgEntity } from '../../src/providers/knowledge-graph/port.js'
import type { GraphCandidate } from './expand.js'

/** Support by chunk id; a chunk no named entity or question-sharing neighbour cites is absent (support 0). */
export type ChunkSupport = ReadonlyMap<string, number>

export const NO_SUPPORT: ChunkSupport = new Map()

const isNamed = (c: GraphCandidate) => c.hop === 0 && c.matchedBy !== 'keyword' && c.matchedBy !== 'evidence'

/** An entity's name as distinct analyzer tokens. */
export type NameTokens = (entity: KgEntity) => readonly string[]

/** The name's tokens, computed on every call; the adapter keeps them per graph version instead. */
export const nameTokens: NameTokens = (entity) => [...new Set(analyze(entity.name))]

/** The share of the name's distinct analyzer tokens that are among the question's (0 when it has none). */
function sharedShare(tokens: readonly string[], asked: ReadonlySet<string>): number {
  if (tokens.length === 0) return 0
  let shared = 0
  for (const t of tokens) if (asked.has(t)) shared++
  return shared / tokens.length
}

/** An entity's specificity: 1 / (1 + ln n) for an entity cited by n distinct chunks (1 for one chunk or none). */
const specificityOf = (n: number) => (n <= 1 ? 1 : 1 / (1 + Math.log(n)))

/**
 * Each chunk's support: per named entity citing it (hop 0, by name or alias; a name the question holds in part or
 * found by meaning: times its share) its specificity; per relation between two named entities stated in it, the
 * smaller specificity of the two; per neighbour citing it, the share of the neighbour's name the question holds times
 * the neighbour's specificity. The keyword and passage fallbacks name nothing: no support (the passage fallback gives
 * its matched chunks' support itself, `passages.ts`). `tokensOf` gives a name's tokens (the adapter's are kept per
 * graph version, so a question reaching a thousand neighbours analyses none).
 */
export function chunkSupport(candidates: readonly GraphCandidate[], question: string, tokensOf: NameTokens = nameTokens): ChunkSupport {
  if (!candidates.some(isNamed)) return NO_SUPPORT
  const asked = new Set(analyze(question))
  const support = new Map<string, number>()
  const add = (ids: ReadonlySet<string>, weight: number) => {
    for (const id of ids) support.set(id, (support.get(id) ?? 0) + weight)
  }
  const named = new Map<string, number>()
  for (const c of candidates) {
    if (c.matchedBy === 'keyword' || c.matchedBy === 'evidence') continue
    // a neighbour sharing no token with the question adds nothing: its chunks are not even read
    const share = isNamed(c) ? c.share ?? 1 : sharedShare(tokensOf(c.entity), asked)
    if (share === 0 && !isNamed(c)) continue
    const ids = new Set(c.entity.source_chunk_ids)
    const own = specificityOf(ids.size)
    if (isNamed(c)) named.set(c.entity.id, own)
    if (share > 0) add(ids, share * own)
  }
  const joined = new Set<string>()
  for (const c of candidates) {
    if (!named.has(c.entity.id)) continue
    for (const r of c.links) {
      if (r.source === r.target || joined.has(r.id) || !named.has(r.source) || !named.has(r.target)) continue
      joined.add(r.id)
      add(new Set((r.derived_from ?? []).flatMap((p) => p.chunk_ids)), Math.min(named.get(r.source)!, named.get(r.target)!))
    }
  }
  return support
}

/** The best support among an entity's chunks. */
function bestSupport(candidate: GraphCandidate, support: ChunkSupport): number {
  let best = 0
  for (const id of candidate.entity.source_chunk_ids) best = Math.max(best, support.get(id) ?? 0)
  return best
}

/**
 * The named entities ordered by their best-supported chunk, descending (a stable sort: ties keep the question's
 * order), those named in full before those named in part, and those before those found by meaning; neighbours and keyword hits stay where they are, after them.
 */
export function orderBySupport(candidates: readonly GraphCandidate[], support: ChunkSupport): GraphCandidate[] {
  if (support.size === 0) return [...candidates]
  const named = candidates.filter(isNamed)
  const rest = candidates.filter((c) => !isNamed(c))
  const best = new Map(named.map((c) => [c, bestSupport(c, support)] as const))
  const partly = (c: GraphCandidate) => (c.matchedBy === 'partial' ? 1 : c.matchedBy === 'meaning' ? 2 : 0)
  return [...[...named].sort((a, b) => partly(a) - partly(b) || best.get(b)! - best.get(a)!), ...rest]
}

/**
 * Which of the named entities' chunks the question is about. A question that names several entities asks about the
 * passage where they occur together, so a chunk's support is how many of the question's named entities cite it.
 * It orders each item's evidence (`evidence.ts`) and the named entities among themselves (the one citing the
 * best-supported chunk first; equal ones keep the question's order), so that an entity named in many chunks does not
 * put its first chunks in document order ahead of the chunk that holds what was asked.
 */
import type { GraphCandidate } from './expand.js'

/** Support by chunk id; a chunk no named entity cites is absent (support 0). */
export type ChunkSupport = ReadonlyMap<string, number>

export const NO_SUPPORT: ChunkSupport = new Map()

/** How many of the entities the question names (hop 0, matched by name or alias) cite each chunk. */
export function chunkSupport(candidates: readonly GraphCandidate[]): ChunkSupport {
  const support = new Map<string, number>()
  for (const c of candidates) {
    if (c.hop !== 0 || c.matchedBy === 'keyword') continue
    for (const id of new Set(c.entity.source_chunk_ids)) support.set(id, (support.get(id) ?? 0) + 1)
  }
  return support
}

/** The best support among an entity's chunks. */
export function bestSupport(candidate: GraphCandidate, support: ChunkSupport): number {
  let best = 0
  for (const id of candidate.entity.source_chunk_ids) best = Math.max(best, support.get(id) ?? 0)
  return best
}

/**
 * The named entities ordered by their best-supported chunk, descending (a stable sort: ties keep the question's
 * order); neighbours and keyword hits stay where they are, after them.
 */
export function orderBySupport(candidates: readonly GraphCandidate[], support: ChunkSupport): GraphCandidate[] {
  if (support.size === 0) return [...candidates]
  const named = candidates.filter((c) => c.hop === 0 && c.matchedBy !== 'keyword')
  const rest = candidates.filter((c) => !(c.hop === 0 && c.matchedBy !== 'keyword'))
  const best = new Map(named.map((c) => [c, bestSupport(c, support)] as const))
  return [...[...named].sort((a, b) => best.get(b)! - best.get(a)!), ...rest]
}

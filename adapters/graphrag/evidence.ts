/**
 * An item's evidence: the chunks its entity came from, weighted as ApeMind maps graph hits back to chunks. The
 * entity's score (1.0 named, 0.6 one hop, below 0.5 keyword, at most 0.3 from the chunks best matching the question) is the first chunk's weight, and the n-th chunk weighs
 * score/√n, so that an entity found in many chunks does not drown the bundle; at most `maxEvidence` chunks per entity.
 * The chunks with the most support come first (`support.ts`: where what was asked is), then,
 * among equal ones, those that also state one of the relations shown (they hold what the item's text says), then the
 * rest in the entity's own order.
 */
import type { ShownCandidate } from './expand.js'
import { NO_SUPPORT, type ChunkSupport } from './support.js'

export interface EvidenceChunk {
  chunk_id: string
  weight: number
}

/** Evidence chunks kept per entity when the deployment does not say. */
export const MAX_EVIDENCE = 5

export function evidenceOf(candidate: ShownCandidate, maxEvidence: number, support: ChunkSupport = NO_SUPPORT): EvidenceChunk[] {
  const own = candidate.entity.source_chunk_ids
  const stated = candidate.relations.flatMap((r) => (r.derived_from ?? []).flatMap((p) => p.chunk_ids))
  const owned = stated.length === 0 ? undefined : new Set(own)
  const ids = new Set(owned ? stated.filter((id) => owned.has(id)) : [])
  for (const id of own) ids.add(id)
  return mostSupported(ids, support, maxEvidence)
    .map((chunk_id, i) => ({ chunk_id, weight: Math.round((candidate.score / Math.sqrt(i + 1)) * 10_000) / 10_000 }))
}

/**
 * The first `k` of `ids` after a stable sort by support, descending (equal support keeps the order of `ids`), without
 * sorting them all: an entity the corpus names everywhere cites hundreds of chunks, and five are kept.
 */
function mostSupported(ids: Iterable<string>, support: ChunkSupport, k: number): string[] {
  const kept: string[] = []
  const keptSupport: number[] = []
  if (k <= 0) return kept
  for (const id of ids) {
    const s = support.get(id) ?? 0
    if (kept.length === k && s <= keptSupport[k - 1]!) continue
    let at = kept.length
    while (at > 0 && keptSupport[at - 1]! < s) at--
    kept.splice(at, 0, id)
    keptSupport.splice(at, 0, s)
    if (kept.length > k) {
      kept.pop()
      keptSupport.pop()
    }
  }
  return kept
}

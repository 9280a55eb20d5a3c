/**
 * An item's evidence: the chunks its entity came from, weighted as ApeMind maps graph hits back to chunks. The
 * entity's score (1.0 named, 0.6 one hop, below 0.5 keyword) is the first chunk's weight, and the n-th chunk weighs
 * score/√n, so that an entity found in many chunks does not drown the bundle; at most `maxEvidence` chunks per entity.
 * The chunks more of the question's named entities cite come first (`support.ts`: where what was asked is), then,
 * among equal ones, those that also state one of the relations shown (they hold what the item's text says), then the
 * rest in the entity's own order.
 */
import type { GraphCandidate } from './expand.js'
import { NO_SUPPORT, type ChunkSupport } from './support.js'

export interface EvidenceChunk {
  chunk_id: string
  weight: number
}

/** Evidence chunks kept per entity when the deployment does not say. */
export const MAX_EVIDENCE = 5

export function evidenceOf(candidate: GraphCandidate, maxEvidence: number, support: ChunkSupport = NO_SUPPORT): EvidenceChunk[] {
  const own = new Set(candidate.entity.source_chunk_ids)
  const stating = candidate.relations.flatMap((r) => (r.derived_from ?? []).flatMap((p) => p.chunk_ids)).filter((id) => own.has(id))
  const byRelation = [...new Set([...stating, ...candidate.entity.source_chunk_ids])]
  // a stable sort: equal support keeps the order above
  const ordered = byRelation.sort((a, b) => (support.get(b) ?? 0) - (support.get(a) ?? 0)).slice(0, maxEvidence)
  return ordered.map((chunk_id, i) => ({ chunk_id, weight: Math.round((candidate.score / Math.sqrt(i + 1)) * 10_000) / 10_000 }))
}

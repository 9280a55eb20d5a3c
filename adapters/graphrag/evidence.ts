/**
 * An item's evidence: the chunks its entity came from, weighted as ApeMind maps graph hits back to chunks. The
 * entity's score (1.0 named, 0.6 one hop, below 0.5 keyword) is the first chunk's weight, and the n-th chunk weighs
 * score/√n, so that an entity found in many chunks does not drown the bundle; at most `maxEvidence` chunks per entity.
 * Chunks that also state one of the relations shown come first (they hold what the item's text says), then the rest
 * in the entity's own order.
 */
import type { GraphCandidate } from './expand.js'

export interface EvidenceChunk {
  chunk_id: string
  weight: number
}

/** Evidence chunks kept per entity when the deployment does not say. */
export const MAX_EVIDENCE = 5

export function evidenceOf(candidate: GraphCandidate, maxEvidence: number): EvidenceChunk[] {
  const own = new Set(candidate.entity.source_chunk_ids)
  const stating = candidate.relations.flatMap((r) => (r.derived_from ?? []).flatMap((p) => p.chunk_ids)).filter((id) => own.has(id))
  const ordered = [...new Set([...stating, ...candidate.entity.source_chunk_ids])].slice(0, maxEvidence)
  return ordered.map((chunk_id, i) => ({ chunk_id, weight: Math.round((candidate.score / Math.sqrt(i + 1)) * 10_000) / 10_000 }))
}

/**
 * Per-query, per-collection min-max normalisation of vector distances (spec section 4.2, m-flow
 * `normalize_distances`): the best hit of every non-empty collection scores 0.0, the worst 1.0, and all
 * scores are 0 when every distance is equal. Every constant of the scorer lives on this scale.
 */
import type { ScoredHit } from './types.js'

export interface DistanceHit {
  id: string
  /** Lower is closer; from a cosine store, `1 - similarity`. */
  distance: number
  text: string
}

/** Normalises one collection's hits, keeping their order and the raw distance. */
export function normaliseDistances(hits: readonly DistanceHit[]): ScoredHit[] {
  if (hits.length === 0) return []
  let min = Infinity
  let max = -Infinity
  for (const h of hits) {
    if (h.distance < min) min = h.distance
    if (h.distance > max) max = h.distance
  }
  const range = max - min
  return hits.map((h) => ({
    id: h.id,
    text: h.text,
    raw_distance: h.distance,
    score: range > 0 ? (h.distance - min) / range : 0
  }))
}

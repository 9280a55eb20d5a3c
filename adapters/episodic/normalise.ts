/**
 * Min-max normalisation of vector distances, the scale every constant of the scorer lives on.
 *
 * - `query` (difference 6, the default): one pool of every hit that every collection returned for the
 *   query; the best hit of the whole query scores 0.0 and the worst 1.0.
 * - `collection` (m-flow `normalize_distances`): each collection on its own, so the
 *   best hit of every non-empty collection scores 0.0 however far it is.
 *
 * In both, all scores are 0 when every distance of the pool is equal (one hit included).
 */
import type { CollectionHits, Normalisation, ScoredHit } from './types.js'

export interface DistanceHit {
  id: string
  /** Lower is closer; from a cosine store, `1 - similarity`. */
  distance: number
  text: string
}

function bounds(lists: Iterable<readonly DistanceHit[]>): { min: number; range: number } {
  let min = Infinity
  let max = -Infinity
  for (const list of lists) {
    for (const h of list) {
      if (h.distance < min) min = h.distance
      if (h.distance > max) max = h.distance
    }
  }
  return { min, range: max - min }
}

function scale(hits: readonly DistanceHit[], { min, range }: { min: number; range: number }): ScoredHit[] {
  return hits.map((h) => ({
    id: h.id,
    text: h.text,
    raw_distance: h.distance,
    score: range > 0 ? (h.distance - min) / range : 0
  }))
}

/** Normalises one collection's hits on their own, keeping their order and the raw distance. */
export function normaliseDistances(hits: readonly DistanceHit[]): ScoredHit[] {
  return hits.length === 0 ? [] : scale(hits, bounds([hits]))
}

/** Normalises the raw hits of every collection by `rule`, keeping collections, order and raw distances. */
export function normaliseCollections(raw: Readonly<Record<string, readonly DistanceHit[]>>, rule: Normalisation): CollectionHits {
  const out: CollectionHits = {}
  if (rule === 'collection') {
    for (const [collection, hits] of Object.entries(raw)) out[collection] = normaliseDistances(hits)
    return out
  }
  const pool = bounds(Object.values(raw))
  for (const [collection, hits] of Object.entries(raw)) out[collection] = scale(hits, pool)
  return out
}

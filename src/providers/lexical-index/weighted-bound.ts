import { BM25_PARAMS } from './scorer.js'

/**
 * The server-side ranking's arithmetic (docs/scale-out.md, "Ranking on the server"): a document part of BM25
 * computed with a reference length written into the point, and the ceiling it puts on a document's exact score.
 */

/** Relative margin for float32: Qdrant stores each weight and each query value, and sums their products, in f32. */
const F32_MARGIN = 1e-4

/** The reference length a point is written with: a positive integer, so that it can be an exact facet's value. */
export function referenceLength(averageLength: number): number {
  return Number.isFinite(averageLength) && averageLength >= 1 ? Math.round(averageLength) : 1
}

/** w(t, d) = tf (k1 + 1) / (tf + k1 (1 - b + b dl / aref)): BM25's document part with `aref` for the average length. */
export function documentWeight(tf: number, length: number, aref: number): number {
  const { k1, b } = BM25_PARAMS
  return (tf * (k1 + 1)) / ((k1 * ((1 - b) + (b * (length / aref)))) + tf)
}

/**
 * How far exact weights can exceed the stored ones: with the true average length A and a point written with
 * aref, the exact document part is at most w(t, d) * max(1, A / aref) (the document part grows with A, and
 * never faster than A itself), so over the namespace the factor is max(1, A / the smallest aref).
 */
export function stalenessFactor(averageLength: number, smallestReference: number): number {
  return Math.max(1, averageLength / smallestReference)
}

/**
 * The highest exact score, in units of 1e-4, that a document whose server-side score is at most `approx` can
 * have: factor × approx, plus half a unit per query token for wink's rounding of each term weight to 4
 * decimals, plus the float32 margin. `queryTokens` counts a repeated token each time.
 */
export function exactCeilingUnits(approx: number, factor: number, queryTokens: number): number {
  return (factor * approx * (1 + F32_MARGIN) * 1e4) + (queryTokens * 0.5) + 1e-6
}

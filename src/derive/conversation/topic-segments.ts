/**
 * A session's topic segments from its turns' own vectors, TextTiling-style (Hearst 1997, with embeddings in place of
 * term counts): the similarity across each gap between the `window` turns before and after it, a depth score per gap
 * (how far it dips below the nearest peaks on both sides), and a boundary at each gap deeper than the mean depth less
 * half a standard deviation, kept at least `minTurns` turns apart. Deterministic: the same vectors give the same cuts.
 */

export interface SegmentOptions {
  /** Turns averaged on each side of a gap. Default 3. */
  window: number
  /** Fewest turns in a segment; a session of fewer than twice this many is one segment. Default 4. */
  minTurns: number
  /** Most segments per session. Default 12. */
  maxSegments: number
}

export const DEFAULT_SEGMENT_OPTIONS: SegmentOptions = { window: 3, minTurns: 4, maxSegments: 12 }

/** The first turn index of every segment after the first (ascending); [] for one segment. */
export function topicBoundaries(vectors: readonly Float32Array[], options: SegmentOptions = DEFAULT_SEGMENT_OPTIONS): number[] {
  const n = vectors.length
  if (n < 2 * options.minTurns) return []
  // gap g lies between turn g - 1 and turn g
  const gaps: number[] = []
  for (let g = 1; g < n; g++) {
    gaps.push(cosine(meanOf(vectors, Math.max(0, g - options.window), g), meanOf(vectors, g, Math.min(n, g + options.window))))
  }
  const depths = gaps.map((s, i) => peak(gaps, i, -1) - s + peak(gaps, i, 1) - s)
  const mean = depths.reduce((a, b) => a + b, 0) / depths.length
  const sd = Math.sqrt(depths.reduce((a, d) => a + (d - mean) ** 2, 0) / depths.length)
  const cutoff = mean - sd / 2
  const candidates = depths.map((d, i) => ({ gap: i + 1, d })).filter((c) => c.d > cutoff && c.d > 0)
    .sort((a, b) => b.d - a.d || a.gap - b.gap)
  const chosen: number[] = []
  for (const c of candidates) {
    if (chosen.length + 1 >= options.maxSegments) break
    if (c.gap < options.minTurns || n - c.gap < options.minTurns) continue
    if (chosen.some((g) => Math.abs(g - c.gap) < options.minTurns)) continue
    chosen.push(c.gap)
  }
  return chosen.sort((a, b) => a - b)
}

/** The highest similarity reached climbing from gap i in direction dir while it keeps rising. */
function peak(gaps: readonly number[], i: number, dir: 1 | -1): number {
  let best = gaps[i]!
  for (let j = i + dir; j >= 0 && j < gaps.length && gaps[j]! >= best; j += dir) best = gaps[j]!
  return best
}

/** The normalised mean of vectors [from, to). */
export function meanOf(vectors: readonly Float32Array[], from = 0, to = vectors.length): Float32Array {
  const dims = vectors[from]!.length
  const sum = new Float64Array(dims)
  for (let k = from; k < to; k++) {
    const v = vectors[k]!
    for (let i = 0; i < dims; i++) sum[i] = sum[i]! + v[i]!
  }
  let norm = 0
  for (let i = 0; i < dims; i++) norm += sum[i]! * sum[i]!
  norm = Math.sqrt(norm) || 1
  const out = new Float32Array(dims)
  for (let i = 0; i < dims; i++) out[i] = sum[i]! / norm
  return out
}

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0
  let na = 0
  let nb = 0
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!
    na += a[i]! * a[i]!
    nb += b[i]! * b[i]!
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb)
}

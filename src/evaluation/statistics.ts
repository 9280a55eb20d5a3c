/**
 * Confidence intervals by the percentile bootstrap over questions (Efron): B resamples of the questions with
 * replacement, the mean of each, and the 2.5th and 97.5th percentiles of those means. The resamples come
 * from a seeded generator (mulberry32), so one set, one seed and one answer give the same interval on every
 * run; every arm uses the same resamples, so a paired difference resamples whole questions.
 */

export interface Interval {
  mean: number
  ci_low: number
  ci_high: number
}

/** mulberry32: a small, fast 32-bit generator; uniform in [0, 1). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** B resamples of n indices, each a list of n indices drawn with replacement. */
export function resamples(n: number, b: number, seed: number): Uint32Array[] {
  const random = seededRandom(seed)
  const out: Uint32Array[] = []
  for (let i = 0; i < b; i++) {
    const sample = new Uint32Array(n)
    for (let j = 0; j < n; j++) sample[j] = Math.floor(random() * n)
    out.push(sample)
  }
  return out
}

/** The p-quantile (0..1) of sorted values, linear between the two nearest ranks (type 7). */
export function quantile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN
  const h = (sorted.length - 1) * p
  const lo = Math.floor(h)
  const hi = Math.ceil(h)
  return sorted[lo]! + (h - lo) * (sorted[hi]! - sorted[lo]!)
}

const mean = (values: ArrayLike<number>): number => {
  let s = 0
  for (let i = 0; i < values.length; i++) s += values[i]!
  return values.length === 0 ? 0 : s / values.length
}

/** The mean of `values` with its 95% percentile-bootstrap interval over `samples`. */
export function bootstrapMean(values: readonly number[], samples: readonly Uint32Array[]): Interval {
  const means = samples.map((s) => {
    let sum = 0
    for (let j = 0; j < s.length; j++) sum += values[s[j]!]!
    return s.length === 0 ? 0 : sum / s.length
  }).sort((a, b) => a - b)
  return { mean: mean(values), ci_low: quantile(means, 0.025), ci_high: quantile(means, 0.975) }
}

/** Latency percentiles by nearest rank (the smallest value with at least p of the values at or below it). */
export function percentiles(values: readonly number[]): { p50: number; p90: number; p95: number; p99: number; max: number } {
  const sorted = [...values].sort((a, b) => a - b)
  const at = (p: number) => (sorted.length === 0 ? 0 : sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)]!)
  return { p50: at(0.5), p90: at(0.9), p95: at(0.95), p99: at(0.99), max: sorted[sorted.length - 1] ?? 0 }
}

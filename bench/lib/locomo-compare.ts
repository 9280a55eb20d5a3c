/** Episodic against hybrid over LoCoMo questions: each metric's means and the paired bootstrap interval of the difference. */
import { bootstrapMean, resamples, type Interval } from '../../src/evaluation/statistics.js'

export type Scores = { recall: number; hit: number; rr: number }
export type QuestionRow = { conversation: string; category: number; episodic: Scores; hybrid: Scores }

export const round = (x: number, d = 3) => Math.round(x * 10 ** d) / 10 ** d

export function p50(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b)
  return s[Math.floor((s.length - 1) / 2)]!
}

export function compare(subset: readonly QuestionRow[]): Record<string, unknown> {
  const samples = resamples(subset.length, 2000, 40)
  const out: Record<string, unknown> = { questions: subset.length }
  for (const metric of ['recall', 'hit', 'rr'] as const) {
    const e = subset.map((r) => r.episodic[metric])
    const h = subset.map((r) => r.hybrid[metric])
    const fmt = (x: Interval) => ({ mean: round(x.mean), ci: [round(x.ci_low), round(x.ci_high)] })
    out[metric === 'rr' ? 'mrr@10' : `${metric}@10`] = {
      episodic: round(bootstrapMean(e, samples).mean), hybrid: round(bootstrapMean(h, samples).mean),
      difference: fmt(bootstrapMean(e.map((x, k) => x - h[k]!), samples))
    }
  }
  return out
}

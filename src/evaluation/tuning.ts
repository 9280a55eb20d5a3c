/**
 * Fitting hybrid's fusion settings on a judged set by k-fold cross-validation. Each question's two legs are
 * fetched once (each leg alone, `window` = the widest tried), then every candidate setting is applied to those
 * lists with the service's own fusion functions, so a grid of hundreds of settings costs one retrieval per leg
 * and question. The fit maximises MRR@10, then Recall@5, then nDCG@10 on the training folds; the held-out
 * figures are the chosen setting's on the fold it did not see.
 */
import { DEFAULT_FUSION, fuseLegs, type FusionSettings, type LegHits } from '../../adapters/hybrid/fusion.js'
import { NORMALISATIONS } from '../../adapters/hybrid/fusion-convex.js'
import type { JudgedQuestion } from './judged-set.js'
import { scoreQuestion, type JudgedItem } from './metrics.js'
import { seededRandom } from './statistics.js'

/** One question's legs, and a lookup from chunk id to what the judged set matches (id, source, text, doc id). */
export interface QuestionLegs {
  question: JudgedQuestion
  legs: LegHits[]
  item(id: string): JudgedItem | undefined
}

export type Setting = Pick<FusionSettings, 'fusion' | 'window'> & Partial<Pick<FusionSettings, 'k' | 'weights' | 'alpha' | 'normalisation'>> & {
  /** One leg alone (a baseline); both when absent. */
  legs?: readonly string[]
}

export interface Figures { mrr_at_10: number; recall_at_1: number; recall_at_5: number; recall_at_10: number; ndcg_at_10: number }

export const WINDOWS = [10, 20, 50, 100]

/** The grid: RRF over k, lexical weight and window; convex over alpha (0..1 by 0.05), normalisation and window. */
export function settingsGrid(): Setting[] {
  const out: Setting[] = []
  for (const window of WINDOWS) {
    for (const k of [1, 5, 10, 20, 30, 60, 100]) {
      for (const lexical of [0.5, 0.75, 1, 1.5, 2]) out.push({ fusion: 'rrf', window, k, weights: { vector: 1, lexical } })
    }
    for (const normalisation of NORMALISATIONS) {
      for (let a = 0; a <= 20; a++) out.push({ fusion: 'convex', window, alpha: a / 20, normalisation })
    }
  }
  return out
}

export const settingLabel = (s: Setting): string => s.fusion === 'rrf'
  ? `rrf k=${s.k ?? 60} weights=v${s.weights?.vector ?? 1},l${s.weights?.lexical ?? 1} window=${s.window}`
  : `convex ${s.normalisation ?? 'tmm'} alpha=${s.alpha ?? 0.5} window=${s.window}`

/** Per-question figures of one setting. */
export function scoreSetting(data: readonly QuestionLegs[], s: Setting, topK = 10): Figures[] {
  return data.map((d) => {
    const { legs, ...settings } = s
    const fused = fuseLegs(legs ? d.legs.filter((l) => legs.includes(l.leg)) : d.legs, { k: 60, weights: {}, alpha: 0.5, normalisation: 'tmm', ...settings })
    const items = fused.slice(0, topK).map((c) => d.item(c.id)).filter((x): x is JudgedItem => x !== undefined)
    const q = scoreQuestion(items, d.question, [1, 5, 10])
    return { mrr_at_10: q.mrr_at_10, recall_at_1: q.recall[1]!, recall_at_5: q.recall[5]!, recall_at_10: q.recall[10]!, ndcg_at_10: q.ndcg_at_10 }
  })
}

export function meanFigures(rows: readonly Figures[]): Figures {
  const n = rows.length || 1
  const sum = (k: keyof Figures) => rows.reduce((s, r) => s + r[k], 0) / n
  return { mrr_at_10: sum('mrr_at_10'), recall_at_1: sum('recall_at_1'), recall_at_5: sum('recall_at_5'), recall_at_10: sum('recall_at_10'), ndcg_at_10: sum('ndcg_at_10') }
}

const better = (a: Figures, b: Figures) => a.mrr_at_10 - b.mrr_at_10 || a.recall_at_5 - b.recall_at_5 || a.ndcg_at_10 - b.ndcg_at_10

/** Question indices into `folds` folds, shuffled by a seeded generator. */
export function foldsOf(n: number, folds: number, seed: number): number[][] {
  const order = Array.from({ length: n }, (_, i) => i)
  const random = seededRandom(seed)
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1))
    ;[order[i], order[j]] = [order[j]!, order[i]!]
  }
  return Array.from({ length: folds }, (_, f) => order.filter((_, i) => i % folds === f))
}

export interface TuneResult {
  folds: number
  /** The setting fitted on every question (what `--apply` stores). */
  best: { setting: Setting; label: string; figures: Figures }
  /** Per fold: the setting fitted on the other folds, and its figures on this one. */
  per_fold: { fold: number; questions: number; setting: string; held_out: Figures }[]
  /** Mean over the folds' held-out figures of the fitted settings, and of each fixed baseline on the same folds. */
  held_out: Figures
  baselines: { label: string; held_out: Figures }[]
}

export function crossValidate(data: readonly QuestionLegs[], grid: readonly Setting[], baselines: readonly { label: string; setting: Setting }[], folds = 5, seed = 42): TuneResult {
  const scores = grid.map((s) => scoreSetting(data, s))
  const pick = (indices: readonly number[]) => {
    let best = 0
    let bestFigures = meanFigures(indices.map((i) => scores[0]![i]!))
    for (let g = 1; g < grid.length; g++) {
      const f = meanFigures(indices.map((i) => scores[g]![i]!))
      if (better(f, bestFigures) > 0) { best = g; bestFigures = f }
    }
    return { index: best, figures: bestFigures }
  }
  const splits = foldsOf(data.length, folds, seed)
  const baselineScores = baselines.map((b) => scoreSetting(data, b.setting))
  const per_fold = splits.map((test, fold) => {
    const inTest = new Set(test)
    const train = data.map((_, i) => i).filter((i) => !inTest.has(i))
    const fitted = pick(train)
    return { fold, questions: test.length, setting: settingLabel(grid[fitted.index]!), held_out: meanFigures(test.map((i) => scores[fitted.index]![i]!)) }
  })
  // Pooled over the folds: every question counted once, under the setting fitted without it.
  const pooled = (rows: Figures[][]) => meanFigures(rows.flat())
  const heldOutRows = splits.map((test, fold) => {
    const label = per_fold[fold]!.setting
    const g = grid.findIndex((s) => settingLabel(s) === label)
    return test.map((i) => scores[g]![i]!)
  })
  const all = pick(data.map((_, i) => i))
  return {
    folds,
    best: { setting: grid[all.index]!, label: settingLabel(grid[all.index]!), figures: all.figures },
    per_fold,
    held_out: pooled(heldOutRows),
    baselines: baselines.map((b, i) => ({ label: b.label, held_out: meanFigures(baselineScores[i]!) }))
  }
}

/** The service's defaults before any namespace defaults, and each leg alone: what a fitted setting must beat. */
export const BASELINES: { label: string; setting: Setting }[] = [
  { label: 'lexical leg alone', setting: { fusion: 'rrf', window: 50, legs: ['lexical'] } },
  { label: 'vector leg alone', setting: { fusion: 'rrf', window: 50, legs: ['vector'] } },
  { label: 'rrf k=60 window=50 (fusion=rrf)', setting: { fusion: 'rrf', window: 50, k: 60 } },
  { label: `service default (${DEFAULT_FUSION.fusion}${DEFAULT_FUSION.fusion === 'convex' ? ` ${DEFAULT_FUSION.normalisation} alpha=${DEFAULT_FUSION.alpha}` : ''}, window=50)`, setting: { fusion: DEFAULT_FUSION.fusion, window: 50, k: 60, alpha: DEFAULT_FUSION.alpha, normalisation: DEFAULT_FUSION.normalisation } }
]


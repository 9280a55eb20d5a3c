/**
 * Fitting hybrid's fusion settings on a judged set by k-fold cross-validation. Each question's legs are
 * fetched once (each leg alone, `window` = the widest tried), then every candidate setting is applied to those
 * lists with the service's own fusion functions, so a grid of hundreds of settings costs one retrieval per leg
 * and question. The fit maximises MRR@10, then Recall@5, then nDCG@10 on the training folds; the held-out
 * figures are the chosen setting's on the fold it did not see. Where the namespace has a knowledge graph the grid
 * also holds every setting with the `graph` leg added, after the two-leg ones: a setting replaces the best so far
 * only when strictly better, so the graph leg is kept only when it is better by that order, and a tie keeps two legs.
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

export type Setting = Pick<FusionSettings, 'fusion' | 'window'> & Partial<Pick<FusionSettings, 'k' | 'weights' | 'alpha' | 'normalisation' | 'graphWeight'>> & {
  /** The legs fused: one alone (a baseline), or with `graph`; vector and lexical when absent. */
  legs?: readonly string[]
}

export const TWO_LEGS: readonly string[] = ['vector', 'lexical']
export const WITH_GRAPH: readonly string[] = ['vector', 'lexical', 'graph']

/**
 * The graph leg's weights tried: convex `graph_weight` around the service's 1/3, and the RRF weight around ApeMind's 1.
 * The upper ones let a graph list that alone holds the answer outrank both other legs' first hits.
 */
const GRAPH_WEIGHTS = [1 / 6, 1 / 3, 1 / 2, 2 / 3]
const GRAPH_RRF_WEIGHTS = [0.5, 1, 2]

const usesGraph = (s: Setting) => s.legs?.includes('graph') === true

export interface Figures { mrr_at_10: number; recall_at_1: number; recall_at_5: number; recall_at_10: number; ndcg_at_10: number }

export const WINDOWS = [10, 20, 50, 100]

/**
 * The grid: RRF over k, lexical weight and window; convex over alpha (0..1 by 0.05), normalisation and window. With
 * `graph`, after those, each of them with the graph leg at each of its weights (`GRAPH_WEIGHTS`, `GRAPH_RRF_WEIGHTS`).
 */
export function settingsGrid(options: { graph?: boolean } = {}): Setting[] {
  const out: Setting[] = []
  for (const window of WINDOWS) {
    for (const k of [1, 5, 10, 20, 30, 60, 100]) {
      for (const lexical of [0.5, 0.75, 1, 1.5, 2]) out.push({ fusion: 'rrf', window, k, weights: { vector: 1, lexical } })
    }
    for (const normalisation of NORMALISATIONS) {
      for (let a = 0; a <= 20; a++) out.push({ fusion: 'convex', window, alpha: a / 20, normalisation })
    }
  }
  if (!options.graph) return out
  return [...out, ...out.flatMap((s): Setting[] => s.fusion === 'rrf'
    ? GRAPH_RRF_WEIGHTS.map((graph) => ({ ...s, legs: WITH_GRAPH, weights: { ...s.weights, graph } }))
    : GRAPH_WEIGHTS.map((graphWeight) => ({ ...s, legs: WITH_GRAPH, graphWeight })))]
}

const round4 = (x: number) => Math.round(x * 1e4) / 1e4

export const settingLabel = (s: Setting): string => {
  const graph = usesGraph(s)
  return s.fusion === 'rrf'
    ? `rrf k=${s.k ?? 60} weights=v${s.weights?.vector ?? 1},l${s.weights?.lexical ?? 1}${graph ? `,g${s.weights?.graph ?? 1}` : ''} window=${s.window}`
    : `convex ${s.normalisation ?? 'tmm'} alpha=${s.alpha ?? 0.5}${graph ? ` graph_weight=${round4(s.graphWeight ?? 1 / 3)}` : ''} window=${s.window}`
}

/** Per-question figures of one setting. */
export function scoreSetting(data: readonly QuestionLegs[], s: Setting, topK = 10): Figures[] {
  return data.map((d) => {
    const { legs = TWO_LEGS, ...settings } = s
    const fused = fuseLegs(d.legs.filter((l) => legs.includes(l.leg)), { k: 60, weights: {}, alpha: 0.5, normalisation: 'tmm', ...settings })
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

/** Differences below this are ties (means of the same per-question figures summed in another order). */
const TIE = 1e-12
const above = (x: number) => (Math.abs(x) < TIE ? 0 : x)
/** The fit's order: MRR@10, then Recall@5, then nDCG@10. */
const ORDER = ['mrr_at_10', 'recall_at_5', 'ndcg_at_10'] as const

/** The first figure of the fit's order on which `a` and `b` differ, or undefined for a tie. */
export function decidingFigure(a: Figures, b: Figures): (typeof ORDER)[number] | undefined {
  return ORDER.find((k) => above(a[k] - b[k]) !== 0)
}

/** Positive when `a` is better by the fit's order. */
const better = (a: Figures, b: Figures) => {
  const k = decidingFigure(a, b)
  return k === undefined ? 0 : a[k] - b[k]
}

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

/** A fit over part of the grid: the setting fitted on every question, per fold the one fitted without it, pooled. */
interface Fit {
  /** The setting fitted on every question (what `--apply` stores). */
  best: { setting: Setting; label: string; figures: Figures }
  /** Per fold: the setting fitted on the other folds, and its figures on this one. */
  per_fold: { fold: number; questions: number; setting: string; held_out: Figures }[]
  /** Every question counted once, under the setting fitted without its fold. */
  held_out: Figures
}

export interface TuneResult extends Fit {
  folds: number
  /** Each fixed baseline's figures on every question (a fixed setting needs no fold). */
  baselines: { label: string; held_out: Figures }[]
  /**
   * When the grid holds settings with the graph leg: the fit among the two-leg settings alone and among those with
   * the graph leg alone, so a reader sees where the leg helps. `best` is the two-leg fit's unless the graph leg's
   * is strictly better.
   */
  by_legs?: { legs: readonly string[]; fit: Fit }[]
}

export function crossValidate(data: readonly QuestionLegs[], grid: readonly Setting[], baselines: readonly { label: string; setting: Setting }[], folds = 5, seed = 42): TuneResult {
  const scores = grid.map((s) => scoreSetting(data, s))
  const splits = foldsOf(data.length, folds, seed)
  const everyQuestion = data.map((_, i) => i)
  /** The first setting of `among` (grid indices, in grid order) that no later one beats on `questions`. */
  const pick = (among: readonly number[], questions: readonly number[]) => {
    let best = among[0]!
    let bestFigures = meanFigures(questions.map((i) => scores[best]![i]!))
    for (const g of among.slice(1)) {
      const f = meanFigures(questions.map((i) => scores[g]![i]!))
      if (better(f, bestFigures) > 0) { best = g; bestFigures = f }
    }
    return { index: best, figures: bestFigures }
  }
  const fit = (among: readonly number[]): Fit => {
    const fitted = splits.map((test) => {
      const inTest = new Set(test)
      return pick(among, everyQuestion.filter((i) => !inTest.has(i))).index
    })
    const all = pick(among, everyQuestion)
    return {
      best: { setting: grid[all.index]!, label: settingLabel(grid[all.index]!), figures: all.figures },
      per_fold: splits.map((test, fold) => ({
        fold, questions: test.length, setting: settingLabel(grid[fitted[fold]!]!), held_out: meanFigures(test.map((i) => scores[fitted[fold]!]![i]!))
      })),
      held_out: meanFigures(splits.flatMap((test, fold) => test.map((i) => scores[fitted[fold]!]![i]!)))
    }
  }
  const indices = grid.map((_, g) => g)
  const withGraph = indices.filter((g) => usesGraph(grid[g]!))
  const baselineScores = baselines.map((b) => scoreSetting(data, b.setting))
  return {
    folds,
    ...fit(indices),
    baselines: baselines.map((b, i) => ({ label: b.label, held_out: meanFigures(baselineScores[i]!) })),
    ...(withGraph.length > 0 && withGraph.length < grid.length
      ? { by_legs: [{ legs: TWO_LEGS, fit: fit(indices.filter((g) => !usesGraph(grid[g]!))) }, { legs: WITH_GRAPH, fit: fit(withGraph) }] }
      : {})
  }
}

const SERVICE_DEFAULT = `service default (${DEFAULT_FUSION.fusion}${DEFAULT_FUSION.fusion === 'convex' ? ` ${DEFAULT_FUSION.normalisation} alpha=${DEFAULT_FUSION.alpha}` : ''}, window=50)`

/** The service's defaults before any namespace defaults, and each leg alone: what a fitted setting must beat. */
export const BASELINES: { label: string; setting: Setting }[] = [
  { label: 'lexical leg alone', setting: { fusion: 'rrf', window: 50, legs: ['lexical'] } },
  { label: 'vector leg alone', setting: { fusion: 'rrf', window: 50, legs: ['vector'] } },
  { label: 'rrf k=60 window=50 (fusion=rrf)', setting: { fusion: 'rrf', window: 50, k: 60 } },
  { label: SERVICE_DEFAULT, setting: { fusion: DEFAULT_FUSION.fusion, window: 50, k: 60, alpha: DEFAULT_FUSION.alpha, normalisation: DEFAULT_FUSION.normalisation } }
]

/** Where the namespace has a graph, also the graph leg alone and the service's defaults with it (`legs` naming it, nothing else set). */
export const GRAPH_BASELINES: { label: string; setting: Setting }[] = [
  { label: 'graph leg alone', setting: { fusion: 'rrf', window: 50, legs: ['graph'] } },
  { label: `${SERVICE_DEFAULT} + graph`, setting: { ...BASELINES[3]!.setting, legs: WITH_GRAPH } }
]


/**
 * Runs every question of a judged set through every arm, one after another (so latencies are not
 * inflated by the other arms), and reports per arm each metric with its bootstrap interval, the paired
 * difference of every pair of arms, latency percentiles and, per question, each arm's first relevant rank.
 */
import type { JudgedQuestion } from './judged-set.js'
import { scoreQuestion, type JudgedItem, type QuestionScore } from './metrics.js'
import { bootstrapMean, percentiles, resamples, type Interval } from './statistics.js'

export interface ArmRun {
  items: readonly JudgedItem[]
  took_ms: number
}

export interface EvaluationOptions {
  /** Recall cut-offs. */
  ks: readonly number[]
  resamples: number
  seed: number
  signal?: AbortSignal
  onProgress?(done: number, total: number): void
}

interface ArmReport {
  arm: number
  label: string
  /** Questions the arm failed on (counted as finding nothing), and the first failure's message. */
  errors: number
  first_error?: string
  metrics: Record<string, Interval>
  latency_ms: ReturnType<typeof percentiles>
}

export interface EvaluationReport {
  questions: number
  ks: number[]
  bootstrap: { resamples: number; seed: number; confidence: number }
  arms: ArmReport[]
  differences: { arms: [number, number]; labels: [string, string]; metrics: Record<string, Interval> }[]
  per_question: { id: string; line: number; query: string; first_relevant_rank: (number | null)[] }[]
}

/** One evaluation's answer: the report, with the namespace and depth it ran at and how long it took. */
export type EvaluationRun = EvaluationReport & { namespace: string; top_k: number; took_ms: number }

class EvaluationCancelled extends Error {
  constructor(reason: string) { super(reason) }
}

const metricNames = (ks: readonly number[]) => [...ks.map((k) => `recall_at_${k}`), 'mrr_at_10', 'ndcg_at_10']
const valueOf = (s: QuestionScore, name: string): number =>
  name === 'mrr_at_10' ? s.mrr_at_10 : name === 'ndcg_at_10' ? s.ndcg_at_10 : s.recall[Number(name.slice('recall_at_'.length))]!

export async function evaluateArms(
  questions: readonly JudgedQuestion[],
  labels: readonly string[],
  run: (arm: number, question: JudgedQuestion) => Promise<ArmRun>,
  options: EvaluationOptions
): Promise<EvaluationReport> {
  const scores: QuestionScore[][] = labels.map(() => [])
  const latencies: number[][] = labels.map(() => [])
  const errors = labels.map(() => ({ count: 0, first: undefined as string | undefined }))
  const total = questions.length * labels.length
  let done = 0
  for (const q of questions) {
    for (let arm = 0; arm < labels.length; arm++) {
      if (options.signal?.aborted) throw new EvaluationCancelled(String(options.signal.reason ?? 'cancelled'))
      try {
        const answer = await run(arm, q)
        scores[arm]!.push(scoreQuestion(answer.items, q, options.ks))
        latencies[arm]!.push(answer.took_ms)
      } catch (error) {
        if (options.signal?.aborted) throw new EvaluationCancelled(String(options.signal.reason ?? 'cancelled'))
        const e = errors[arm]!
        e.count++
        e.first ??= (error as Error).message
        scores[arm]!.push(scoreQuestion([], q, options.ks))
      }
      options.onProgress?.(++done, total)
    }
  }
  const samples = resamples(questions.length, options.resamples, options.seed)
  const names = metricNames(options.ks)
  const series = (arm: number, name: string) => scores[arm]!.map((s) => valueOf(s, name))
  const arms: ArmReport[] = labels.map((label, arm) => ({
    arm,
    label,
    errors: errors[arm]!.count,
    ...(errors[arm]!.first ? { first_error: errors[arm]!.first } : {}),
    metrics: Object.fromEntries(names.map((name) => [name, rounded(bootstrapMean(series(arm, name), samples))])),
    latency_ms: percentiles(latencies[arm]!)
  }))
  const differences: EvaluationReport['differences'] = []
  for (let a = 0; a < labels.length; a++) {
    for (let b = a + 1; b < labels.length; b++) {
      differences.push({
        arms: [a, b],
        labels: [labels[a]!, labels[b]!],
        metrics: Object.fromEntries(names.map((name) => {
          const va = series(a, name)
          const vb = series(b, name)
          return [name, rounded(bootstrapMean(vb.map((v, i) => v - va[i]!), samples))]
        }))
      })
    }
  }
  return {
    questions: questions.length,
    ks: [...options.ks],
    bootstrap: { resamples: options.resamples, seed: options.seed, confidence: 0.95 },
    arms,
    differences,
    per_question: questions.map((q, i) => ({ id: q.id, line: q.line, query: q.query, first_relevant_rank: scores.map((s) => s[i]!.first_relevant_rank) }))
  }
}

const r6 = (x: number) => Math.round(x * 1e6) / 1e6
const rounded = (i: Interval): Interval => ({ mean: r6(i.mean), ci_low: r6(i.ci_low), ci_high: r6(i.ci_high) })

import { describe, expect, it } from 'vitest'
import type { JudgedItem } from '../../src/evaluation/metrics.js'
import { crossValidate, foldsOf, settingsGrid, TWO_LEGS, WITH_GRAPH, type QuestionLegs } from '../../src/evaluation/tuning.js'

const item = (id: string): JudgedItem => ({ id, source: id, text: id, mode: 'hybrid', metadata: { doc_id: id.split('#')[0] } })

/** Question i: its document `rel-i` is the lexical leg's first hit and the vector leg's third. */
function questions(n: number): QuestionLegs[] {
  return Array.from({ length: n }, (_, i) => {
    const rel = `rel${i}#0`
    const items = new Map([rel, 'v1#0', 'v2#0', 'l2#0'].map((id) => [id, item(id)]))
    return {
      question: { id: `q${i}`, line: i + 1, query: `q${i}`, relevant: { doc_ids: [`rel${i}`] }, match: 'all' as const },
      legs: [
        { leg: 'vector', hits: [{ id: 'v1#0', score: 0.9 }, { id: 'v2#0', score: 0.85 }, { id: rel, score: 0.8 }] },
        { leg: 'lexical', hits: [{ id: rel, score: 20 }, { id: 'l2#0', score: 2 }] }
      ],
      item: (id: string) => items.get(id)
    }
  })
}

describe('crossValidate', () => {
  it('fits a setting that puts the lexical leg\'s first hit first, and reports it held out', () => {
    const data = questions(20)
    const result = crossValidate(data, settingsGrid(), [{ label: 'vector alone', setting: { fusion: 'rrf', window: 50, legs: ['vector'] } }], 5, 7)
    // every fold's fitted setting ranks the relevant chunk first on the questions it did not see
    expect(result.held_out.mrr_at_10).toBe(1)
    expect(result.per_fold).toHaveLength(5)
    expect(result.per_fold.reduce((n, f) => n + f.questions, 0)).toBe(20)
    // the vector leg alone has it at rank 3 every time: MRR 1/3
    expect(result.baselines[0]!.held_out.mrr_at_10).toBeCloseTo(1 / 3, 12)
    expect(result.best.figures.mrr_at_10).toBe(1)
  })

  it('folds are a seeded partition of the questions', () => {
    const folds = foldsOf(11, 3, 1)
    expect(folds.flat().sort((a, b) => a - b)).toEqual(Array.from({ length: 11 }, (_, i) => i))
    expect(folds.map((f) => f.length)).toEqual([4, 4, 3])
    expect(foldsOf(11, 3, 1)).toEqual(folds)
  })
})

/**
 * Question i: a distractor is first in both the vector and the lexical leg, the relevant chunk third in the vector
 * leg only, and the graph leg's list is `graphList`. Without the graph leg no fusion lifts the relevant chunk above
 * the distractor (first in both legs) or the vector leg's second hit (ahead of it in the only leg holding both, and
 * on ties by rank): third at best, MRR 1/3 (tmm alpha 0 gets it there). With a graph list holding only the relevant
 * chunk, convex at graph_weight 2/3 gives it at least 2/3 and every other chunk at most 1/3: first, MRR 1.
 */
function graphQuestions(n: number, graphList: (rel: string) => { id: string; score: number }[]): QuestionLegs[] {
  return Array.from({ length: n }, (_, i) => {
    const rel = `rel${i}#0`
    const items = new Map([rel, 'd#0', 'v2#0', 'l2#0'].map((id) => [id, item(id)]))
    return {
      question: { id: `q${i}`, line: i + 1, query: `q${i}`, relevant: { doc_ids: [`rel${i}`] }, match: 'all' as const },
      legs: [
        { leg: 'vector', hits: [{ id: 'd#0', score: 0.9 }, { id: 'v2#0', score: 0.85 }, { id: rel, score: 0.8 }] },
        { leg: 'lexical', hits: [{ id: 'd#0', score: 20 }, { id: 'l2#0', score: 2 }] },
        { leg: 'graph', hits: graphList(rel) }
      ],
      item: (id: string) => items.get(id)
    }
  })
}

describe('crossValidate with the graph leg', () => {
  it('keeps the graph leg when it is strictly better, and reports both fits', () => {
    const result = crossValidate(graphQuestions(10, (rel) => [{ id: rel, score: 0.6 }]), settingsGrid({ graph: true }), [], 5, 7)
    expect(result.best.setting.legs).toEqual(WITH_GRAPH)
    expect(result.best.figures.mrr_at_10).toBe(1)
    const [two, three] = result.by_legs!
    expect(two!.legs).toEqual(TWO_LEGS)
    expect(two!.fit.best.figures.mrr_at_10).toBeCloseTo(1 / 3, 12)
    expect(two!.fit.best.setting.legs).toBeUndefined()
    expect(three!.fit.best.figures.mrr_at_10).toBe(1)
    expect(three!.fit.held_out.mrr_at_10).toBe(1)
  })

  it('a tie keeps two legs: a graph list that adds nothing to the answer', () => {
    // the graph leg finds only the distractor, already first in both other legs: no setting with it does better
    const result = crossValidate(graphQuestions(10, () => [{ id: 'd#0', score: 1 }]), settingsGrid({ graph: true }), [], 5, 7)
    expect(result.best.setting.legs).toBeUndefined()
    expect(result.by_legs![0]!.fit.best.figures).toEqual(result.by_legs![1]!.fit.best.figures)
  })

  it('without a graph the grid and the result are as before', () => {
    expect(settingsGrid().some((s) => s.legs !== undefined)).toBe(false)
    expect(settingsGrid({ graph: true })).toHaveLength(settingsGrid().length * 1 + 4 * 7 * 5 * 3 + 4 * 3 * 21 * 4)
    expect(crossValidate(graphQuestions(5, (rel) => [{ id: rel, score: 0.6 }]), settingsGrid(), [], 5, 7).by_legs).toBeUndefined()
  })
})

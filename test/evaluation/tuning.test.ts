import { describe, expect, it } from 'vitest'
import type { JudgedItem } from '../../src/evaluation/metrics.js'
import { crossValidate, foldsOf, settingsGrid, type QuestionLegs } from '../../src/evaluation/tuning.js'

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

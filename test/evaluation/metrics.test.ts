import { describe, expect, it } from 'vitest'
import { evaluateArms } from '../../src/evaluation/evaluate.js'
import { JudgedSetError, parseJudgedSet } from '../../src/evaluation/judged-set.js'
import { scoreQuestion, type JudgedItem } from '../../src/evaluation/metrics.js'
import { bootstrapMean, percentiles, quantile, resamples } from '../../src/evaluation/statistics.js'

const chunk = (id: string, text = ''): JudgedItem => ({ id, source: `docs/${id.split('#')[0]}.md`, text, mode: 'hybrid', metadata: { doc_id: id.split('#')[0] } })
const KS = [1, 5, 10]

describe('scoreQuestion (hand-computed)', () => {
  it('one relevant document at rank 3: Recall@1 0, Recall@5 1, MRR 1/3, nDCG 1/log2(4) = 0.5', () => {
    const s = scoreQuestion([chunk('a#0'), chunk('b#1'), chunk('rel#2')], { relevant: { doc_ids: ['rel'] }, match: 'all' }, KS)
    expect(s.recall).toEqual({ 1: 0, 5: 1, 10: 1 })
    expect(s.mrr_at_10).toBeCloseTo(1 / 3, 12)
    expect(s.ndcg_at_10).toBeCloseTo(0.5, 12)
    expect(s.first_relevant_rank).toBe(3)
  })

  it('two targets, found at ranks 1 and 4, a second chunk of the first at rank 2 not counted again', () => {
    // DCG = 1/log2(2) + 1/log2(5) = 1 + 0.430677; IDCG = 1 + 1/log2(3) = 1.630930; nDCG = 0.877215
    const items = [chunk('x#0'), chunk('x#1'), chunk('n#0'), chunk('y#3')]
    const s = scoreQuestion(items, { relevant: { doc_ids: ['x', 'y'] }, match: 'all' }, KS)
    expect(s.recall).toEqual({ 1: 0.5, 5: 1, 10: 1 })
    expect(s.mrr_at_10).toBe(1)
    expect(s.ndcg_at_10).toBeCloseTo((1 + 1 / Math.log2(5)) / (1 + 1 / Math.log2(3)), 12)
    expect(s.ndcg_at_10).toBeCloseTo(0.877215, 6)
  })

  it('match any: either of two Episodes, or the answer string, is full recall', () => {
    const episode = { id: 'ep-b', source: 'episode:ep-b', text: '…', mode: 'episodic', metadata: {} }
    const q = { relevant: { sources: ['episode:ep-a', 'episode:ep-b'], answers: ['WebView'] }, match: 'any' as const }
    const s = scoreQuestion([chunk('z#0'), episode], q, KS)
    expect(s.recall).toEqual({ 1: 0, 5: 1, 10: 1 })
    expect(s.ndcg_at_10).toBeCloseTo(1 / Math.log2(3), 12)
    const byText = scoreQuestion([chunk('z#0', '部分安卓 webview 不支持')], q, KS)
    expect(byText.first_relevant_rank).toBe(1)
  })

  it('answer strings match after NFKC width folding and lower-casing; ids and sources match exactly', () => {
    const item = chunk('d#2', 'ＧＰＴ－４ｏ 超时')
    expect(scoreQuestion([item], { relevant: { answers: ['gpt-4o'] }, match: 'all' }, KS).first_relevant_rank).toBe(1)
    expect(scoreQuestion([item], { relevant: { ids: ['d#2'] }, match: 'all' }, KS).first_relevant_rank).toBe(1)
    expect(scoreQuestion([item], { relevant: { ids: ['d#20'] }, match: 'all' }, KS).first_relevant_rank).toBeNull()
    expect(scoreQuestion([item], { relevant: { sources: ['docs/d.md'] }, match: 'all' }, KS).first_relevant_rank).toBe(1)
  })

  it('a graphrag item stands on the documents of its source chunks', () => {
    const entity = { id: 'e-x', source: 'graph:entity/e-x', text: 'X', mode: 'graphrag', metadata: { source_chunk_ids: ['guide#3'] } }
    expect(scoreQuestion([entity], { relevant: { doc_ids: ['guide'] }, match: 'all' }, KS).mrr_at_10).toBe(1)
  })

  it('a derived Episode stands on the documents of its evidence chunks', () => {
    const other = { id: 'd:ep:faq', source: 'episode:d:ep:faq', text: 'FAQ', mode: 'episodic', metadata: { evidence: [{ chunk_id: 'faq#0', weight: 0.9 }] } }
    const guide = { id: 'd:ep:guide', source: 'episode:d:ep:guide', text: '网关手册', mode: 'episodic', metadata: { evidence: [{ chunk_id: 'guide#2', weight: 0.8 }, { chunk_id: 'guide#0', weight: 0.5 }] } }
    const s = scoreQuestion([other, guide], { relevant: { doc_ids: ['guide'] }, match: 'all' }, KS)
    expect(s.recall).toEqual({ 1: 0, 5: 1, 10: 1 })
    expect(s.mrr_at_10).toBe(0.5)
  })

  it('nothing relevant within 10 gives MRR 0 but keeps the rank', () => {
    const items = Array.from({ length: 11 }, (_, i) => chunk(i === 10 ? 'rel#0' : `n${i}#0`))
    const s = scoreQuestion(items, { relevant: { doc_ids: ['rel'] }, match: 'all' }, [10, 20])
    expect(s.mrr_at_10).toBe(0)
    expect(s.ndcg_at_10).toBe(0)
    expect(s.recall).toEqual({ 10: 0, 20: 1 })
    expect(s.first_relevant_rank).toBe(11)
  })
})

describe('statistics', () => {
  it('quantile interpolates between ranks (type 7)', () => {
    expect(quantile([1, 2, 3, 4], 0.5)).toBe(2.5)
    expect(quantile([10, 20], 0.025)).toBeCloseTo(10.25, 12)
  })
  it('percentiles are nearest-rank', () => {
    // 1..100: p50 = 50, p90 = 90, p99 = 99
    const p = percentiles(Array.from({ length: 100 }, (_, i) => 100 - i))
    expect(p).toEqual({ p50: 50, p90: 90, p95: 95, p99: 99, max: 100 })
  })
  it('bootstrap: the same seed gives the same interval; constant values give a zero-width one', () => {
    const values = [0, 1, 1, 0, 1, 1, 1, 0, 1, 1]
    const a = bootstrapMean(values, resamples(values.length, 500, 7))
    const b = bootstrapMean(values, resamples(values.length, 500, 7))
    expect(a).toEqual(b)
    expect(a.mean).toBe(0.7)
    expect(a.ci_low).toBeLessThan(0.7)
    expect(a.ci_high).toBeGreaterThan(0.7)
    expect(bootstrapMean([0.5, 0.5, 0.5], resamples(3, 100, 1))).toEqual({ mean: 0.5, ci_low: 0.5, ci_high: 0.5 })
  })
  it('a bootstrap interval of a 0/1 mean covers about ±1.96·sqrt(p(1-p)/n)', () => {
    // n = 400, p = 0.5: normal approximation 0.5 ± 0.049
    const values = Array.from({ length: 400 }, (_, i) => i % 2)
    const { ci_low, ci_high } = bootstrapMean(values, resamples(400, 2000, 3))
    expect(ci_low).toBeGreaterThan(0.44)
    expect(ci_low).toBeLessThan(0.46)
    expect(ci_high).toBeGreaterThan(0.54)
    expect(ci_high).toBeLessThan(0.56)
  })
})

describe('parseJudgedSet', () => {
  it('reads lines, skips blank ones and numbers questions by line', () => {
    const qs = parseJudgedSet('{"query":"a","relevant":{"ids":["x"]}}\n\n{"id":"q2","query":"b","relevant":{"answers":["y"]},"match":"any"}\n')
    expect(qs.map((q) => [q.id, q.line, q.match])).toEqual([['line-1', 1, 'all'], ['q2', 3, 'any']])
  })
  it.each([
    ['{"query":"a","relevant":{"ids":["x"]}}\n{"query":"b"}', 2, 'relevant'],
    ['{"query":"a","relevant":{"ids":["x"]}}\nnot json', 2, '(line)'],
    ['{"query":" ","relevant":{"ids":["x"]}}', 1, 'query'],
    ['{"query":"a","relevant":{"docs":["x"]}}', 1, 'relevant.docs'],
    ['{"query":"a","relevant":{"ids":[1]}}', 1, 'relevant.ids'],
    ['{"query":"a","relevant":{"ids":[]}}', 1, 'relevant'],
    ['{"query":"a","relevant":{"ids":["x"]},"match":"some"}', 1, 'match'],
    ['{"query":"a","relevant":{"ids":["x"]},"extra":1}', 1, 'extra'],
    ['{"id":"q","query":"a","relevant":{"ids":["x"]}}\n{"id":"q","query":"b","relevant":{"ids":["x"]}}', 2, 'id']
  ])('%j fails at line %i, field %s', (text, line, field) => {
    try {
      parseJudgedSet(text)
      expect.unreachable()
    } catch (error) {
      expect(error).toBeInstanceOf(JudgedSetError)
      expect((error as JudgedSetError).line).toBe(line)
      expect((error as JudgedSetError).field).toBe(field)
      expect((error as Error).message).toContain(`line ${line}: ${field}`)
    }
  })
})

describe('evaluateArms', () => {
  it('reports per arm, the paired difference b − a, and each question\'s first relevant rank', async () => {
    const qs = parseJudgedSet(['a', 'b', 'c', 'd'].map((d) => JSON.stringify({ query: d, relevant: { doc_ids: [d] } })).join('\n'))
    // arm 0 finds every document at rank 1; arm 1 at rank 2 for a and b, never for c and d
    const report = await evaluateArms(qs, ['first', 'second'], async (arm, q) => ({
      took_ms: arm + 1,
      items: arm === 0 ? [chunk(`${q.query}#0`)] : ['a', 'b'].includes(q.query) ? [chunk('n#0'), chunk(`${q.query}#0`)] : [chunk('n#0')]
    }), { ks: [1, 5], resamples: 200, seed: 1 })
    expect(report.arms[0]!.metrics.mrr_at_10!.mean).toBe(1)
    expect(report.arms[1]!.metrics.mrr_at_10!.mean).toBe(0.25) // (1/2 + 1/2 + 0 + 0) / 4
    expect(report.arms[1]!.metrics.recall_at_5!.mean).toBe(0.5)
    expect(report.differences[0]!.metrics.mrr_at_10!.mean).toBe(-0.75)
    expect(report.differences[0]!.metrics.mrr_at_10!.ci_high).toBeLessThanOrEqual(-0.5)
    expect(report.per_question.map((p) => p.first_relevant_rank)).toEqual([[1, 2], [1, 2], [1, null], [1, null]])
    expect(report.arms[1]!.latency_ms.p50).toBe(2)
  })
  it('counts an arm\'s failure as finding nothing and names it', async () => {
    const qs = parseJudgedSet('{"query":"a","relevant":{"ids":["x"]}}')
    const report = await evaluateArms(qs, ['broken'], async () => { throw new Error('vector-store is unavailable') }, { ks: [1], resamples: 10, seed: 1 })
    expect(report.arms[0]).toMatchObject({ errors: 1, first_error: 'vector-store is unavailable' })
    expect(report.arms[0]!.metrics.recall_at_1!.mean).toBe(0)
  })
  it('stops when its signal is aborted', async () => {
    const qs = parseJudgedSet('{"query":"a","relevant":{"ids":["x"]}}\n{"query":"b","relevant":{"ids":["x"]}}')
    const controller = new AbortController()
    let runs = 0
    await expect(evaluateArms(qs, ['x'], async () => { runs++; controller.abort('client went away'); return { items: [], took_ms: 0 } },
      { ks: [1], resamples: 10, seed: 1, signal: controller.signal })).rejects.toThrow('client went away')
    expect(runs).toBe(1)
  })
})

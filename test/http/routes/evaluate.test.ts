import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { buildTestApp, type TestApp } from '../../helpers/build.js'

const documents = [
  { id: 'guide-cough', source: 'clinical/cough.md', text: '# 咳嗽诊疗指引\n\n本指引用于门诊咳嗽患者。\n\n## 慢性咳嗽\n\n咳嗽持续三周以上属于慢性咳嗽，应当进行胸部X线检查和肺功能检查。\n\n## 急性咳嗽\n\n急性咳嗽多由上呼吸道感染引起，一般无需抗生素。' },
  { id: 'antibiotics', source: 'clinical/antibiotics.md', text: '# 抗菌药物使用\n\n门诊抗菌药物的使用规则。\n\n## 儿童禁用\n\n左氧氟沙星等喹诺酮类药物禁用于 18 岁以下患者。\n\n## 疗程\n\n社区获得性肺炎疗程一般为五到七天。' },
  { id: 'policy-travel', source: 'finance/travel.md', text: '# 差旅报销办法\n\n依据财务〔2024〕17号文件制定。\n\n## 住宿标准\n\n一线城市住宿每晚不超过600元，其他城市不超过400元。' }
]
const episodes = {
  episodes: [{
    id: 'E1', name: '抗菌药物专项检查', summary: '【结论】门诊处方中左氧氟沙星用于儿童的情况需要全部拦截。',
    facets: [{ id: 'F1', search_text: '抗菌药物专项检查的结论', description: '儿童禁用喹诺酮' }]
  }]
}
const judged = [
  { id: 'cough', query: '咳嗽三周以上要做什么检查', relevant: { doc_ids: ['guide-cough'] } },
  { id: 'levo', query: '左氧氟沙星能给孩子用吗', relevant: { answers: ['禁用于 18 岁以下'], sources: ['episode:E1'] }, match: 'any' },
  { id: 'hotel', query: '一线城市住宿每晚多少钱', relevant: { ids: ['policy-travel#1'] } }
].map((q) => JSON.stringify(q)).join('\n')

type Interval = { mean: number; ci_low: number; ci_high: number }
type Report = {
  questions: number; top_k: number; ks: number[]
  arms: { arm: number; label: string; errors: number; metrics: Record<string, Interval>; latency_ms: Record<string, number> }[]
  differences: { arms: number[]; metrics: Record<string, Interval> }[]
  per_question: { id: string; line: number; first_relevant_rank: (number | null)[] }[]
}

let t: TestApp
beforeAll(async () => {
  t = await buildTestApp({ EVAL_MAX_QUESTIONS: '300' })
  for (const [url, payload] of [['/ingest/documents', { documents }], ['/ingest/episodes', episodes]] as const) {
    const r = await t.app.inject({ method: 'POST', url, payload })
    expect(r.statusCode, r.body).toBe(200)
  }
})
afterAll(async () => t?.close())

const post = (url: string, payload: Record<string, unknown>) => t.app.inject({ method: 'POST', url, payload })
/** The rank (from 1) of the first item of a /retrieve answer that `relevant` accepts, found independently of the evaluator. */
async function firstRank(arm: Record<string, unknown>, query: string, relevant: (item: { id: string; text: string; source: string; metadata: { doc_id?: string } }) => boolean) {
  const r = await post('/retrieve', { ...arm, query, top_k: 10 })
  const i = (r.json().recall_bundle as Parameters<typeof relevant>[0][]).findIndex(relevant)
  return i === -1 ? null : i + 1
}

describe('POST /evaluate', () => {
  it('scores every arm, each question\'s first relevant rank matching what /retrieve answers', async () => {
    const arms = [{ mode: 'hybrid' }, { mode: 'hybrid', legs: ['lexical'] }, { mode: 'episodic' }]
    const r = await post('/evaluate', { judged_set: judged, arms, resamples: 200 })
    expect(r.statusCode, r.body).toBe(200)
    const report = r.json() as Report
    expect(report.questions).toBe(3)
    expect(report.top_k).toBe(10)
    expect(report.arms.map((a) => a.label)).toEqual(['hybrid', 'hybrid legs=lexical', 'episodic'])
    const expected = [
      await Promise.all(arms.map((a) => firstRank(a, '咳嗽三周以上要做什么检查', (i) => i.metadata.doc_id === 'guide-cough'))),
      await Promise.all(arms.map((a) => firstRank(a, '左氧氟沙星能给孩子用吗', (i) => i.text.includes('禁用于 18 岁以下') || i.source === 'episode:E1'))),
      await Promise.all(arms.map((a) => firstRank(a, '一线城市住宿每晚多少钱', (i) => i.id === 'policy-travel#1')))
    ]
    expect(report.per_question.map((q) => q.first_relevant_rank)).toEqual(expected)
    // MRR@10 of each arm is the mean of 1/rank over the three questions (0 for none)
    report.arms.forEach((a, i) => {
      const mrr = expected.reduce((s, ranks) => s + (ranks[i] !== null && ranks[i]! <= 10 ? 1 / ranks[i]! : 0), 0) / 3
      expect(a.metrics.mrr_at_10!.mean).toBeCloseTo(mrr, 5)
      expect(a.metrics.mrr_at_10!.ci_low).toBeLessThanOrEqual(a.metrics.mrr_at_10!.mean)
      expect(Object.keys(a.metrics).sort()).toEqual(['mrr_at_10', 'ndcg_at_10', 'recall_at_1', 'recall_at_10', 'recall_at_5'])
      expect(a.latency_ms.p50).toBeGreaterThan(0)
    })
    expect(report.differences.map((d) => d.arms)).toEqual([[0, 1], [0, 2], [1, 2]])
    const d = report.differences[0]!.metrics.mrr_at_10!
    expect(d.mean).toBeCloseTo(report.arms[1]!.metrics.mrr_at_10!.mean - report.arms[0]!.metrics.mrr_at_10!.mean, 5)
    // seeded: a second run gives the same intervals
    const again = (await post('/evaluate', { judged_set: judged, arms, resamples: 200 })).json() as Report
    expect(again.arms.map((a) => a.metrics)).toEqual(report.arms.map((a) => a.metrics))
  })

  it('refuses a malformed line with its line number and field, and runs nothing', async () => {
    const bad = `${judged}\n\n{"query":"x","relevant":{"doc_ids":"guide-cough"}}`
    const r = await post('/evaluate', { judged_set: bad, arms: [{ mode: 'hybrid' }] })
    expect(r.statusCode).toBe(400)
    expect(r.json()).toMatchObject({ statusCode: 400, code: 'RECALL_BAD_REQUEST', error: 'Bad Request' })
    expect(r.json().message).toBe('body/judged_set judged set line 5: relevant.doc_ids must be a list of non-empty strings')
    const blank = await post('/evaluate', { judged_set: '{"query":"  ","relevant":{"ids":["a"]}}', arms: [{ mode: 'hybrid' }] })
    expect(blank.json().message).toContain('line 1: query')
  })

  it('answers 413 naming the bound for more questions than EVAL_MAX_QUESTIONS', async () => {
    const many = Array.from({ length: 301 }, (_, i) => JSON.stringify({ query: `问题${i}`, relevant: { ids: ['x'] } })).join('\n')
    const r = await post('/evaluate', { judged_set: many, arms: [{ mode: 'hybrid' }] })
    expect(r.statusCode).toBe(413)
    expect(r.json()).toMatchObject({ code: 'RECALL_EVALUATION_TOO_LARGE', message: 'body/judged_set holds 301 questions; the limit is 300 (EVAL_MAX_QUESTIONS)' })
  })

  it('refuses identical arms, options of another mode, and top_k below ks', async () => {
    const same = await post('/evaluate', { judged_set: judged, arms: [{ mode: 'hybrid' }, { mode: 'hybrid' }] })
    expect(same.statusCode).toBe(400)
    expect(same.json().message).toContain('are identical')
    const misplaced = await post('/evaluate', { judged_set: judged, arms: [{ mode: 'graphrag', alpha: 0.5 }] })
    expect(misplaced.json().message).toBe('body/arms/0: alpha apply to mode=hybrid only, not mode=graphrag')
    const low = await post('/evaluate', { judged_set: judged, arms: [{ mode: 'hybrid' }], top_k: 5, ks: [1, 10] })
    expect(low.json().message).toBe('body/top_k is 5, below the largest of body/ks (10)')
  })

  it('runs a large set as a job with progress, the same result as at once, and cancels one with DELETE', async () => {
    const arms = [{ mode: 'hybrid' }, { mode: 'hybrid', fusion: 'convex' }]
    const sync = (await post('/evaluate', { judged_set: judged, arms, resamples: 200 })).json() as Report
    const started = await post('/evaluate', { judged_set: judged, arms, resamples: 200, async: true })
    expect(started.statusCode, started.body).toBe(202)
    const job = started.json() as { id: string; status: string; status_url: string; progress: { total: number } }
    expect(started.headers.location).toBe(job.status_url)
    expect(job.progress.total).toBe(6)
    let status = job
    for (let i = 0; i < 200 && status.status === 'running'; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50))
      status = (await t.app.inject({ method: 'GET', url: job.status_url })).json()
    }
    const done = status as unknown as { status: string; progress: { done: number }; result: Report }
    expect(done.status).toBe('done')
    expect(done.progress.done).toBe(6)
    expect(done.result.arms.map((a) => a.metrics)).toEqual(sync.arms.map((a) => a.metrics))

    // 250 questions × 1 arm is past the synchronous bound: a job, cancelled at once
    const many = Array.from({ length: 250 }, (_, i) => JSON.stringify({ query: `咳嗽 ${i}`, relevant: { doc_ids: ['guide-cough'] } })).join('\n')
    const big = await post('/evaluate', { judged_set: many, arms: [{ mode: 'hybrid' }] })
    expect(big.statusCode).toBe(202)
    const id = big.json().id as string
    const cancelled = await t.app.inject({ method: 'DELETE', url: `/evaluate/jobs/${id}` })
    expect(cancelled.statusCode).toBe(200)
    let after = cancelled.json() as { status: string; progress: { done: number; total: number }; error?: string }
    for (let i = 0; i < 100 && after.status === 'running'; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20))
      after = (await t.app.inject({ method: 'GET', url: `/evaluate/jobs/${id}` })).json()
    }
    expect(after.status).toBe('cancelled')
    expect(after.error).toBe('cancelled by DELETE')
    expect(after.progress.done).toBeLessThan(250)
    expect((await t.app.inject({ method: 'GET', url: '/evaluate/jobs/nope' })).statusCode).toBe(404)
  })
})

describe('hybrid fusion option', () => {
  it('convex explains each leg\'s normalised score and contribution; rrf stays as it was', async () => {
    const convex = (await post('/retrieve', { mode: 'hybrid', query: '左氧氟沙星 儿童', top_k: 3, fusion: 'convex', alpha: 0.7 })).json()
    const top = convex.recall_bundle[0]
    expect(top.metadata.score_kind).toBe('convex')
    expect(top.metadata.rrf).toBeUndefined()
    const c = top.metadata.convex
    expect(c).toMatchObject({ alpha: 0.7, normalisation: 'minmax' })
    // score = 0.7·lexical + 0.3·vector (normalised), within the explanation's rounding
    const sum = (c.contributions.vector ?? 0) + (c.contributions.lexical ?? 0)
    expect(top.score).toBeCloseTo(sum, 5)
    if (c.normalised.lexical !== undefined) expect(c.contributions.lexical).toBeCloseTo(0.7 * c.normalised.lexical, 5)
    if (c.normalised.vector !== undefined) expect(c.contributions.vector).toBeCloseTo(0.3 * c.normalised.vector, 5)
    const rrf = (await post('/retrieve', { mode: 'hybrid', query: '左氧氟沙星 儿童', top_k: 3, fusion: 'rrf' })).json()
    expect(rrf.recall_bundle[0].metadata).toMatchObject({ score_kind: 'rrf', rrf: { k: 60 } })
    const l = rrf.recall_bundle[0].metadata.legs
    const expected = (l.vector ? 1 / (60 + l.vector.rank) : 0) + (l.lexical ? 1 / (60 + l.lexical.rank) : 0)
    expect(rrf.recall_bundle[0].score).toBeCloseTo(expected, 6)
  })

  it('without options the default is convex, min-max, alpha 0.5 (bench/results/fusion.md)', async () => {
    const body = (await post('/retrieve', { mode: 'hybrid', query: '一线城市住宿标准', top_k: 3 })).json()
    for (const item of body.recall_bundle) {
      const c = item.metadata.convex
      expect(item.metadata.score_kind).toBe('convex')
      expect(c).toMatchObject({ alpha: 0.5, normalisation: 'minmax' })
      expect(item.score).toBeCloseTo(0.5 * (c.normalised.lexical ?? 0) + 0.5 * (c.normalised.vector ?? 0), 5)
    }
    // min-max: each leg's best candidate normalises to 1
    expect(body.recall_bundle.some((i: { metadata: { convex: { normalised: { lexical?: number } } } }) => i.metadata.convex.normalised.lexical === 1)).toBe(true)
  })

  it('400 for an unknown fusion or normalisation (naming the allowed ones) and for alpha outside [0, 1]', async () => {
    const fusion = await post('/retrieve', { mode: 'hybrid', query: '咳嗽', fusion: 'borda' })
    expect(fusion.statusCode).toBe(400)
    expect(fusion.json().message).toBe('body/fusion must be equal to one of the allowed values: rrf, convex (got "borda")')
    const norm = await t.app.inject({ method: 'GET', url: `/retrieve?mode=hybrid&q=${encodeURIComponent('咳嗽')}&fusion=convex&normalisation=l2` })
    expect(norm.statusCode).toBe(400)
    expect(norm.json().message).toBe('querystring/normalisation must be equal to one of the allowed values: tmm, minmax, zscore (got "l2")')
    const mixed = await post('/retrieve', { mode: 'hybrid', query: '咳嗽', rrf_k: 10, alpha: 0.5 })
    expect(mixed.statusCode).toBe(400)
    expect(mixed.json().message).toBe('body/alpha apply to fusion=convex only, not fusion=rrf (implied by rrf_k)')
    for (const alpha of [-0.1, 1.5]) {
      const r = await post('/retrieve', { mode: 'hybrid', query: '咳嗽', fusion: 'convex', alpha })
      expect(r.statusCode).toBe(400)
      expect(r.json().message).toBe(`body/alpha must be ${alpha < 0 ? '>= 0' : '<= 1'} (got ${alpha})`)
    }
  })
})

describe('namespace retrieval defaults', () => {
  const url = '/namespaces/default/retrieval-defaults'
  it('are stored, read back, used when a request sets nothing, and removed', async () => {
    expect((await t.app.inject({ method: 'GET', url })).json()).toMatchObject({ namespace: 'default', hybrid: {}, stored_in: 'file' })
    const put = await t.app.inject({ method: 'PUT', url, payload: { hybrid: { fusion: 'convex', alpha: 0.8 }, note: 'test' } })
    expect(put.statusCode, put.body).toBe(200)
    expect((await t.app.inject({ method: 'GET', url })).json()).toMatchObject({ hybrid: { fusion: 'convex', alpha: 0.8 }, note: 'test' })
    const used = (await post('/retrieve', { mode: 'hybrid', query: '住宿标准', top_k: 2 })).json()
    expect(used.recall_bundle[0].metadata).toMatchObject({ score_kind: 'convex', convex: { alpha: 0.8 } })
    // a request's own options win; naming rrf gets today's rrf, none of the stored convex settings
    expect((await post('/retrieve', { mode: 'hybrid', query: '住宿标准', top_k: 2, alpha: 0.2 })).json().recall_bundle[0].metadata.convex.alpha).toBe(0.2)
    expect((await post('/retrieve', { mode: 'hybrid', query: '住宿标准', top_k: 2, fusion: 'rrf' })).json().recall_bundle[0].metadata).toMatchObject({ score_kind: 'rrf', rrf: { k: 60 } })
    const bad = await t.app.inject({ method: 'PUT', url, payload: { hybrid: { fusion: 'rrf', alpha: 0.5 } } })
    expect(bad.statusCode).toBe(400)
    expect(bad.json().message).toContain('alpha do not apply to fusion=rrf')
    expect((await t.app.inject({ method: 'DELETE', url })).statusCode).toBe(200)
    expect((await t.app.inject({ method: 'DELETE', url })).statusCode).toBe(404)
    expect((await post('/retrieve', { mode: 'hybrid', query: '住宿标准', top_k: 2 })).json().recall_bundle[0].metadata.convex?.alpha).not.toBe(0.8)
  })

  it('may set legs and graph_weight: legs hold whatever fusion a request names, graph_weight is convex\'s', async () => {
    const put = await t.app.inject({ method: 'PUT', url, payload: { hybrid: { fusion: 'convex', legs: ['lexical'], graph_weight: 0.5 } } })
    expect(put.statusCode, put.body).toBe(200)
    for (const extra of [{}, { fusion: 'rrf' }]) {
      const r = (await post('/retrieve', { mode: 'hybrid', query: '住宿标准', top_k: 2, ...extra })).json()
      expect(r.legs.map((l: { name: string; status: string }) => `${l.name}:${l.status}`)).toEqual(['embedding:skipped', 'vector:skipped', 'lexical:ok'])
    }
    // the request's own legs win
    expect((await post('/retrieve', { mode: 'hybrid', query: '住宿标准', top_k: 2, legs: ['vector'] })).json().legs.map((l: { name: string }) => l.name)).toEqual(['embedding', 'vector', 'lexical'])
    const bad = await t.app.inject({ method: 'PUT', url, payload: { hybrid: { fusion: 'rrf', graph_weight: 0.5 } } })
    expect(bad.statusCode).toBe(400)
    expect(bad.json().message).toContain('graph_weight do not apply to fusion=rrf')
    const badLeg = await t.app.inject({ method: 'PUT', url, payload: { hybrid: { legs: ['graph', 'nearby'] } } })
    expect(badLeg.statusCode).toBe(400)
    expect(badLeg.json().message).toContain('body/hybrid/legs/1')
    expect((await t.app.inject({ method: 'DELETE', url })).statusCode).toBe(200)
  })

  it('live in Redis when REDIS_URL is set, so a second replica uses them', async () => {
    const env = { REDIS_URL: inject('redisUrl'), CACHE_TTL_SECONDS: '0', REDIS_COMMAND_TIMEOUT_MS: '2000' }
    const a = await buildTestApp(env)
    const b = await buildTestApp(env)
    try {
      const ns = `eval-${Date.now()}`
      const put = await a.app.inject({ method: 'PUT', url: `/namespaces/${ns}/retrieval-defaults`, payload: { hybrid: { fusion: 'convex', alpha: 0.3, window: 20 } } })
      expect(put.statusCode, put.body).toBe(200)
      expect(put.json().stored_in).toBe('redis')
      expect((await b.app.inject({ method: 'GET', url: `/namespaces/${ns}/retrieval-defaults` })).json().hybrid).toEqual({ fusion: 'convex', alpha: 0.3, window: 20 })
      await b.app.inject({ method: 'POST', url: '/ingest/documents', payload: { namespace: ns, documents } })
      const r = (await b.app.inject({ method: 'POST', url: '/retrieve', payload: { mode: 'hybrid', namespace: ns, query: '住宿标准' } })).json()
      expect(r.recall_bundle[0].metadata.convex.alpha).toBe(0.3)
      await a.app.inject({ method: 'DELETE', url: `/namespaces/${ns}/retrieval-defaults` })
    } finally {
      await a.close()
      await b.close()
    }
  })
})

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BackendUnavailableError } from '../../../src/providers/errors.js'
import { buildTestApp, type TestApp } from '../../helpers/build.js'
import { failingWhen } from '../../helpers/failing-provider.js'

const documents = [
  { id: 'guide-cough', source: 'clinical/cough.md', text: '# 咳嗽诊疗指引\n\n本指引用于门诊咳嗽患者。\n\n## 慢性咳嗽\n\n咳嗽持续三周以上属于慢性咳嗽，应当进行胸部X线检查和肺功能检查。\n\n## 急性咳嗽\n\n急性咳嗽多由上呼吸道感染引起，一般无需抗生素。' },
  { id: 'antibiotics', source: 'clinical/antibiotics.md', text: '# 抗菌药物使用\n\n门诊抗菌药物的使用规则。\n\n## 儿童禁用\n\n左氧氟沙星等喹诺酮类药物禁用于 18 岁以下患者。\n\n## 疗程\n\n社区获得性肺炎疗程一般为五到七天。' },
  { id: 'policy-travel', source: 'finance/travel.md', text: '# 差旅报销办法\n\n依据财务〔2024〕17号文件制定。\n\n## 住宿标准\n\n一线城市住宿每晚不超过600元，其他城市不超过400元。' }
]
const graph = {
  entities: [
    { id: 'levo', name: '左氧氟沙星', type: '药物', source: 'clinical/antibiotics.md', source_chunk_ids: ['antibiotics#1'] },
    { id: 'minors', name: '18 岁以下患者', aliases: ['孩子', '儿童'], type: '人群', source: 'clinical/antibiotics.md', source_chunk_ids: ['antibiotics#1', 'antibiotics#0'] },
    { id: 'cough', name: '咳嗽', type: '症状', source: 'clinical/cough.md', source_chunk_ids: ['guide-cough#0', 'guide-cough#1'] }
  ],
  relations: [{ source: 'levo', target: 'minors', type: '禁忌', weight: 1 }]
}
const episodes = {
  episodes: [{
    id: 'E1', name: '抗菌药物专项检查', summary: '【结论】门诊处方中左氧氟沙星用于儿童的情况需要全部拦截。',
    facets: [{ id: 'F1', search_text: '结论', description: '儿童禁用喹诺酮' }]
  }]
}

type Item = { id: string; source: string; metadata: { source_chunk_ids?: string[] } }
type Arm = { arm: number; mode: string; response?: { recall_bundle: Item[]; took_ms: number; match_strength: string; cached: boolean }; evidence?: string[]; error?: unknown }

let t: TestApp
let failGraph = false
beforeAll(async () => {
  t = await buildTestApp({}, (p) => ({
    ...p,
    graph: failingWhen(p.graph, () => failGraph, () => new BackendUnavailableError('neo4j', 'connection refused'))
  }))
  for (const [url, payload] of [['/ingest/documents', { documents }], ['/ingest/graph', graph], ['/ingest/episodes', episodes]] as const) {
    const r = await t.app.inject({ method: 'POST', url, payload })
    expect(r.statusCode, r.body).toBe(200)
  }
})
afterAll(async () => t.close())

const compare = async (payload: Record<string, unknown>) => {
  const r = await t.app.inject({ method: 'POST', url: '/retrieve/compare', payload })
  expect(r.statusCode, r.body).toBe(200)
  return r.json() as { query: string; top_k: number; arms: Arm[]; comparison: Record<string, unknown>[]; took_ms: number }
}
const retrieve = async (payload: Record<string, unknown>) => {
  const r = await t.app.inject({ method: 'POST', url: '/retrieve', payload })
  return { status: r.statusCode, body: r.json() }
}
/** A response without the fields that differ from one run to the next. */
const stable = (body: Record<string, unknown>) => {
  const { took_ms: _t, cached: _c, legs, ...rest } = body
  return { ...rest, legs: (legs as { took_ms: number }[]).map(({ took_ms: _, ...leg }) => leg) }
}

describe('POST /retrieve/compare', () => {
  it('runs two hybrid arms that differ in legs, each exactly as /retrieve answers it, and compares them', async () => {
    const query = '左氧氟沙星能给孩子用吗'
    const body = await compare({ query, top_k: 4, arms: [{ mode: 'hybrid' }, { mode: 'hybrid', legs: ['lexical'] }] })
    expect(body.query).toBe(query)
    expect(body.top_k).toBe(4)
    expect(body.arms.map((a) => [a.arm, a.mode])).toEqual([[0, 'hybrid'], [1, 'hybrid']])
    const alone = [await retrieve({ mode: 'hybrid', query, top_k: 4 }), await retrieve({ mode: 'hybrid', query, top_k: 4, legs: ['lexical'] })]
    for (const i of [0, 1]) expect(stable(body.arms[i]!.response!)).toEqual(stable(alone[i]!.body))
    expect(alone[1]!.body.legs.find((l: { name: string }) => l.name === 'vector').status).toBe('skipped')

    // Derived here from the two bundles: a hybrid item's evidence is its own chunk id.
    const [a, b] = body.arms.map((arm) => arm.response!.recall_bundle)
    const idsB = new Set(b!.map((i) => i.id))
    const sourcesA = new Set(a!.map((i) => i.source))
    const sourcesB = new Set(b!.map((i) => i.source))
    const bothSources = [...sourcesA].filter((s) => sourcesB.has(s))
    expect(body.arms[0]!.evidence).toEqual(a!.map((i) => i.id))
    expect(body.comparison).toHaveLength(1)
    const pair = body.comparison[0]!
    expect(pair.arms).toEqual([0, 1])
    expect(pair.common_ids).toEqual(a!.map((i) => i.id).filter((id) => idsB.has(id)))
    expect(pair.common_evidence).toEqual(pair.common_ids)
    expect(pair.common_sources).toEqual(bothSources)
    expect(pair.sources_jaccard).toBeCloseTo(bothSources.length / new Set([...sourcesA, ...sourcesB]).size, 6)
    expect(pair.evidence_rbo).toBeGreaterThan(0)
    expect(pair.evidence_rbo).toBeLessThanOrEqual(1)
    expect(pair.took_ms).toEqual(body.arms.map((arm) => arm.response!.took_ms))
    expect(pair.match_strength).toEqual(body.arms.map((arm) => arm.response!.match_strength))
  })

  it('compares hybrid with graphrag through the chunks the entities cite', async () => {
    const body = await compare({ query: '左氧氟沙星能给孩子用吗', top_k: 3, arms: [{ mode: 'hybrid' }, { mode: 'graphrag', max_relations: 5 }] })
    const graphItems = body.arms[1]!.response!.recall_bundle
    // 左氧氟沙星 and 孩子 (an alias of 18 岁以下患者) are named; their chunks, in rank order, each once.
    expect(graphItems.map((i) => i.id)).toEqual(['levo', 'minors'])
    expect(body.arms[1]!.evidence).toEqual(['antibiotics#1', 'antibiotics#0'])
    const hybridIds = body.arms[0]!.response!.recall_bundle.map((i) => i.id)
    expect(body.comparison[0]!.common_ids).toEqual([])
    expect(body.comparison[0]!.common_evidence).toEqual(hybridIds.filter((id) => ['antibiotics#1', 'antibiotics#0'].includes(id)))
    expect(body.comparison[0]!.common_evidence).toContain('antibiotics#1')
  })

  it('three arms give three pairs; an Episode\'s evidence is episode:<id>', async () => {
    const body = await compare({ query: '左氧氟沙星能给孩子用吗', arms: [{ mode: 'hybrid' }, { mode: 'graphrag' }, { mode: 'episodic', episodic: { display_mode: 'summary' } }] })
    expect(body.top_k).toBe(10)
    expect(body.comparison.map((p) => p.arms)).toEqual([[0, 1], [0, 2], [1, 2]])
    expect(body.arms[2]!.response!.recall_bundle[0]!.id).toBe('E1')
    expect(body.arms[2]!.evidence).toEqual(['episode:E1'])
    expect(body.comparison[1]).toMatchObject({ common_ids: [], common_evidence: [], common_sources: [], sources_jaccard: 0, evidence_rbo: 0 })
  })

  it('runs two episodic arms that differ only in normalisation, each as /retrieve answers it with that rule', async () => {
    const query = '左氧氟沙星用于儿童的处方怎么处理'
    const arms = [{ mode: 'episodic', episodic: { normalisation: 'query' } }, { mode: 'episodic', episodic: { normalisation: 'collection' } }]
    const body = await compare({ query, top_k: 3, arms })
    for (const i of [0, 1]) {
      const alone = await retrieve({ query, top_k: 3, ...arms[i] })
      expect(alone.status).toBe(200)
      expect(stable(body.arms[i]!.response!)).toEqual(stable(alone.body))
      const rule = arms[i]!.episodic.normalisation
      const items = body.arms[i]!.response!.recall_bundle as unknown as { metadata: { normalisation?: string } }[]
      expect(items.length).toBeGreaterThan(0)
      for (const item of items) expect(item.metadata.normalisation).toBe(rule)
    }
    expect(body.comparison[0]!.arms).toEqual([0, 1])
  })

  it('uses the response cache /retrieve fills', async () => {
    const query = '慢性咳嗽要做什么检查'
    expect((await retrieve({ mode: 'graphrag', query })).body.cached).toBe(false)
    const body = await compare({ query, arms: [{ mode: 'hybrid', legs: ['vector'] }, { mode: 'graphrag' }] })
    expect(body.arms[1]!.response!.cached).toBe(true)
    expect(stable(body.arms[1]!.response!)).toEqual(stable((await retrieve({ mode: 'graphrag', query })).body))
  })

  it('records each arm\'s legs in the metrics, as /retrieve does', async () => {
    const count = async () => {
      const text = (await t.app.inject({ method: 'GET', url: '/metrics' })).body
      const line = text.split('\n').find((l) => l.startsWith('recall_leg_duration_seconds_count{') && l.includes('mode="graphrag"') && l.includes('leg="graph"') && l.includes('status="ok"'))
      return line ? Number(line.split(' ').pop()) : 0
    }
    const before = await count()
    await compare({ query: '左氧氟沙星的禁忌', arms: [{ mode: 'graphrag', max_relations: 3 }, { mode: 'graphrag', max_relations: 4 }] })
    expect(await count()).toBe(before + 2)
  })

  it('shows a failed arm\'s error in place, the one /retrieve answers with, and still answers the other arm', async () => {
    failGraph = true
    try {
      const query = '谁负责左氧氟沙星'
      const body = await compare({ query, arms: [{ mode: 'hybrid' }, { mode: 'graphrag' }] })
      const alone = await retrieve({ mode: 'graphrag', query })
      expect(alone.status).toBe(503)
      expect(body.arms[1]).toEqual({ arm: 1, mode: 'graphrag', error: alone.body })
      expect(alone.body).toMatchObject({ statusCode: 503, code: 'RECALL_BACKEND_UNAVAILABLE', error: 'Service Unavailable' })
      expect(alone.body.message).toContain('neo4j')
      expect(body.arms[0]!.response!.recall_bundle.length).toBeGreaterThan(0)
      expect(body.comparison).toEqual([])
    } finally {
      failGraph = false
    }
  })
})

describe('GET /retrieve/compare', () => {
  it('compares modes with their default options', async () => {
    const r = await t.app.inject({ method: 'GET', url: `/retrieve/compare?q=${encodeURIComponent('慢性咳嗽 检查')}&modes=graphrag,hybrid&top_k=2` })
    expect(r.statusCode, r.body).toBe(200)
    const body = r.json()
    expect(body.arms.map((a: Arm) => a.mode)).toEqual(['graphrag', 'hybrid'])
    expect(body.arms[1].response.recall_bundle).toHaveLength(2)
    expect(stable(body.arms[1].response)).toEqual(stable((await retrieve({ mode: 'hybrid', query: '慢性咳嗽 检查', top_k: 2 })).body))
  })
})

describe('bad input is a 400 naming it', () => {
  const post = (payload: unknown) => t.app.inject({ method: 'POST', url: '/retrieve/compare', payload: payload as object })
  it.each([
    [{ query: 'x', arms: [{ mode: 'hybrid' }] }, 'body/arms must NOT have fewer than 2 items (got [{"mode":"hybrid"}])'],
    [{ query: 'x', arms: [{ mode: 'hybrid' }, { mode: 'graphrag' }, { mode: 'episodic' }, { mode: 'hybrid', legs: ['vector'] }] }, 'body/arms must NOT have more than 3 items'],
    [{ query: 'x', arms: [{ mode: 'hybrid' }, { mode: 'vector' }] }, 'body/arms/1/mode must be equal to one of the allowed values: hybrid, graphrag, episodic (got "vector")'],
    [{ query: 'x', arms: [{ mode: 'hybrid' }, { mode: 'bogus' }] }, 'body/arms/1/mode must be equal to one of the allowed values: hybrid, graphrag, episodic (got "bogus")'],
    [{ query: 'x', arms: [{ mode: 'hybrid' }, { mode: 'graphrag', legs: ['lexical'] }] }, 'body/arms/1: legs apply to mode=hybrid only, not mode=graphrag'],
    [{ query: 'x', arms: [{ mode: 'episodic', max_relations: 3 }, { mode: 'hybrid', episodic: {} }] },
      'body/arms/0: max_relations apply to mode=graphrag only, not mode=episodic; body/arms/1: episodic apply to mode=episodic only, not mode=hybrid'],
    [{ query: 'x', arms: [{ mode: 'hybrid' }, { mode: 'hybrid' }] }, 'body/arms/0 and body/arms/1 are identical ({"mode":"hybrid","namespace":"default"}); arms must differ in mode or options'],
    [{ query: 'x', arms: [{ mode: 'hybrid', legs: ['lexical'], rrf_k: 10 }, { rrf_k: 10, legs: ['lexical'], mode: 'hybrid' }, { mode: 'graphrag' }] }, 'body/arms/0 and body/arms/1 are identical'],
    [{ query: 'x', arms: [{ mode: 'hybrid', top_k: 3 }, { mode: 'graphrag' }] }, 'body/arms/0 must NOT have additional properties ("top_k")'],
    [{ query: 'x', arms: [{ mode: 'hybrid', query: 'y' }, { mode: 'graphrag' }] }, 'body/arms/0 must NOT have additional properties ("query")'],
    [{ query: 'x', arms: [{ mode: 'hybrid', legs: ['dense'] }, { mode: 'graphrag' }] }, 'body/arms/0/legs/0'],
    [{ query: 'x' }, 'body must have required property \'arms\''],
    [{ query: '   ', arms: [{ mode: 'hybrid' }, { mode: 'graphrag' }] }, 'query is blank'],
    [{ query: 'x', top_k: 0, arms: [{ mode: 'hybrid' }, { mode: 'graphrag' }] }, 'body/top_k must be >= 1 (got 0)']
  ])('%j', async (payload, message) => {
    const r = await post(payload)
    expect(r.statusCode).toBe(400)
    expect(r.json()).toMatchObject({ statusCode: 400, code: 'RECALL_BAD_REQUEST', error: 'Bad Request' })
    expect(r.json().message).toContain(message)
  })

  it.each([
    ['modes=hybrid,vector', 'querystring/modes: unknown mode "vector"; allowed: hybrid, graphrag, episodic'],
    ['modes=hybrid', 'querystring/modes lists 1 mode; a comparison takes 2 or 3'],
    ['modes=hybrid,graphrag,episodic,hybrid', 'querystring/modes lists 4 modes; a comparison takes 2 or 3'],
    ['modes=hybrid,graphrag,hybrid', 'querystring/modes/0 and querystring/modes/2 are identical'],
    ['modes=', 'querystring/modes'],
    ['modes=hybrid,graphrag&top_k=101', 'querystring/top_k']
  ])('GET %s', async (qs, message) => {
    const r = await t.app.inject({ method: 'GET', url: `/retrieve/compare?q=x&${qs}` })
    expect(r.statusCode).toBe(400)
    expect(r.json().message).toContain(message)
  })
})

describe('access', () => {
  it('is a read: no API key needed when only writes need one', async () => {
    const keyed = await buildTestApp({ API_KEYS: 'k1' })
    try {
      const r = await keyed.app.inject({ method: 'POST', url: '/retrieve/compare', payload: { query: 'x', arms: [{ mode: 'hybrid' }, { mode: 'graphrag' }] } })
      expect(r.statusCode, r.body).toBe(200)
      expect((await keyed.app.inject({ method: 'POST', url: '/ingest/graph', payload: graph })).statusCode).toBe(401)
    } finally {
      await keyed.close()
    }
  })
})

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../../helpers/build.js'

const body = {
  entities: [{ id: 'N1', name: 'API', description: '对外接口' }, { id: 'N2', name: '鉴权中间件', description: '校验令牌' }],
  episodes: [
    {
      id: 'E1', name: 'API 流式返回改造', summary: '【目标】把 /chat/completions 接口改为流式返回。【变更边界】鉴权中间件保持不变，只改响应层和测试。',
      created_at: '2026-04-20T10:00:00Z', entities: [{ id: 'N1', description: '改造的就是它的响应格式' }],
      facets: [{
        id: 'F1', search_text: '变更边界', facet_type: 'constraint', description: '哪些部分不能改',
        anchor_text: '鉴权中间件保持不变，只改响应层和测试', entities: ['N2'],
        points: [{ id: 'P1', search_text: '鉴权中间件不能改', description: '安全评审要求' }]
      }]
    },
    { id: 'E2', name: '季度预算评审', summary: '【结论】云资源预算 40 万元，下季度复核。', created_at: '2026-03-01T10:00:00Z' }
  ]
}

let t: TestApp
beforeAll(async () => { t = await buildTestApp() })
afterAll(async () => t.close())

const ask = async (query: string, episodic?: Record<string, unknown>) => {
  const r = await t.app.inject({ method: 'POST', url: '/retrieve', payload: { mode: 'episodic', query, ...(episodic ? { episodic } : {}) } })
  expect(r.statusCode, r.body).toBe(200)
  return r.json()
}

describe('episodic over HTTP on the embedded stores', () => {
  it('rejects unknown references with a 400 listing them, writing nothing', async () => {
    const bad = { episodes: [{ id: 'X', name: 'x', summary: 's', entities: ['N9'], facets: [{ id: 'FX', search_text: 't', entities: ['N8'] }] }] }
    const r = await t.app.inject({ method: 'POST', url: '/ingest/episodes', payload: bad })
    expect(r.statusCode).toBe(400)
    expect(r.json().message).toContain('N9')
    expect(r.json().message).toContain('N8')
    expect((await ask('x')).recall_bundle).toEqual([])
  })

  it('ingests Episodes and explains the winning path of each bundle', async () => {
    const r = await t.app.inject({ method: 'POST', url: '/ingest/episodes', payload: body })
    expect(r.statusCode, r.body).toBe(200)
    expect(r.json()).toMatchObject({ episodes: 2, facets: 1, points: 1, entities: 2 })
    const answer = await ask('流式返回那个任务有哪些约束')
    const top = answer.recall_bundle[0]
    expect(top.id).toBe('E1')
    expect(top.mode).toBe('episodic')
    expect(top.source).toBe('episode:E1')
    expect(top.metadata.score_kind).toBe('bundle_cost')
    expect(top.score).toBeCloseTo(1 / (1 + top.metadata.cost), 9)
    expect(['direct_episode', 'facet', 'point', 'entity', 'facet_entity']).toContain(top.metadata.best_path)
    expect(top.metadata).toHaveProperty('best_facet_id')
    expect(top.text).toContain('API 流式返回改造')
    expect(answer.legs.map((l: { name: string }) => l.name)).toEqual(['embedding', 'vector', 'graph'])
    expect(['strong', 'medium', 'weak']).toContain(answer.match_strength)
  })

  it('reaches an Episode without facets or entities through its summary (difference 5)', async () => {
    // Not necessarily first: min-max normalisation gives the best facet hit of any query cost 0,
    // so E1's facet path (0.15) beats any direct hit (>= 0.3). Reachable is the point.
    const answer = await ask('云资源预算评审结论')
    const e2 = answer.recall_bundle.find((i: { id: string }) => i.id === 'E2')
    expect(e2.metadata.best_path).toBe('direct_episode')
    expect(e2.metadata.cost).toBeCloseTo(0.3, 9)
  })

  it('answers punctuation-only, time-only and stop-word-only questions with a valid bundle', async () => {
    for (const q of ['？？！', '昨天', 'the of and']) {
      const answer = await ask(q)
      expect(Array.isArray(answer.recall_bundle)).toBe(true)
    }
  })

  it('takes display_mode and tuning constants per request, and rejects bad ones', async () => {
    const detail = await ask('变更边界', { display_mode: 'detail', hop_cost: 0.1 })
    expect(detail.recall_bundle[0].metadata.display_mode).toBe('detail')
    const bad = await t.app.inject({ method: 'POST', url: '/retrieve', payload: { mode: 'episodic', query: 'x', episodic: { hop_cost: -1 } } })
    expect(bad.statusCode).toBe(400)
    expect(bad.json().message).toContain('hop_cost')
    const unknown = await t.app.inject({ method: 'POST', url: '/retrieve', payload: { mode: 'episodic', query: 'x', episodic: { hopcost: 1 } } })
    expect(unknown.statusCode).toBe(400)
  })

  it('returns an entity link\'s own description in detail output, and a re-ingest replaces it (difference 7)', async () => {
    const link = async () => {
      const answer = await ask('对外接口的响应格式改成了什么', { display_mode: 'detail' })
      const e1 = answer.recall_bundle.find((i: { id: string }) => i.id === 'E1')
      return (e1.metadata.edges as Array<{ relationship_name: string; to: string; description: string | null; edge_text: string }>)
        .find((e) => e.relationship_name === 'involves_entity' && e.to === 'N1')
    }
    expect(await link()).toMatchObject({ description: '改造的就是它的响应格式', edge_text: 'API | 改造的就是它的响应格式' })
    const changed = structuredClone(body)
    changed.episodes[0]!.entities = [{ id: 'N1', description: '只改它的流式响应' }]
    const r = await t.app.inject({ method: 'POST', url: '/ingest/episodes', payload: changed })
    expect(r.statusCode, r.body).toBe(200)
    expect(await link()).toMatchObject({ description: '只改它的流式响应', edge_text: 'API | 只改它的流式响应' })
  })

  it('answers ingest warnings beside the counts, and 400 for a link description over 2,000 characters', async () => {
    const r = await t.app.inject({ method: 'POST', url: '/ingest/episodes', payload: body })
    expect(r.statusCode).toBe(200)
    // 变更边界 is 4 characters; F1's link to N2 has no description.
    expect(r.json().warnings.map((w: { field: string }) => w.field)).toEqual(['episodes[0].facets[0].search_text', 'episodes[0].facets[0].entities[0]'])
    expect(r.json().warnings_total).toBe(2)
    const long = structuredClone(body)
    long.episodes[0]!.entities = [{ id: 'N1', description: 'x'.repeat(2001) }]
    const bad = await t.app.inject({ method: 'POST', url: '/ingest/episodes', payload: long })
    expect(bad.statusCode).toBe(400)
    expect(bad.json().message).toContain('Episode "E1", entity "N1"')
  })

  it('deletes an Episode with its facets and points, keeping shared entities; 404 when unknown', async () => {
    expect((await t.app.inject({ method: 'DELETE', url: '/episodes/E1' })).statusCode).toBe(200)
    expect((await t.app.inject({ method: 'DELETE', url: '/episodes/E1' })).statusCode).toBe(404)
    const answer = await ask('变更边界')
    expect(answer.recall_bundle.map((i: { id: string }) => i.id)).not.toContain('E1')
  })
})

describe('episodic with a backend that does not answer in time', () => {
  let slow: TestApp
  let stall = false
  beforeAll(async () => {
    slow = await buildTestApp({ EMBEDDING_TIMEOUT_MS: '300', EMBEDDING_CACHE_TTL_SECONDS: '0', CACHE_TTL_SECONDS: '0' }, (p) => ({
      ...p,
      embedder: new Proxy(p.embedder, {
        get(target, key, receiver) {
          const value = Reflect.get(target, key, receiver)
          if (key === 'embedQueries') {
            return async (texts: string[]) => {
              if (stall) await new Promise((r) => setTimeout(r, 5000))
              return (value as (t: string[]) => Promise<Float32Array[]>).call(target, texts)
            }
          }
          return typeof value === 'function' ? value.bind(target) : value
        }
      })
    }))
  })
  afterAll(async () => slow.close())

  it('answers 503 naming the embedder within its timeout, and recovers when it answers again', async () => {
    stall = true
    const started = Date.now()
    const r = await slow.app.inject({ method: 'POST', url: '/retrieve', payload: { mode: 'episodic', query: '变更边界' } })
    expect(r.statusCode).toBe(503)
    expect(r.json()).toMatchObject({ code: 'RECALL_BACKEND_TIMEOUT' })
    expect(r.json().message).toContain('embedder')
    expect(Date.now() - started).toBeLessThan(1500)
    stall = false
    expect((await slow.app.inject({ method: 'POST', url: '/retrieve', payload: { mode: 'episodic', query: '变更边界' } })).statusCode).toBe(200)
  })
})

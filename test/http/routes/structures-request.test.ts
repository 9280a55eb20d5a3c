/**
 * `structures` on a request (issue #31): graphrag and episodic read what the request says (imported, derived or
 * both), beside and over the namespace's setting; on /retrieve (POST and GET), /context and /compare, which share the
 * retrieve body. Expected items follow from docs/derivation.md: the imported entity 网关 (`team-gw`, no relations) is
 * the one item of the imported part; the derived part holds `d:网关`, named by guide's first sentence, and guide's
 * derived Episode `d:ep:guide`; nothing imported is an Episode.
 */
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../../helpers/build.js'

const GUIDE = {
  id: 'guide',
  text: '# 网关手册\n\n网关由平台组负责维护。\n\n## 回滚\n\n回滚时关闭 gateway.streaming.enabled 开关。'
}
const IMPORTED = { entities: [{ id: 'team-gw', name: '网关', type: '系统', source_chunk_ids: [] }], relations: [] }
const QUERY = '网关由谁负责维护？'

let t: TestApp
const ns = `structures-req-${randomBytes(3).toString('hex')}`
beforeAll(async () => {
  t = await buildTestApp({ DERIVED_EPISODES: 'true' })
  const docs = await t.app.inject({ method: 'POST', url: '/ingest/documents', payload: { namespace: ns, documents: [GUIDE] } })
  expect(docs.statusCode, docs.body).toBe(200)
  const graph = await t.app.inject({ method: 'POST', url: '/ingest/graph', payload: { namespace: ns, ...IMPORTED } })
  expect(graph.statusCode, graph.body).toBe(200)
}, 300_000)
afterAll(async () => t?.close())

type Item = { id: string; metadata: { derived?: boolean } }
const retrieve = async (extra: Record<string, unknown> = {}): Promise<Item[]> => {
  const r = await t.app.inject({ method: 'POST', url: '/retrieve', payload: { mode: 'graphrag', query: QUERY, namespace: ns, top_k: 10, ...extra } })
  expect(r.statusCode, r.body).toBe(200)
  return r.json().recall_bundle as Item[]
}
const setting = async (structures?: string) => {
  const r = structures === undefined
    ? await t.app.inject({ method: 'DELETE', url: `/namespaces/${ns}/retrieval-defaults` })
    : await t.app.inject({ method: 'PUT', url: `/namespaces/${ns}/retrieval-defaults`, payload: { structures } })
  expect(r.statusCode, r.body).toBeLessThan(300)
}

describe('structures on a graphrag request', () => {
  it('reads the part the request names; without one, the namespace\'s (imported here)', async () => {
    expect((await retrieve()).map((i) => i.id)).toEqual(['team-gw'])
    expect((await retrieve({ structures: 'imported' })).map((i) => i.id)).toEqual(['team-gw'])
    const derived = await retrieve({ structures: 'derived' })
    expect(derived.map((i) => i.id)).toContain('d:网关')
    expect(derived.every((i) => i.metadata.derived === true)).toBe(true)
    // both: the imported 网关 wins the name clash, the derived one is not an item of its own
    const both = (await retrieve({ structures: 'both' })).map((i) => i.id)
    expect(both[0]).toBe('team-gw')
    expect(both).not.toContain('d:网关')
  })

  it('wins over the namespace\'s setting, both ways', async () => {
    try {
      await setting('derived')
      expect((await retrieve()).map((i) => i.id)).toContain('d:网关')
      expect((await retrieve({ structures: 'imported' })).map((i) => i.id)).toEqual(['team-gw'])
      await setting('imported')
      expect((await retrieve({ structures: 'derived' })).every((i) => i.metadata.derived === true)).toBe(true)
    } finally {
      await setting(undefined)
    }
  })

  it('GET /retrieve takes it as a query parameter', async () => {
    const r = await t.app.inject({ method: 'GET', url: `/retrieve?mode=graphrag&namespace=${ns}&structures=derived&q=${encodeURIComponent(QUERY)}` })
    expect(r.statusCode, r.body).toBe(200)
    expect((r.json().recall_bundle as Item[]).map((i) => i.id)).toEqual((await retrieve({ structures: 'derived' })).map((i) => i.id))
  })

  it('is a 400 for hybrid, and for a value that is not a part', async () => {
    const hybrid = await t.app.inject({ method: 'POST', url: '/retrieve', payload: { mode: 'hybrid', query: QUERY, namespace: ns, structures: 'derived' } })
    expect(hybrid.statusCode).toBe(400)
    expect(hybrid.json().message).toBe('structures applies to mode=graphrag, mode=episodic and mode=hybrid with the graph leg only, not mode=hybrid without "graph" in legs')
    const get = await t.app.inject({ method: 'GET', url: `/retrieve?mode=hybrid&structures=derived&q=${encodeURIComponent(QUERY)}` })
    expect(get.statusCode).toBe(400)
    const bad = await t.app.inject({ method: 'POST', url: '/retrieve', payload: { mode: 'graphrag', query: QUERY, structures: 'all' } })
    expect(bad.statusCode).toBe(400)
    expect(bad.json().message).toMatch(/structures/)
  })

  it('/context packs the derived entity with its evidence chunk, weighted 1 for the entity the question names', async () => {
    const r = await t.app.inject({ method: 'POST', url: '/context', payload: { mode: 'graphrag', query: QUERY, namespace: ns, structures: 'derived', max_tokens: 2000 } })
    expect(r.statusCode, r.body).toBe(200)
    const [first] = r.json().manifest as Array<{ id: string; evidence?: Array<{ chunk_id: string; weight?: number; status: string }> }>
    expect(first!.id).toBe('d:网关')
    // the first evidence chunk weighs the item's score: 1 for an entity the question names
    expect(first!.evidence![0]).toMatchObject({ weight: 1, status: 'included' })
    expect(r.json().context).toContain('网关由平台组负责维护。')
  })

  it('episodic reads the part the request names too', async () => {
    const episodic = async (extra: Record<string, unknown>) => {
      const r = await t.app.inject({ method: 'POST', url: '/retrieve', payload: { mode: 'episodic', query: '网关回滚时关闭哪个开关？', namespace: ns, top_k: 5, ...extra } })
      expect(r.statusCode, r.body).toBe(200)
      return (r.json().recall_bundle as Item[]).map((i) => i.id)
    }
    expect(await episodic({ structures: 'derived' })).toEqual(['d:ep:guide'])
    expect(await episodic({ structures: 'imported' })).toEqual([])
    try {
      await setting('imported')
      expect(await episodic({})).toEqual([])
      expect(await episodic({ structures: 'both' })).toEqual(['d:ep:guide'])
    } finally {
      await setting(undefined)
    }
  })

  it('/evaluate: each arm reads the part it names', async () => {
    // one question whose one relevant item is the imported entity: found first by the imported arm, never by the derived one
    const judged = JSON.stringify({ id: 'q1', query: QUERY, relevant: { ids: ['team-gw'] } })
    const r = await t.app.inject({
      method: 'POST', url: '/evaluate',
      payload: { judged_set: judged, namespace: ns, resamples: 100, arms: [{ mode: 'graphrag', structures: 'imported' }, { mode: 'graphrag', structures: 'derived' }] }
    })
    expect(r.statusCode, r.body).toBe(200)
    expect((r.json().per_question as Array<{ first_relevant_rank: Array<number | null> }>)[0]!.first_relevant_rank).toEqual([1, null])
  })

  it('/compare: two graphrag arms that differ only in structures are an A/B', async () => {
    const r = await t.app.inject({
      method: 'POST', url: '/retrieve/compare',
      payload: { query: QUERY, namespace: ns, arms: [{ mode: 'graphrag', structures: 'imported' }, { mode: 'graphrag', structures: 'derived' }] }
    })
    expect(r.statusCode, r.body).toBe(200)
    const [a, b] = r.json().arms as Array<{ response: { recall_bundle: Item[] } }>
    expect(a!.response.recall_bundle.map((i) => i.id)).toEqual(['team-gw'])
    expect(b!.response.recall_bundle.map((i) => i.id)).toContain('d:网关')
  })
})

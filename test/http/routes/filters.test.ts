/**
 * Document metadata and retrieve filters over HTTP, on the embedded stores with the real model: metadata
 * validated and returned; hybrid filters applied by both legs before ranking (a filter keeping 1% of the
 * corpus still gives top_k items, ranked among the kept chunks); graphrag entity types; episodic time
 * ranges; the normalised filter echoed and part of the cache key; bad filters a 400 naming the field.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../../helpers/build.js'

/** 800 one-chunk documents that all match the question lexically; `bucket` is i mod 100, so one bucket is 1%. */
const MANY = Array.from({ length: 800 }, (_, i) => ({
  id: `rec-${i}`,
  source: `records/${i % 2 === 0 ? 'even' : 'odd'}/${i}.md`,
  text: `第${i}号记录：咳嗽随访，体温 ${36 + (i % 5) / 10} 度，编号 ${i}。`,
  metadata: { bucket: i % 100, parity: i % 2 === 0 ? 'even' : 'odd', tags: [`t${i % 3}`, 'all'], urgent: i % 4 === 0 }
}))

let t: TestApp
const post = (url: string, payload: object) => t.app.inject({ method: 'POST', url, payload })
const ok = async (url: string, payload: object) => {
  const r = await post(url, payload)
  expect(r.statusCode, r.body).toBe(200)
  return r.json()
}

beforeAll(async () => {
  t = await buildTestApp({ CACHE_TTL_SECONDS: '300' })
  for (let i = 0; i < MANY.length; i += 200) await ok('/ingest/documents', { namespace: 'records', documents: MANY.slice(i, i + 200) })
}, 300_000)
afterAll(async () => t.close())

type Item = { id: string; metadata: { doc_id: string; doc_metadata: { bucket: number }; legs: Record<string, { rank: number }>; rrf: { contributions: Record<string, number> }; filter?: unknown } }
const QUESTION = '咳嗽随访记录'

describe('document metadata', () => {
  it('is stored with every chunk and returned in item metadata', async () => {
    const answer = await ok('/retrieve', { mode: 'hybrid', query: '第42号记录', namespace: 'records', top_k: 1, legs: ['lexical'] })
    expect(answer.recall_bundle[0].id).toBe('rec-42#0')
    expect(answer.recall_bundle[0].metadata.doc_metadata, JSON.stringify(answer.recall_bundle[0].metadata.doc_metadata)).toEqual({ bucket: 42, parity: 'even', tags: ['t0', 'all'], urgent: false })
  })

  it('a bad key or value is a 400 naming the field; metadata over 8 KiB a 400 naming the document; nothing is written', async () => {
    const doc = (id: string, metadata: unknown) => ({ namespace: 'meta', documents: [{ id: 'fine', text: '正常' }, { id, text: '文本', metadata }] })
    const cases: Array<[unknown, string]> = [
      [{ 'a.b': 1 }, 'body/documents/1/metadata: key "a.b" does not match'],
      [{ '9lives': 1 }, 'body/documents/1/metadata: key "9lives" does not match'],
      [{ nested: { a: 1 } }, 'body/documents/1/metadata/nested must be one of these forms: A string, a number, a boolean or a list of strings.'],
      [{ list: [{ a: 1 }] }, 'body/documents/1/metadata/list/0 must be string'],
      // 8,193 bytes of JSON: {"k":"…"} is 8 bytes around 8,185 characters
      [{ k: 'x'.repeat(8185) }, 'documents[1].metadata (id "big"): 8193 bytes of JSON, over the 8192 allowed (MAX_METADATA_BYTES)']
    ]
    for (const [metadata, message] of cases) {
      const r = await post('/ingest/documents', doc('big', metadata))
      expect(r.statusCode, JSON.stringify(metadata).slice(0, 40)).toBe(400)
      expect(r.json().message).toContain(message)
    }
    // exactly 8,192 bytes is accepted; UTF-8 counts bytes: 2,728 CJK characters are 8,184 bytes plus 8
    expect((await post('/ingest/documents', doc('edge', { k: 'x'.repeat(8184) }))).statusCode).toBe(200)
    const cjk = await post('/ingest/documents', doc('cjk', { k: '字'.repeat(2729) }))
    expect(cjk.statusCode).toBe(400)
    expect(cjk.json().message).toContain('documents[1].metadata (id "cjk"): 8195 bytes')
    expect((await t.app.inject({ method: 'GET', url: '/documents?namespace=meta' })).json().documents.map((d: { id: string }) => d.id)).toEqual(['edge', 'fine'])
  })
})

describe('hybrid filter', () => {
  it('keeping 1% of the corpus, still gives top_k items, each ranked among the kept chunks in both legs', async () => {
    const filter = { metadata: { bucket: 7 } }
    const answer = await ok('/retrieve', { mode: 'hybrid', query: QUESTION, namespace: 'records', top_k: 5, filter, fusion: 'rrf' })
    const items = answer.recall_bundle as Item[]
    expect(items).toHaveLength(5)
    expect(items.every((i) => i.metadata.doc_metadata.bucket === 7)).toBe(true)
    // each leg returned the 8 kept chunks only (bucket 7: records 7, 107, …, 707)
    expect(answer.legs.map((l: { name: string; hits: number }) => [l.name, l.hits])).toEqual([['embedding', 1], ['vector', 8], ['lexical', 8]])

    // Each leg unfiltered over the whole corpus (the stores themselves), then cut to the kept chunks: a leg's
    // rank under the filter is the chunk's position in that cut list, so RRF adds ranks among the kept chunks.
    const { services } = t.app
    const library = services.documents.get('records')!
    const [vector] = await services.embedder.embedQueries([QUESTION])
    const kept = new Set(MANY.filter((d) => d.metadata.bucket === 7).map((d) => `${d.id}#0`))
    const vectorOrder = (await services.vectors.search(library.collection, 'records', vector!, MANY.length)).map((h) => h.id).filter((id) => kept.has(id))
    const lexicalOrder = (await library.lexical.search(QUESTION, MANY.length)).map((h) => h.id).filter((id) => kept.has(id))
    expect(vectorOrder).toHaveLength(8)
    expect(lexicalOrder).toHaveLength(8)
    for (const item of items) {
      const { vector, lexical } = item.metadata.legs
      if (vector) expect(vector.rank, item.id).toBe(vectorOrder.indexOf(item.id) + 1)
      if (lexical) expect(lexical.rank, item.id).toBe(lexicalOrder.indexOf(item.id) + 1)
      if (vector) expect(item.metadata.rrf.contributions['vector']).toBeCloseTo(1 / (60 + vector.rank), 6)
    }
  })

  it('combines doc ids, a source prefix and metadata conditions with AND, exactly', async () => {
    const ids = async (filter: object) => ((await ok('/retrieve', { mode: 'hybrid', query: QUESTION, namespace: 'records', top_k: 100, filter })).recall_bundle as Item[])
      .map((i) => i.metadata.doc_id).sort()
    const expected = (keep: (d: (typeof MANY)[number]) => boolean) => MANY.filter(keep).map((d) => d.id).sort()
    expect(await ids({ doc_ids: ['rec-1', 'rec-2', 'rec-3', 'missing'] })).toEqual(['rec-1', 'rec-2', 'rec-3'])
    expect(await ids({ source_prefix: 'records/even/1', metadata: { bucket: { lt: 20 } } }))
      .toEqual(expected((d) => d.source.startsWith('records/even/1') && d.metadata.bucket < 20))
    expect(await ids({ metadata: { bucket: { any_of: [3, 5] }, tags: 't0', urgent: false } }))
      .toEqual(expected((d) => [3, 5].includes(d.metadata.bucket) && d.metadata.tags.includes('t0') && !d.metadata.urgent))
    expect(await ids({ doc_ids: ['rec-4', 'rec-5', 'rec-8'], metadata: { urgent: true } })).toEqual(['rec-4', 'rec-8'])
    expect(await ids({ metadata: { parity: { any_of: ['odd'] }, bucket: { gte: 98 } } })).toEqual(expected((d) => d.metadata.parity === 'odd' && d.metadata.bucket >= 98))
  })

  it('a filter that keeps nothing answers empty, saying so, and still shows the filter', async () => {
    const answer = await ok('/retrieve', { mode: 'hybrid', query: QUESTION, namespace: 'records', filter: { source_prefix: 'nowhere/' } })
    expect(answer.recall_bundle).toEqual([])
    expect(answer.filter).toEqual({ source_prefix: 'nowhere/' })
    expect(answer.legs.every((l: { status: string; reason: string }) => l.status === 'skipped' && l.reason === 'the filter keeps no document')).toBe(true)
    const none = await ok('/retrieve', { mode: 'hybrid', query: QUESTION, namespace: 'records', filter: { metadata: { bucket: 1000 } } })
    expect(none.recall_bundle).toEqual([])
    expect(none.filter).toEqual({ metadata: { bucket: 1000 } })
  })

  it('echoes the normalised filter in the response and every item, and keys the cache by it', async () => {
    const first = await post('/retrieve', {
      mode: 'hybrid', query: QUESTION, namespace: 'records', top_k: 3,
      filter: { metadata: { tags: { any_of: ['t2', 't1', 't2'] }, bucket: { gte: 10, lt: 12 } }, doc_ids: ['rec-11', 'rec-10', 'rec-111', 'rec-11'] }
    })
    expect(first.headers['x-cache']).toBe('miss')
    const normalised = { doc_ids: ['rec-10', 'rec-11', 'rec-111'], metadata: { bucket: { gte: 10, lt: 12 }, tags: { any_of: ['t1', 't2'] } } }
    expect(first.json().filter).toEqual(normalised)
    // rec-111 is in bucket 11 but tagged t0: two chunks pass
    expect(first.json().recall_bundle.map((i: Item) => i.id).sort()).toEqual(['rec-10#0', 'rec-11#0'])
    expect(first.json().recall_bundle.map((i: Item) => i.metadata.filter)).toEqual([normalised, normalised])
    // the same filter written otherwise is the same cache entry; another filter is not
    const same = await post('/retrieve', {
      mode: 'hybrid', query: QUESTION, namespace: 'records', top_k: 3,
      filter: { doc_ids: ['rec-111', 'rec-10', 'rec-11'], metadata: { bucket: { lt: 12, gte: 10 }, tags: { any_of: ['t1', 't2'] } } }
    })
    expect(same.headers['x-cache']).toBe('hit')
    const other = await post('/retrieve', { mode: 'hybrid', query: QUESTION, namespace: 'records', top_k: 3, filter: { doc_ids: ['rec-10'] } })
    expect(other.headers['x-cache']).toBe('miss')
    expect(other.json().recall_bundle.map((i: Item) => i.id)).toEqual(['rec-10#0'])
  })

  it('bad filters are a 400 naming the field', async () => {
    const cases: Array<[object, string]> = [
      [{ mode: 'hybrid', filter: {} }, 'body/filter must NOT have fewer than 1 properties'],
      [{ mode: 'hybrid', filter: { metadata: { year: { between: [1, 2] } } } }, 'body/filter/metadata/year must NOT have additional properties ("between")'],
      [{ mode: 'hybrid', filter: { metadata: { year: {} } } }, 'body/filter/metadata/year must NOT have fewer than 1 properties'],
      [{ mode: 'hybrid', filter: { metadata: { year: { any_of: [1], gt: 0 } } } }, 'body/filter/metadata/year: any_of takes no bounds beside it'],
      [{ mode: 'hybrid', filter: { metadata: { year: [1, 2] } } }, 'body/filter/metadata/year must be one of these forms'],
      [{ mode: 'hybrid', filter: { metadata: { 'a b': 1 } } }, 'body/filter/metadata: key "a b" does not match'],
      [{ mode: 'hybrid', filter: { doc_ids: [] } }, 'body/filter/doc_ids must NOT have fewer than 1 items'],
      [{ mode: 'hybrid', filter: { color: 'red' } }, 'body/filter must NOT have additional properties ("color")'],
      [{ mode: 'graphrag', filter: { doc_ids: ['a'] } }, 'body/filter/doc_ids applies to mode=hybrid only, not mode=graphrag'],
      [{ mode: 'hybrid', filter: { entity_types: ['person'] } }, 'body/filter/entity_types applies to mode=graphrag only, not mode=hybrid'],
      [{ mode: 'hybrid', filter: { time_range: { start: '2025-01-01' } } }, 'body/filter/time_range applies to mode=episodic only, not mode=hybrid'],
      [{ mode: 'episodic', filter: { time_range: { start: 'last week' } } }, 'body/filter/time_range/start: "last week" is not an ISO 8601 time'],
      [{ mode: 'episodic', filter: { time_range: { start: '2025-02-01', end: '2025-01-01' } } }, 'body/filter/time_range: end 2025-01-01 is before start 2025-02-01'],
      [{ mode: 'episodic', filter: { time_range: {} } }, 'body/filter/time_range must NOT have fewer than 1 properties']
    ]
    for (const [payload, message] of cases) {
      const r = await post('/retrieve', { query: 'q', ...payload })
      expect(r.statusCode, JSON.stringify(payload)).toBe(400)
      expect(r.json().message, JSON.stringify(payload)).toContain(message)
    }
    const arm = await post('/retrieve/compare', { query: 'q', arms: [{ mode: 'hybrid' }, { mode: 'graphrag', filter: { metadata: { a: 1 } } }] })
    expect(arm.statusCode).toBe(400)
    expect(arm.json().message).toBe('body/arms/1: filter/metadata applies to mode=hybrid only, not mode=graphrag')
  })
})

describe('graphrag entity_types', () => {
  beforeAll(async () => {
    await ok('/ingest/graph', {
      namespace: 'people',
      entities: [
        { id: 'pku', name: '北京大学', type: 'org' }, { id: 'zhang', name: '张教授', type: 'person' },
        { id: 'li', name: '李研究员', type: 'person' }, { id: 'bj', name: '北京', type: 'city' }
      ],
      relations: [
        { source: 'zhang', target: 'pku', type: '任职于' }, { source: 'li', target: 'pku', type: '任职于', weight: 0.5 },
        { source: 'pku', target: 'bj', type: '位于' }
      ]
    })
  })

  it('keeps only entities of the given types; a named entity of another type still leads to them', async () => {
    const all = await ok('/retrieve', { mode: 'graphrag', query: '北京大学有哪些人', namespace: 'people' })
    expect(all.recall_bundle.map((i: { id: string }) => i.id)).toEqual(['pku', 'bj', 'zhang', 'li'])
    const people = await ok('/retrieve', { mode: 'graphrag', query: '北京大学有哪些人', namespace: 'people', filter: { entity_types: ['person'] } })
    expect(people.recall_bundle.map((i: { id: string; metadata: { hop: number; filter: unknown } }) => [i.id, i.metadata.hop])).toEqual([['zhang', 1], ['li', 1]])
    expect(people.filter).toEqual({ entity_types: ['person'] })
    // the keyword fallback keeps the types before its limit
    const keyword = await ok('/retrieve', { mode: 'graphrag', query: '研究员', namespace: 'people', top_k: 1, filter: { entity_types: ['person', 'city'] } })
    expect(keyword.recall_bundle.map((i: { id: string }) => i.id)).toEqual(['li'])
  })
})

describe('episodic time_range', () => {
  const episode = (id: string, name: string, start: string | null, end: string | null) => ({
    id, name, summary: `${name}：网关改造的阶段记录。`,
    ...(start ? { mentioned_time_start: start, mentioned_time_end: end } : {})
  })
  beforeAll(async () => {
    await ok('/ingest/episodes', {
      namespace: 'history',
      episodes: [
        episode('jan', '一月网关改造', '2025-01-05T00:00:00Z', '2025-01-20T00:00:00Z'),
        episode('mar', '三月网关改造', '2025-03-01T00:00:00Z', '2025-03-31T00:00:00Z'),
        episode('jun', '六月网关改造', '2025-06-10T00:00:00Z', '2025-06-11T00:00:00Z'),
        episode('undated', '无日期的网关改造', null, null)
      ]
    })
  })

  it('keeps the Episodes whose mentioned time overlaps the range, before top_k', async () => {
    const ids = async (filter?: object, top_k = 10) => (await ok('/retrieve', { mode: 'episodic', query: '网关改造', namespace: 'history', top_k, ...(filter ? { filter } : {}) }))
      .recall_bundle.map((i: { id: string }) => i.id).sort()
    expect(await ids()).toEqual(['jan', 'jun', 'mar', 'undated'])
    // [Jan 20, Mar 1] touches January's last day and March's first: closed intervals overlap at their ends
    expect(await ids({ time_range: { start: '2025-01-20T00:00:00Z', end: '2025-03-01T00:00:00Z' } })).toEqual(['jan', 'mar'])
    expect(await ids({ time_range: { start: '2025-04-01T00:00:00Z' } })).toEqual(['jun'])
    expect(await ids({ time_range: { end: '2025-01-04T23:59:59Z' } })).toEqual([])
    expect(await ids({ time_range: { start: '2025-02-01T00:00:00Z' } }, 1)).toHaveLength(1)
    const answer = await ok('/retrieve', { mode: 'episodic', query: '网关改造', namespace: 'history', filter: { time_range: { start: '2025-03-10T08:00:00+08:00' } } })
    expect(answer.filter).toEqual({ time_range: { start: '2025-03-10T00:00:00.000Z' } })
    expect(answer.legs[0]).toMatchObject({ name: 'time_range', status: 'ok', hits: 2 })
  })
})

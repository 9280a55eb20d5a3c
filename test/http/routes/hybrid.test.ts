import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { UnexpectedResponseError } from '../../../src/providers/errors.js'
import { buildTestApp, type TestApp } from '../../helpers/build.js'

const docs = [
  { id: 'guide-cough', source: 'clinical/cough.md', text: '# 咳嗽诊疗指引\n\n本指引用于门诊咳嗽患者。\n\n## 慢性咳嗽\n\n咳嗽持续三周以上属于慢性咳嗽，应当进行胸部X线检查和肺功能检查。\n\n## 急性咳嗽\n\n急性咳嗽多由上呼吸道感染引起，一般无需抗生素。' },
  { id: 'policy-travel', source: 'finance/travel.md', text: '# 差旅报销办法\n\n依据财务〔2024〕17号文件制定。\n\n## 住宿标准\n\n一线城市住宿每晚不超过600元，其他城市不超过400元。' },
  { id: 'change-stream', source: 'engineering/stream.md', text: '# API 流式返回改造\n\n把 /chat/completions 接口改为流式返回。\n\n## 变更边界\n\n鉴权中间件保持不变，只改响应层和测试。' },
  { id: 'note-en', source: 'notes/en.md', text: '# Release notes\n\nThe Kafka consumer was migrated to Redis Streams in version 2.3.' }
]

let t: TestApp
beforeAll(async () => {
  t = await buildTestApp()
  const r = await t.app.inject({ method: 'POST', url: '/ingest/documents', payload: { documents: docs } })
  expect(r.statusCode).toBe(200)
})
afterAll(async () => t.close())

const retrieve = async (body: Record<string, unknown>) => {
  const r = await t.app.inject({ method: 'POST', url: '/retrieve', payload: { mode: 'hybrid', ...body } })
  expect(r.statusCode, r.body).toBe(200)
  return r.json()
}

describe('hybrid retrieval over HTTP', () => {
  it('reports what an ingest wrote', async () => {
    const list = (await t.app.inject({ method: 'GET', url: '/documents' })).json()
    expect(list.total).toBe(4)
    expect(list.documents.map((d: { id: string }) => d.id)).toEqual(['change-stream', 'guide-cough', 'note-en', 'policy-travel'])
    expect(list.documents.find((d: { id: string }) => d.id === 'guide-cough')).toEqual({ id: 'guide-cough', title: '咳嗽诊疗指引', source: 'clinical/cough.md', chunks: 3 })
    expect(list.chunks).toBe(3 + 2 + 2 + 1)
  })

  it('finds the chronic-cough chunk first for a Chinese question, found by both legs, and explains it', async () => {
    const body = await retrieve({ query: '咳嗽三周以上要做什么检查', top_k: 3, fusion: 'rrf' })
    const top = body.recall_bundle[0]
    expect(top.id).toBe('guide-cough#1')
    expect(top.source).toBe('clinical/cough.md')
    expect(top.mode).toBe('hybrid')
    expect(top.text).toContain('胸部X线检查')
    const m = top.metadata
    expect(m).toMatchObject({ rank: 1, score_kind: 'rrf', doc_id: 'guide-cough', chunk_index: 1, title: '咳嗽诊疗指引' })
    expect(m.legs.vector.rank).toBeGreaterThanOrEqual(1)
    expect(m.legs.lexical.rank).toBeGreaterThanOrEqual(1)
    // The contributions are 1/(k + rank) for the ranks the item reports, and the score is their sum.
    expect(m.rrf.k).toBe(60)
    expect(m.rrf.contributions.vector).toBeCloseTo(1 / (60 + m.legs.vector.rank), 6)
    expect(m.rrf.contributions.lexical).toBeCloseTo(1 / (60 + m.legs.lexical.rank), 6)
    expect(top.score).toBeCloseTo(m.rrf.contributions.vector + m.rrf.contributions.lexical, 5)
    expect(body.recall_bundle.map((i: { metadata: { rank: number } }) => i.metadata.rank)).toEqual([1, 2, 3])
    expect(body.legs.map((l: { name: string }) => l.name)).toEqual(['embedding', 'vector', 'lexical'])
    expect(typeof body.took_ms).toBe('number')
    expect(body.cached).toBe(false)
  })

  it('finds a document by its number in mixed text and an English question', async () => {
    expect((await retrieve({ query: '财务〔2024〕17号 住宿标准' })).recall_bundle[0].metadata.doc_id).toBe('policy-travel')
    expect((await retrieve({ query: 'Which version moved Kafka to Redis?' })).recall_bundle[0].metadata.doc_id).toBe('note-en')
  })

  it('GET takes the same question and the hybrid options', async () => {
    const r = await t.app.inject({ method: 'GET', url: `/retrieve?mode=hybrid&q=${encodeURIComponent('流式返回的变更边界')}&top_k=2&legs=lexical&rrf_k=10&window=5` })
    expect(r.statusCode).toBe(200)
    const body = r.json()
    expect(body.recall_bundle).toHaveLength(2)
    expect(body.recall_bundle[0].id).toBe('change-stream#1')
    expect(body.recall_bundle[0].metadata.legs.vector).toBeUndefined()
    expect(body.recall_bundle[0].score).toBeCloseTo(1 / 11, 6)
    expect(body.legs.map((l: { name: string; status: string }) => `${l.name}:${l.status}`)).toEqual(['embedding:skipped', 'vector:skipped', 'lexical:ok'])
  })

  it('weights change the fused score', async () => {
    const body = await retrieve({ query: '住宿标准', legs: ['vector'], weights: { vector: 2 }, top_k: 1 })
    expect(body.recall_bundle[0].score).toBeCloseTo(2 / 61, 6)
  })

  it('gives the same order for the same request', async () => {
    const a = await retrieve({ query: '检查', top_k: 8 })
    const b = await retrieve({ query: '检查', top_k: 8 })
    expect(b.recall_bundle.map((i: { id: string }) => i.id)).toEqual(a.recall_bundle.map((i: { id: string }) => i.id))
  })

  it('re-ingesting an id replaces its chunks; deleting removes it from both legs', async () => {
    const v2 = { id: 'note-en', source: 'notes/en.md', text: '# Release notes\n\nNothing about queues any more.' }
    const r = await t.app.inject({ method: 'POST', url: '/ingest/documents', payload: { documents: [v2] } })
    expect(r.json()).toMatchObject({ documents: 1, chunks: 1, replaced: 1 })
    const lexical = await retrieve({ query: 'Kafka', legs: ['lexical'] })
    expect(lexical.recall_bundle).toEqual([])

    const del = await t.app.inject({ method: 'DELETE', url: '/documents/note-en' })
    expect(del.statusCode).toBe(200)
    expect((await t.app.inject({ method: 'DELETE', url: '/documents/note-en' })).statusCode).toBe(404)
    const after = await retrieve({ query: 'Release notes queues', top_k: 20 })
    expect(after.recall_bundle.some((i: { metadata: { doc_id: string } }) => i.metadata.doc_id === 'note-en')).toBe(false)
    // Restore for the other tests.
    await t.app.inject({ method: 'POST', url: '/ingest/documents', payload: { documents: [docs[3]] } })
  })

  it('rejects malformed ingest bodies naming the field and the document, writing nothing', async () => {
    const cases: [unknown, string][] = [
      [{ documents: [{ id: 'a', text: '' }] }, 'body/documents/0/text'],
      [{ documents: [{ text: 'x' }] }, 'id'],
      [{ documents: [{ id: 'bad#id', text: 'x' }] }, 'body/documents/0/id'],
      [{ documents: [] }, 'body/documents'],
      [{ docs: [] }, 'documents'],
      [{ documents: [{ id: 'ok', text: 'x' }, { id: 'ok', text: 'y' }] }, 'documents[1].id: "ok" appears twice'],
      [{ documents: [{ id: 'ok', text: 'fine' }, { id: 'blank', text: '   ' }] }, 'documents[1].text (id "blank")']
    ]
    for (const [payload, message] of cases) {
      const r = await t.app.inject({ method: 'POST', url: '/ingest/documents', payload: payload as object })
      expect(r.statusCode, JSON.stringify(payload)).toBe(400)
      expect(r.json().message).toContain(message)
    }
    expect((await t.app.inject({ method: 'GET', url: '/documents' })).json().total).toBe(4)
  })

  it('POST /analyze shows the analyzer tokens', async () => {
    const r = await t.app.inject({ method: 'POST', url: '/analyze', payload: { text: 'API 流式返回' } })
    expect(r.json()).toEqual({ tokens: ['api', '流式', '式返', '返回'] })
  })
})

describe('degraded hybrid answers and failed ingests', () => {
  let broken: TestApp
  let failEmbedding = false
  beforeAll(async () => {
    broken = await buildTestApp({}, (p) => ({
      ...p,
      embedder: new Proxy(p.embedder, {
        get(target, key, receiver) {
          if ((key === 'embedQueries' || key === 'embedPassages') && failEmbedding) {
            return async () => { throw new UnexpectedResponseError('embedder', 'model answered garbage') }
          }
          const value = Reflect.get(target, key, receiver)
          return typeof value === 'function' ? value.bind(target) : value
        }
      })
    }))
    await broken.app.inject({ method: 'POST', url: '/ingest/documents', payload: { documents: docs } })
  })
  afterAll(async () => broken.close())

  it('keeps the lexical leg\'s results when the vector leg fails, and says why', async () => {
    failEmbedding = true
    try {
      const r = await broken.app.inject({ method: 'POST', url: '/retrieve', payload: { mode: 'hybrid', query: '慢性咳嗽 检查' } })
      expect(r.statusCode).toBe(200)
      const body = r.json()
      expect(body.recall_bundle[0].id).toBe('guide-cough#1')
      const byName = Object.fromEntries(body.legs.map((l: { name: string }) => [l.name, l]))
      expect(byName.embedding.status).toBe('error')
      expect(byName.embedding.reason).toContain('model answered garbage')
      expect(byName.vector.status).toBe('skipped')
      expect(byName.lexical.status).toBe('ok')
    } finally {
      failEmbedding = false
    }
  })

  it('answers 503 naming the failure when the only requested leg fails', async () => {
    failEmbedding = true
    try {
      const r = await broken.app.inject({ method: 'POST', url: '/retrieve', payload: { mode: 'hybrid', query: '咳嗽', legs: ['vector'] } })
      expect(r.statusCode).toBe(503)
      expect(r.json().message).toContain('embedding')
    } finally {
      failEmbedding = false
    }
  })

  it('a failed ingest leaves the previous state fully usable', async () => {
    failEmbedding = true
    try {
      const r = await broken.app.inject({ method: 'POST', url: '/ingest/documents', payload: { documents: [{ id: 'guide-cough', text: '# 新版本\n\n完全不同的内容。' }, { id: 'new-doc', text: '新文档' }] } })
      expect(r.statusCode).toBe(503)
      expect(r.json().message).toContain('embedder')
    } finally {
      failEmbedding = false
    }
    const list = (await broken.app.inject({ method: 'GET', url: '/documents' })).json()
    expect(list.total).toBe(4)
    const body = (await broken.app.inject({ method: 'POST', url: '/retrieve', payload: { mode: 'hybrid', query: '慢性咳嗽' } })).json()
    expect(body.recall_bundle[0].id).toBe('guide-cough#1')
  })
})

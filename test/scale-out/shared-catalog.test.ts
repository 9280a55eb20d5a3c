import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/build.js'
import { comparableHybrid, runQdrantUrl, sharedQdrantEnv, useTwoReplicas } from '../helpers/two-replicas.js'

const qdrantUrl = runQdrantUrl('the shared document catalog tests')

// Replicas as app instances over one real Qdrant (and the run's Redis for the shared versions), each with
// its own empty DATA_DIR: whatever one lists, filters or returns about documents, the others must too.
describe.skipIf(!qdrantUrl)('a document catalog shared through Qdrant', () => {
  const env = sharedQdrantEnv('sc', qdrantUrl)
  // names of this run only: other files share the run's Redis, where each namespace has its generations
  const namespace = `sc-a-${randomBytes(3).toString('hex')}`
  const otherNamespace = `sc-b-${randomBytes(3).toString('hex')}`
  const documents = [
    { id: 'guide', title: '咳嗽指引', source: 'clinical/guide.md', text: '# 咳嗽指引\n\n咳嗽三周以上应做胸片检查。\n\n## 用药\n\n儿童慎用左氧氟沙星。', metadata: { lang: 'zh', year: 2024 } },
    { id: 'faq', source: 'clinical/faq.md', text: '# 常见问题\n\n夜间咳嗽加重怎么办。', metadata: { lang: 'zh', year: 2019 } },
    { id: 'travel', source: 'finance/travel.md', text: '# 差旅\n\n一线城市住宿标准每晚六百元。', metadata: { lang: 'zh', year: 2024 } }
  ]
  let a: TestApp
  let b: TestApp
  useTwoReplicas(env, (pair) => ({ a, b } = pair))

  const list = async (t: TestApp) => (await t.app.inject({ method: 'GET', url: `/documents?namespace=${namespace}` })).json()
  const ask = (t: TestApp, payload: object) => comparableHybrid(t, namespace, payload)
  const questions = [
    { query: '咳嗽三周以上做什么检查' },
    { query: '左氧氟沙星', legs: ['lexical'] },
    { query: '咳嗽', filter: { source_prefix: 'clinical/' } },
    { query: '住宿标准', filter: { metadata: { year: { gte: 2020 } } } }
  ]

  it('documents ingested through A are listed, filtered and returned by B exactly as by A', async () => {
    expect((await list(b)).total).toBe(0) // B has read the (empty) namespace before A writes
    const r = await a.app.inject({ method: 'POST', url: '/ingest/documents', payload: { namespace, documents } })
    expect(r.statusCode, r.body).toBe(200)
    const fromA = await list(a)
    expect(fromA.documents.map((d: { id: string }) => d.id)).toEqual(['faq', 'guide', 'travel'])
    expect(fromA).toMatchObject({ total: 3, chunks: 4 })
    expect(await list(b)).toEqual({ ...fromA, generation: expect.any(Number) })
    for (const q of questions) expect(await ask(b, q), q.query).toEqual(await ask(a, q))
    // the lexical leg of B has A's chunks too (its own index, re-synced from the shared store)
    expect((await ask(b, questions[1]!)).recall_bundle.map((i: { id: string }) => i.id)).toEqual(['guide#1'])
  })

  it('a document deleted and one replaced through B are gone and replaced on A', async () => {
    expect((await b.app.inject({ method: 'DELETE', url: `/documents/faq?namespace=${namespace}` })).statusCode).toBe(200)
    const replaced = await b.app.inject({ method: 'POST', url: '/ingest/documents', payload: { namespace, documents: [{ ...documents[2], text: '# 差旅\n\n二线城市住宿标准每晚四百元。' }] } })
    expect(replaced.json()).toMatchObject({ documents: 1, chunks: 1, replaced: 1 })
    const fromA = await list(a)
    expect(fromA.documents.map((d: { id: string }) => d.id)).toEqual(['guide', 'travel'])
    expect(await list(b)).toEqual(fromA)
    const travel = await ask(a, { query: '住宿标准', legs: ['lexical'] })
    expect(travel.recall_bundle).toHaveLength(1)
    expect(travel.recall_bundle[0].text).toContain('二线城市住宿标准每晚四百元。')
    for (const q of questions) expect(await ask(a, q), q.query).toEqual(await ask(b, q))
  })

  it('a replica started afterwards with an empty DATA_DIR answers as the others, namespaces included', async () => {
    const c = await buildTestApp(env)
    try {
      expect(await list(c)).toEqual({ ...(await list(a)), generation: expect.any(Number) })
      for (const q of questions) expect(await ask(c, q), q.query).toEqual(await ask(a, q))
      const namespaces = async (t: TestApp) => (await t.app.inject({ method: 'GET', url: '/namespaces' })).json()
      expect(await namespaces(c)).toEqual(await namespaces(a))
    } finally {
      await c.close()
    }
  })

  it('a namespace deleted through B is empty on A, and a namespace only A wrote is listed by B', async () => {
    const other = await a.app.inject({ method: 'POST', url: '/ingest/documents', payload: { namespace: otherNamespace, documents: [documents[0]] } })
    expect(other.statusCode).toBe(200)
    const names = async (t: TestApp) => (await t.app.inject({ method: 'GET', url: '/namespaces' })).json().namespaces.map((n: { namespace: string }) => n.namespace)
    expect(await names(b)).toEqual([namespace, otherNamespace])
    const deleted = await b.app.inject({ method: 'DELETE', url: `/namespaces/${namespace}` })
    expect(deleted.statusCode, deleted.body).toBe(200)
    expect((await list(a)).total).toBe(0)
    expect(await names(a)).toEqual([otherNamespace])
  })
})

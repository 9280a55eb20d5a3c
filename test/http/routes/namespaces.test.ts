/**
 * Two tenants share one recall: the same ids in both, every mode, every route; neither sees, counts or
 * changes the other's content; a namespace is listed with its counts and deleted wholly; reads of an unknown
 * namespace answer empty and create nothing; a write in one namespace invalidates no cached answer of another.
 * All of it on each backend: the embedded stores with the in-process cache, and Neo4j with Redis (a server
 * of each started for this file, so that the namespace listing is this file's alone).
 */
import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startNeo4j } from '../../../scripts/neo4j/server.js'
import { buildTestApp, type TestApp } from '../../helpers/build.js'
import { startRedis } from '../../helpers/redis-server.js'

/** The same ids in both tenants, with different content: an answer shows whose content it holds. */
const corpus = (tenant: string, topic: string) => ({
  namespace: tenant,
  documents: [
    { id: 'guide', title: `${topic}指引`, source: `${tenant}/guide.md`, text: `# ${topic}指引\n\n${topic}的处理流程由值班负责人确认。` },
    { id: 'faq', source: `${tenant}/faq.md`, text: `# 常见问题\n\n${topic}常见问题的答复。` }
  ]
})
const graph = (tenant: string, name: string) => ({
  namespace: tenant,
  entities: [{ id: 'owner', name, type: 'person' }, { id: 'team', name: `${name}的团队`, type: 'team' }],
  relations: [{ source: 'owner', target: 'team', type: '属于' }]
})
const memory = (tenant: string, summary: string) => ({
  namespace: tenant,
  entities: [{ id: 'N1', name: '网关' }],
  episodes: [{
    id: 'E1', name: `${tenant} 的改造`, summary, mentioned_time_start: '2025-03-01T00:00:00Z', mentioned_time_end: '2025-03-02T00:00:00Z',
    entities: [{ id: 'N1', description: '改造对象' }]
  }]
})

let t: TestApp
const post = async (url: string, payload: object) => {
  const r = await t.app.inject({ method: 'POST', url, payload })
  expect(r.statusCode, r.body).toBe(200)
  return r.json()
}
const retrieve = (payload: Record<string, unknown>) => post('/retrieve', { top_k: 10, ...payload })

interface Backend {
  name: string
  /** Starts what the backend needs; resolves with the environment that selects it and a stop. */
  start(): Promise<{ env: Record<string, string>; stop(): Promise<void> }>
}
const backends: Backend[] = [
  { name: 'embedded stores, in-process cache', start: async () => ({ env: {}, stop: async () => {} }) },
  {
    name: 'Neo4j and Redis',
    start: async () => {
      const neo4j = await startNeo4j()
      const redis = await startRedis()
      return {
        env: { GRAPH_BACKEND: 'neo4j', NEO4J_URI: neo4j.uri, REDIS_URL: redis.url },
        stop: async () => { await redis.stop(); await neo4j.stop() }
      }
    }
  }
]

describe.each(backends)('two tenants in one recall: $name', (backend) => {
  let stopBackend: () => Promise<void> = async () => {}
  beforeAll(async () => {
    const started = await backend.start()
    stopBackend = started.stop
    // the counts below are the imported graphs'; what documents derive is counted in test/corpus/derived-graph.test.ts
    t = await buildTestApp({ CACHE_TTL_SECONDS: '300', DERIVED_GRAPH: 'false', ...started.env })
    await post('/ingest/documents', corpus('tenant-a', '咳嗽'))
    await post('/ingest/documents', corpus('tenant-b', '报销'))
    await post('/ingest/graph', graph('tenant-a', '张三'))
    await post('/ingest/graph', graph('tenant-b', '李四'))
    await post('/ingest/episodes', memory('tenant-a', '问诊网关改为流式返回，鉴权保持不变。'))
    await post('/ingest/episodes', memory('tenant-b', '报销系统迁移到新的审批流。'))
  })
  afterAll(async () => {
    await t.close()
    await stopBackend()
  })

  it('hybrid: each namespace answers from its own chunks only, though the ids are the same', async () => {
    for (const [tenant, topic, other] of [['tenant-a', '咳嗽', '报销'], ['tenant-b', '报销', '咳嗽']] as const) {
      const answer = await retrieve({ mode: 'hybrid', query: `${topic}的处理流程`, namespace: tenant })
      expect(answer.namespace).toBe(tenant)
      expect(answer.recall_bundle.map((i: { id: string }) => i.id).sort()).toEqual(['faq#0', 'guide#0'])
      for (const item of answer.recall_bundle) {
        expect(item.source.startsWith(`${tenant}/`)).toBe(true)
        expect(item.text).not.toContain(other)
      }
      // a question only the other tenant's text answers finds nothing lexically here
      const across = await retrieve({ mode: 'hybrid', query: other, namespace: tenant, legs: ['lexical'] })
      expect(across.recall_bundle).toEqual([])
    }
  })

  it('graphrag: an entity is found by its name in its own namespace only', async () => {
    const a = await retrieve({ mode: 'graphrag', query: '张三在哪个团队', namespace: 'tenant-a' })
    expect(a.recall_bundle.map((i: { id: string; text: string }) => [i.id, i.text.split('\n')[0]])).toEqual([
      ['owner', '张三 [person]'], ['team', '张三的团队 [team]']
    ])
    const b = await retrieve({ mode: 'graphrag', query: '张三在哪个团队', namespace: 'tenant-b' })
    expect(b.recall_bundle.every((i: { text: string }) => !i.text.includes('张三'))).toBe(true)
  })

  it('episodic: each memory space returns its own Episode', async () => {
    for (const [tenant, query, summary] of [['tenant-a', '网关流式返回改造', '问诊网关'], ['tenant-b', '网关的审批流迁移', '报销系统']] as const) {
      const answer = await retrieve({ mode: 'episodic', query, namespace: tenant })
      expect(answer.recall_bundle.map((i: { id: string }) => i.id)).toEqual(['E1'])
      expect(answer.recall_bundle[0].text).toContain(summary)
    }
  })

  it('lists each namespace with its own counts; the default namespace holds nothing here', async () => {
    const r = await t.app.inject({ method: 'GET', url: '/namespaces' })
    expect(r.statusCode).toBe(200)
    expect(r.json()).toEqual({
      namespaces: [
        { namespace: 'tenant-a', documents: 2, chunks: 2, entities: 2, relations: 1, episodes: 1, images: 0 },
        { namespace: 'tenant-b', documents: 2, chunks: 2, entities: 2, relations: 1, episodes: 1, images: 0 }
      ]
    })
    const docs = await t.app.inject({ method: 'GET', url: '/documents?namespace=tenant-b' })
    expect(docs.json()).toMatchObject({ namespace: 'tenant-b', total: 2, chunks: 2 })
    expect((await t.app.inject({ method: 'GET', url: '/documents' })).json()).toMatchObject({ namespace: 'default', total: 0 })
  })

  it('a delete names its namespace: the same id elsewhere stays, and is a 404 where it is not', async () => {
    await post('/ingest/documents', { namespace: 'tenant-c', documents: [{ id: 'guide', text: '# 临时\n\n临时文档。' }] })
    const other = await t.app.inject({ method: 'DELETE', url: '/documents/guide?namespace=tenant-d' })
    expect(other.statusCode).toBe(404)
    expect(other.json().message).toBe('no document of namespace "tenant-d" has id "guide"')
    expect((await t.app.inject({ method: 'DELETE', url: '/documents/guide?namespace=tenant-c' })).statusCode).toBe(200)
    expect((await t.app.inject({ method: 'GET', url: '/documents?namespace=tenant-a' })).json().total).toBe(2)
    // tenant-c's last document went: its lexical index folder went with it
    expect(await readdir(join(t.dataDir, 'bm25', 'namespaces')).catch(() => [])).not.toContain('tenant-c')
    expect((await t.app.inject({ method: 'DELETE', url: '/entities/owner?namespace=tenant-c' })).statusCode).toBe(404)
    expect((await t.app.inject({ method: 'DELETE', url: '/episodes/E1?namespace=tenant-c' })).statusCode).toBe(404)
  })

  it('an unknown namespace answers every mode with an empty bundle and skipped legs, and nothing is created', async () => {
    const hybrid = await retrieve({ mode: 'hybrid', query: '咳嗽', namespace: 'nobody' })
    expect(hybrid.recall_bundle).toEqual([])
    expect(hybrid.legs.map((l: { name: string; status: string; reason: string }) => [l.name, l.status, l.reason])).toEqual([
      ['embedding', 'skipped', 'namespace "nobody" is empty'], ['vector', 'skipped', 'namespace "nobody" is empty'],
      ['lexical', 'skipped', 'namespace "nobody" is empty']
    ])
    const graphrag = await retrieve({ mode: 'graphrag', query: '张三', namespace: 'nobody' })
    expect(graphrag.legs).toEqual([expect.objectContaining({ name: 'graph', status: 'skipped', reason: 'the knowledge graph of namespace "nobody" is empty' })])
    const episodic = await retrieve({ mode: 'episodic', query: '网关', namespace: 'nobody' })
    expect(episodic.recall_bundle).toEqual([])
    expect(episodic.legs.at(-1)).toMatchObject({ name: 'graph', status: 'skipped', reason: 'namespace "nobody" holds no Episodes' })
    expect((await t.app.inject({ method: 'GET', url: '/namespaces' })).json().namespaces.map((n: { namespace: string }) => n.namespace))
      .toEqual(['tenant-a', 'tenant-b'])
    for (const folder of [['vectors', 'namespaces'], ['bm25', 'namespaces'], ['graph', 'namespaces'], ['episodic', 'namespaces']]) {
      expect(await readdir(join(t.dataDir, ...folder)).catch(() => []), folder.join('/')).not.toContain('nobody')
    }
  })

  it('compare: the top-level namespace applies to every arm; an arm may name its own', async () => {
    const r = await t.app.inject({
      method: 'POST', url: '/retrieve/compare',
      payload: { query: '咳嗽的处理流程', namespace: 'tenant-a', arms: [{ mode: 'hybrid' }, { mode: 'hybrid', namespace: 'tenant-b' }] }
    })
    expect(r.statusCode, r.body).toBe(200)
    const [a, b] = r.json().arms
    expect(a.response.namespace).toBe('tenant-a')
    expect(b.response.namespace).toBe('tenant-b')
    expect(a.response.recall_bundle.every((i: { source: string }) => i.source.startsWith('tenant-a/'))).toBe(true)
    expect(b.response.recall_bundle.every((i: { source: string }) => i.source.startsWith('tenant-b/'))).toBe(true)
    const get = await t.app.inject({ method: 'GET', url: `/retrieve/compare?q=${encodeURIComponent('张三')}&modes=hybrid,graphrag&namespace=tenant-a` })
    expect(get.json().arms.map((arm: { response: { namespace: string } }) => arm.response.namespace)).toEqual(['tenant-a', 'tenant-a'])
  })

  it('a write in one namespace invalidates no cached answer of another', async () => {
    const ask = (mode: string, namespace: string, query: string) =>
      t.app.inject({ method: 'POST', url: '/retrieve', payload: { mode, query, namespace } })
    // questions no earlier test asked, so the first answer of each is computed
    const questions = [['hybrid', '报销常见问题有哪些'], ['graphrag', '李四是谁'], ['episodic', '审批流迁移到哪里']] as const
    for (const [mode, query] of questions) {
      expect((await ask(mode, 'tenant-b', query)).headers['x-cache'], mode).toBe('miss')
      expect((await ask(mode, 'tenant-b', query)).headers['x-cache'], mode).toBe('hit')
    }
    // a write of each kind into tenant-a
    await post('/ingest/documents', { namespace: 'tenant-a', documents: [{ id: 'new', text: '# 新\n\n新的文档。' }] })
    await post('/ingest/graph', { namespace: 'tenant-a', entities: [{ id: 'new', name: '王五' }] })
    await post('/ingest/episodes', memory('tenant-a', '问诊网关又改了一次。'))
    for (const [mode, query] of questions) expect((await ask(mode, 'tenant-b', query)).headers['x-cache'], mode).toBe('hit')
    // a write into tenant-b does invalidate tenant-b's answers
    await post('/ingest/documents', { namespace: 'tenant-b', documents: [{ id: 'new', text: '# 新\n\n新的文档。' }] })
    await post('/ingest/graph', { namespace: 'tenant-b', entities: [{ id: 'new', name: '赵六' }] })
    await post('/ingest/episodes', memory('tenant-b', '报销系统又迁移了一次。'))
    for (const [mode, query] of questions) expect((await ask(mode, 'tenant-b', query)).headers['x-cache'], mode).toBe('miss')
  })

  it('DELETE /namespaces removes one wholly from every store and its cached answers, and nothing of another', async () => {
    const cached = () => t.app.inject({ method: 'POST', url: '/retrieve', payload: { mode: 'hybrid', query: '咳嗽', namespace: 'tenant-a' } })
    await cached()
    expect((await cached()).headers['x-cache']).toBe('hit')
    const r = await t.app.inject({ method: 'DELETE', url: '/namespaces/tenant-a' })
    expect(r.statusCode, r.body).toBe(200)
    expect(r.json(), r.body).toEqual({ deleted: 'tenant-a', removed: { namespace: 'tenant-a', documents: 3, chunks: 3, entities: 3, relations: 1, episodes: 1, images: 0 }, generation: expect.any(Number) })
    const after = await cached()
    expect(after.headers['x-cache']).toBe('miss')
    expect(after.json().recall_bundle).toEqual([])
    expect((await retrieve({ mode: 'graphrag', query: '张三', namespace: 'tenant-a' })).recall_bundle).toEqual([])
    expect((await retrieve({ mode: 'episodic', query: '网关', namespace: 'tenant-a' })).recall_bundle).toEqual([])
    expect((await t.app.inject({ method: 'GET', url: '/namespaces' })).json().namespaces).toEqual([
      { namespace: 'tenant-b', documents: 3, chunks: 3, entities: 3, relations: 1, episodes: 1, images: 0 }
    ])
    for (const folder of [['vectors', 'namespaces'], ['bm25', 'namespaces'], ['graph', 'namespaces'], ['episodic', 'namespaces']]) {
      expect(await readdir(join(t.dataDir, ...folder)).catch(() => []), folder.join('/')).not.toContain('tenant-a')
    }
    expect((await retrieve({ mode: 'hybrid', query: '报销的处理流程', namespace: 'tenant-b' })).recall_bundle.length).toBeGreaterThan(0)
    const again = await t.app.inject({ method: 'DELETE', url: '/namespaces/tenant-a' })
    expect(again.statusCode).toBe(404)
    expect(again.json().message).toBe('namespace "tenant-a" holds nothing')
  })

  it('a malformed namespace is a 400 naming the field, wherever it is given', async () => {
    const cases: Array<[string, string, object | undefined, string]> = [
      ['GET', '/retrieve?mode=hybrid&q=x&namespace=Tenant', undefined, 'querystring/namespace must match pattern'],
      ['POST', '/retrieve', { mode: 'hybrid', query: 'x', namespace: '-x' }, 'body/namespace must match pattern'],
      ['POST', '/ingest/documents', { namespace: 'a b', documents: [{ id: 'd', text: 't' }] }, 'body/namespace must match pattern'],
      ['POST', '/ingest/graph', { namespace: 'x'.repeat(64), entities: [] }, 'body/namespace must match pattern'],
      ['POST', '/ingest/episodes', { namespace: 'ä', episodes: [] }, 'body/namespace must match pattern'],
      ['GET', '/documents?namespace=A', undefined, 'querystring/namespace must match pattern'],
      ['DELETE', '/namespaces/Tenant_A', undefined, 'params/namespace must match pattern'],
      ['POST', '/retrieve/compare', { query: 'x', arms: [{ mode: 'hybrid', namespace: 'B' }, { mode: 'graphrag' }] }, 'body/arms/0/namespace must match pattern']
    ]
    for (const [method, url, payload, message] of cases) {
      const r = await t.app.inject({ method: method as 'GET', url, ...(payload ? { payload } : {}) })
      expect(r.statusCode, url).toBe(400)
      expect(r.json().message, url).toContain(message)
    }
  })
})

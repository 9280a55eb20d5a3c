/**
 * Index status and rebuild over the real Qdrant (vectors and the lexical leg in the chunk points), Neo4j and Redis,
 * two replicas (issue 41, item 3): what one replica wrote, the other reports alike; lexical entries removed from the
 * points behind the service's back are `pending` on both, a rebuild through one replica restores them for both; an
 * LLM extractor that timed out leaves the derived graph `failed` with its reason on both.
 */
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { ENTITY_NAME_COLLECTION } from '../../src/kernel/entity-names.js'
import { pointIdOf } from '../../src/providers/vector-store/qdrant-point-ids.js'
import type { TestApp } from '../helpers/build.js'
import { completion, startChatServer } from '../helpers/chat-server.js'
import { runQdrantUrl, sharedQdrantEnv, startTwoReplicas, type TwoReplicas } from '../helpers/two-replicas.js'

const qdrantUrl = runQdrantUrl('the index status tests on Qdrant, Neo4j and Redis')

const TEXT = '# 借阅规则\n\n借阅系统由读者服务部负责维护，馆长张明批准了新的续借规则。\n\n## 续借\n\n续借须在到期前三天通过借阅系统申请，逾期不予续借。'

type Status = Record<string, { state: string; reason?: string; chunks?: { indexed: number; expected: number }; items?: { derived: number; expected: number } }>

describe.skipIf(!qdrantUrl)('index status on Qdrant, Neo4j and Redis, two replicas', () => {
  let server: Awaited<ReturnType<typeof startChatServer>>
  let pair: TwoReplicas
  let a: TestApp
  let b: TestApp
  /** Whether the server answers a text holding SLOW past the extractor's timeout. */
  let slow = true
  const ns = `status-${randomBytes(3).toString('hex')}`

  beforeAll(async () => {
    server = await startChatServer((request) => {
      const user = request.body.messages.find((m) => m.role === 'user')!.content
      return { body: completion('{"entities": [], "relations": []}'), ...(slow && user.includes('SLOW') ? { delayMs: 2000 } : {}) }
    })
    pair = await startTwoReplicas({
      ...sharedQdrantEnv('status', qdrantUrl), VECTOR_TIMEOUT_MS: '30000', GRAPH_BACKEND: 'neo4j', NEO4J_URI: inject('neo4jUri'), GRAPH_TIMEOUT_MS: '30000',
      DERIVED_EPISODES: 'true', ENTITY_VECTORS: 'true', LLM_EXTRACTION: 'true', LLM_URL: server.url, LLM_MODEL: 'test-model', LLM_RETRIES: '0', LLM_TIMEOUT_MS: '300'
    })
    ;({ a, b } = pair)
  }, 300_000)
  afterAll(async () => {
    await pair?.close()
    await server?.close()
  })

  async function statusOf(t: TestApp, id: string, minGeneration?: number) {
    const r = await t.app.inject({ method: 'GET', url: `/documents/${id}?namespace=${ns}${minGeneration ? `&min_generation=${minGeneration}` : ''}` })
    expect(r.statusCode, r.body).toBe(200)
    return (r.json() as { index_status: Status }).index_status
  }

  it('reports every channel done on both replicas after an ingest through one', async () => {
    const r = await a.app.inject({ method: 'POST', url: '/ingest/documents', payload: { namespace: ns, documents: [{ id: 'rules', text: TEXT }] } })
    expect(r.statusCode, r.body).toBe(200)
    const written = r.json() as { chunks: number; generation: number; derived: { entities: number; relations: number; blocked: number; episodes: number } }
    const graphItems = written.derived.entities + written.derived.relations - written.derived.blocked
    const expected: Status = {
      vectors: { state: 'done', chunks: { indexed: written.chunks, expected: written.chunks } },
      lexical: { state: 'done', chunks: { indexed: written.chunks, expected: written.chunks } },
      derived_graph: { state: 'done', items: { derived: graphItems, expected: graphItems } },
      derived_episodes: { state: 'done', items: { derived: written.derived.episodes, expected: written.derived.episodes } }
    }
    expect(await statusOf(a, 'rules')).toMatchObject(expected)
    expect(await statusOf(b, 'rules', written.generation)).toMatchObject(expected)
    // the entity names are embedded after the write answered: pending, then done, read alike on the other replica
    let names = (await statusOf(b, 'rules'))['entity_vectors']!
    for (const until = Date.now() + 60_000; names.state !== 'done' && Date.now() < until; names = (await statusOf(b, 'rules'))['entity_vectors']!) {
      expect(names.state).toBe('pending')
      await new Promise((resolve) => setTimeout(resolve, 500))
    }
    expect(names).toMatchObject({ state: 'done', items: { derived: expect.any(Number) } })
    expect(names.items!.derived).toBeGreaterThan(0)
    expect(names.items!.derived).toBe(names.items!.expected)
    expect((await statusOf(a, 'rules'))['entity_vectors']).toEqual(names)
  })

  it('sees the lexical leg removed from the points as pending on both replicas; a rebuild through one restores it for both', async () => {
    const collection = a.app.services.documents.get(ns)!.collection
    const chunkIds = [...a.app.services.documents.get(ns)!.storedChunks('rules').keys()]
    const points = chunkIds.map((id) => pointIdOf(id, ns))
    const removed = await fetch(`${qdrantUrl}/collections/${collection}/points/payload/delete?wait=true`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ keys: ['lex_len', 'lex_terms', 'lex_split', 'lex_aref'], points })
    })
    expect(removed.status, await removed.text()).toBe(200)
    for (const t of [a, b]) expect((await statusOf(t, 'rules'))['lexical']).toMatchObject({ state: 'pending', chunks: { indexed: 0, expected: chunkIds.length } })

    const r = await b.app.inject({ method: 'POST', url: '/documents/rules/rebuild', payload: { namespace: ns, channels: ['lexical'] } })
    expect(r.statusCode, r.body).toBe(200)
    const { generation } = r.json() as { generation: number }
    expect(r.json()).toMatchObject({ rebuilt: { lexical: { documents: 1, chunks: chunkIds.length } } })
    for (const t of [a, b]) expect((await statusOf(t, 'rules', generation))['lexical']).toEqual({ state: 'done', chunks: { indexed: chunkIds.length, expected: chunkIds.length } })
    const hits = await a.app.inject({ method: 'POST', url: '/retrieve', payload: { mode: 'hybrid', namespace: ns, query: '续借规则', legs: ['lexical'], min_generation: generation } })
    expect((hits.json() as { recall_bundle: Array<{ id: string }> }).recall_bundle.map((i) => i.id)).toEqual(expect.arrayContaining([chunkIds[0]]))
  })

  it('sees a name vector deleted from Qdrant as pending on both replicas; a rebuild of entity_vectors through one restores it for both', async () => {
    const collection = `${a.config.collectionPrefix}${ENTITY_NAME_COLLECTION}`
    const { entities } = await a.app.services.graph.derivedOf(ns, ['rules'])
    const names = new Set(entities.flatMap((e) => [e.name, ...e.aliases]).map((n) => n.trim()).filter((n) => n !== ''))
    const held: Array<{ id: string; text: string }> = []
    for await (const r of a.app.services.vectors.scroll(collection, ns)) held.push({ id: r.id, text: r.payload.text })
    const victim = held.find((r) => names.has(r.text))!
    await a.app.services.vectors.write(collection, ns, { deleteDocIds: [victim.id] })
    for (const t of [a, b]) expect((await statusOf(t, 'rules'))['entity_vectors']).toMatchObject({ state: 'pending', items: { derived: names.size - 1, expected: names.size } })

    const r = await b.app.inject({ method: 'POST', url: '/documents/rules/rebuild', payload: { namespace: ns, channels: ['entity_vectors'] } })
    expect(r.statusCode, r.body).toBe(200)
    expect((r.json() as { rebuilt: object }).rebuilt).toEqual({ entity_vectors: { documents: 1, items: names.size } })
    for (const t of [a, b]) expect((await statusOf(t, 'rules'))['entity_vectors']).toEqual({ state: 'done', items: { derived: names.size, expected: names.size } })
  })

  it('records an LLM extractor that timed out as failed with its reason, read alike on the other replica; a rebuild asks again', async () => {
    const r = await a.app.inject({ method: 'POST', url: '/ingest/documents', payload: { namespace: ns, documents: [{ id: 'slow', text: '# SLOW\n\n夜间告警由二线值班处理，SLOW。' }] } })
    expect(r.statusCode, r.body).toBe(200)
    const { chunks, generation } = r.json() as { chunks: number; generation: number }
    for (const t of [a, b]) {
      const s = (await statusOf(t, 'slow', generation))['derived_graph']!
      expect(s.state).toBe('failed')
      expect(s.reason).toContain(`LLM extraction failed for ${chunks} of ${chunks} chunk(s)`)
    }
    const summed = await b.app.inject({ method: 'GET', url: `/namespaces/${ns}` })
    expect(summed.statusCode, summed.body).toBe(200)
    expect((summed.json() as { index_status: Record<string, { documents: object }> }).index_status['derived_graph']!.documents).toEqual({ done: 1, pending: 0, failed: 1, off: 0 })
    // the model answers in time now: the rebuild asks it again
    const asked = server.requests.length
    slow = false
    const rebuilt = await b.app.inject({ method: 'POST', url: '/documents/slow/rebuild', payload: { namespace: ns, channels: ['derived_graph'] } })
    expect(rebuilt.statusCode, rebuilt.body).toBe(200)
    expect(server.requests.length).toBeGreaterThan(asked)
    const after = (rebuilt.json() as { generation?: number }).generation
    for (const t of [a, b]) expect((await statusOf(t, 'slow', after))['derived_graph']!.state).toBe('done')
  })
})

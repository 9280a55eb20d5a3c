/**
 * Each document's index status, and rebuilding one index (issue 41, item 3), on the embedded stores with the real model:
 * done after an ingest, `pending` once an index lost the document's entries behind the service's back, `done` again
 * after a rebuild of that channel; `failed` with its reason when the LLM extractor timed out, kept over a restart;
 * `off` where the service derives nothing. Expected counts come from the ingest's answer, not from the status code.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../../helpers/build.js'
import { completion, startChatServer } from '../../helpers/chat-server.js'
import type { Providers } from '../../../src/services.js'
import { ENTITY_NAME_COLLECTION } from '../../../src/kernel/entity-names.js'

const TEXT = '# 借阅规则\n\n借阅系统由读者服务部负责维护，馆长张明批准了新的续借规则。\n\n## 续借\n\n续借须在到期前三天通过借阅系统申请，逾期不予续借。'

type Status = Record<string, { state: string; reason?: string; chunks?: { indexed: number; expected: number }; items?: { derived: number; expected: number } }>

async function statusOf(t: TestApp, namespace: string, id: string) {
  const r = await t.app.inject({ method: 'GET', url: `/documents/${encodeURIComponent(id)}?namespace=${namespace}` })
  expect(r.statusCode, r.body).toBe(200)
  return r.json() as { id: string; chunks: number; index_status: Status }
}

async function ingest(t: TestApp, namespace: string, id: string, text = TEXT) {
  const r = await t.app.inject({ method: 'POST', url: '/ingest/documents', payload: { namespace, documents: [{ id, text }] } })
  expect(r.statusCode, r.body).toBe(200)
  return r.json() as { chunks: number; derived: { entities: number; relations: number; blocked: number; episodes: number } }
}

async function lexicalHits(t: TestApp, namespace: string, query: string) {
  const r = await t.app.inject({ method: 'POST', url: '/retrieve', payload: { mode: 'hybrid', namespace, query, legs: ['lexical'], top_k: 10 } })
  expect(r.statusCode, r.body).toBe(200)
  return (r.json() as { recall_bundle: Array<{ id: string }> }).recall_bundle.map((i) => i.id)
}

describe('index status and rebuild, embedded stores', () => {
  let t: TestApp
  const ns = 'status-a'
  beforeAll(async () => {
    // no entity names embedded in the background here: the embedding counts below are the rebuilds' alone
    t = await buildTestApp({ DERIVED_EPISODES: 'true', ENTITY_VECTORS: 'false' })
  })
  afterAll(async () => { await t?.close() })

  it('reports every channel done after an ingest, with the counts the ingest answered', async () => {
    const written = await ingest(t, ns, 'rules')
    const { chunks, index_status: s } = await statusOf(t, ns, 'rules')
    expect(chunks).toBe(written.chunks)
    expect(Object.keys(s)).toEqual(['vectors', 'lexical', 'derived_graph', 'derived_episodes', 'entity_vectors'])
    expect(s['entity_vectors']).toEqual({ state: 'off', reason: expect.stringContaining('ENTITY_VECTORS=false') })
    expect(s['vectors']).toEqual({ state: 'done', chunks: { indexed: written.chunks, expected: written.chunks } })
    expect(s['lexical']).toEqual({ state: 'done', chunks: { indexed: written.chunks, expected: written.chunks } })
    expect(written.derived.blocked).toBe(0)
    const graphItems = written.derived.entities + written.derived.relations
    expect(graphItems).toBeGreaterThan(0)
    expect(s['derived_graph']).toEqual({ state: 'done', items: { derived: graphItems, expected: graphItems } })
    expect(written.derived.episodes).toBeGreaterThan(0)
    expect(s['derived_episodes']).toEqual({ state: 'done', items: { derived: written.derived.episodes, expected: written.derived.episodes } })
  })

  it('sees lexical entries deleted behind its back as pending, and a rebuild of lexical alone finds the document again', async () => {
    const chunkIds = [...t.app.services.documents.get(ns)!.storedChunks('rules').keys()]
    expect(await lexicalHits(t, ns, '续借规则')).toEqual(expect.arrayContaining([chunkIds[0]]))
    const embedded = t.app.services.embedder.embedPassages
    let embeddedTexts = 0
    t.app.services.embedder.embedPassages = (texts) => { embeddedTexts += texts.length; return embedded.call(t.app.services.embedder, texts) }
    try {
      await t.app.services.documents.get(ns)!.lexical.write({ delete: chunkIds })
      const pending = (await statusOf(t, ns, 'rules')).index_status
      expect(pending['lexical']).toMatchObject({ state: 'pending', chunks: { indexed: 0, expected: chunkIds.length } })
      expect(pending['lexical']!.reason).toContain('rebuild "lexical"')
      expect(pending['vectors']!.state).toBe('done')

      const r = await t.app.inject({ method: 'POST', url: '/documents/rules/rebuild', payload: { namespace: ns, channels: ['lexical'] } })
      expect(r.statusCode, r.body).toBe(200)
      expect(r.json()).toMatchObject({ namespace: ns, id: 'rules', rebuilt: { lexical: { documents: 1, chunks: chunkIds.length } }, generation: expect.any(Number) })
      expect(Object.keys((r.json() as { rebuilt: object }).rebuilt)).toEqual(['lexical'])
      // no re-parse, no embedding: the stored vectors were written back
      expect(embeddedTexts).toBe(0)
      expect((await statusOf(t, ns, 'rules')).index_status['lexical']).toEqual({ state: 'done', chunks: { indexed: chunkIds.length, expected: chunkIds.length } })
      expect(await lexicalHits(t, ns, '续借规则')).toEqual(expect.arrayContaining([chunkIds[0]]))
    } finally {
      t.app.services.embedder.embedPassages = embedded
    }
  })

  it('sees derived graph items deleted behind its back as pending, and a rebuild of derived_graph restores them', async () => {
    const before = (await statusOf(t, ns, 'rules')).index_status['derived_graph']!
    const { entities } = await t.app.services.graph.derivedOf(ns, ['rules'])
    const victim = entities.find((e) => e.derived_from!.length === 1)!
    const { relations } = await t.app.services.graph.neighbourhood(ns, [victim.id])
    expect(await t.app.services.graph.deleteEntity(ns, victim.id)).toBe(true)
    const lost = 1 + relations.filter((r) => r.derived_from?.some((p) => p.doc_id === 'rules')).length
    const pending = (await statusOf(t, ns, 'rules')).index_status['derived_graph']!
    expect(pending).toMatchObject({ state: 'pending', items: { derived: before.items!.expected - lost, expected: before.items!.expected } })
    const r = await t.app.inject({ method: 'POST', url: '/documents/rules/rebuild', payload: { namespace: ns, channels: ['derived_graph'] } })
    expect(r.statusCode, r.body).toBe(200)
    expect(r.json()).toMatchObject({ rebuilt: { derived_graph: { documents: 1, items: before.items!.expected } } })
    expect((await statusOf(t, ns, 'rules')).index_status['derived_graph']).toEqual(before)
  })

  it('re-embeds only when vectors is named, and answers every channel named', async () => {
    const embedded = t.app.services.embedder.embedPassages
    let embeddedTexts = 0
    t.app.services.embedder.embedPassages = (texts) => { embeddedTexts += texts.length; return embedded.call(t.app.services.embedder, texts) }
    try {
      const r = await t.app.inject({ method: 'POST', url: '/documents/rules/rebuild', payload: { namespace: ns, channels: ['vectors', 'derived_episodes', 'vectors'] } })
      expect(r.statusCode, r.body).toBe(200)
      const { chunks } = await statusOf(t, ns, 'rules')
      expect((r.json() as { rebuilt: object }).rebuilt).toEqual({ vectors: { documents: 1, chunks }, derived_episodes: { documents: 1, items: expect.any(Number) } })
      expect(embeddedTexts).toBe(chunks)
    } finally {
      t.app.services.embedder.embedPassages = embedded
    }
  })

  it('refuses channels that are not channels (400 naming them) and unknown documents (404)', async () => {
    const bad = await t.app.inject({ method: 'POST', url: '/documents/rules/rebuild', payload: { namespace: ns, channels: ['lexical', 'vector', 'bm25'] } })
    expect(bad.statusCode).toBe(400)
    expect(bad.json().message).toContain('"vector", "bm25" are not channels')
    const empty = await t.app.inject({ method: 'POST', url: '/documents/rules/rebuild', payload: { namespace: ns, channels: [] } })
    expect(empty.statusCode).toBe(400)
    expect(empty.json().message).toContain('channels')
    const unknown = await t.app.inject({ method: 'POST', url: '/documents/nobody/rebuild', payload: { namespace: ns, channels: ['lexical'] } })
    expect(unknown.statusCode).toBe(404)
    expect(unknown.json().message).toContain('"nobody"')
    expect((await t.app.inject({ method: 'GET', url: `/documents/nobody?namespace=${ns}` })).statusCode).toBe(404)
  })

  it('lists statuses with status=true, and sums them per namespace', async () => {
    await ingest(t, ns, 'second', '# 值班说明\n\n夜间告警由二线值班处理。')
    const list = await t.app.inject({ method: 'GET', url: `/documents?namespace=${ns}&status=true` })
    expect(list.statusCode, list.body).toBe(200)
    const docs = (list.json() as { documents: Array<{ id: string; chunks: number; index_status: Status }> }).documents
    expect(docs.map((d) => [d.id, d.index_status['lexical']!.state])).toEqual([['rules', 'done'], ['second', 'done']])
    const plain = await t.app.inject({ method: 'GET', url: `/documents?namespace=${ns}` })
    expect((plain.json() as { documents: object[] }).documents[0]).not.toHaveProperty('index_status')
    const r = await t.app.inject({ method: 'GET', url: `/namespaces/${ns}` })
    expect(r.statusCode, r.body).toBe(200)
    const body = r.json() as { documents: number; chunks: number; index_status: Record<string, { documents: Record<string, number>; chunks?: { indexed: number; expected: number } }> }
    const chunks = docs.reduce((n, d) => n + d.chunks, 0)
    expect(body).toMatchObject({ namespace: ns, documents: 2, chunks })
    expect(body.index_status['lexical']).toEqual({ documents: { done: 2, pending: 0, failed: 0, off: 0 }, chunks: { indexed: chunks, expected: chunks } })
    expect(body.index_status['derived_graph']!.documents).toEqual({ done: 2, pending: 0, failed: 0, off: 0 })
    expect((await t.app.inject({ method: 'GET', url: '/namespaces/nothing-here' })).statusCode).toBe(404)
  })
})

describe('rebuilding the entity vectors of a document', () => {
  let t: TestApp
  const ns = 'status-names'
  const collection = () => `${t.config.collectionPrefix}${ENTITY_NAME_COLLECTION}`
  beforeAll(async () => {
    t = await buildTestApp({ ENTITY_VECTORS: 'true' })
  })
  afterAll(async () => { await t?.close() })

  /** The distinct names and aliases of the entities derived from the document, read from the graph. */
  async function namesOf(id: string): Promise<Set<string>> {
    const { entities } = await t.app.services.graph.derivedOf(ns, [id])
    return new Set(entities.filter((e) => e.derived_from?.some((p) => p.doc_id === id)).flatMap((e) => [e.name, ...e.aliases]).map((n) => n.trim()).filter((n) => n !== ''))
  }

  it('sees a name vector deleted behind its back as pending; a rebuild embeds that name alone and answers the count', async () => {
    await ingest(t, ns, 'rules')
    await t.app.services.writePath.entityNamesIdle()
    const names = await namesOf('rules')
    expect(names.size).toBeGreaterThan(0)
    expect((await statusOf(t, ns, 'rules')).index_status['entity_vectors']).toEqual({ state: 'done', items: { derived: names.size, expected: names.size } })

    const held: Array<{ id: string; text: string }> = []
    for await (const r of t.app.services.vectors.scroll(collection(), ns)) held.push({ id: r.id, text: r.payload.text })
    const victim = held.find((r) => names.has(r.text))!
    await t.app.services.vectors.write(collection(), ns, { deleteDocIds: [victim.id] })
    const pending = (await statusOf(t, ns, 'rules')).index_status['entity_vectors']!
    expect(pending).toMatchObject({ state: 'pending', items: { derived: names.size - 1, expected: names.size } })
    expect(pending.reason).toContain('rebuild "entity_vectors"')

    const embedded = t.app.services.embedder.embedPassages
    const texts: string[] = []
    t.app.services.embedder.embedPassages = (batch) => { texts.push(...batch); return embedded.call(t.app.services.embedder, batch) }
    try {
      const r = await t.app.inject({ method: 'POST', url: '/documents/rules/rebuild', payload: { namespace: ns, channels: ['entity_vectors'] } })
      expect(r.statusCode, r.body).toBe(200)
      expect((r.json() as { rebuilt: object }).rebuilt).toEqual({ entity_vectors: { documents: 1, items: names.size } })
      expect(texts).toEqual([victim.text])
    } finally {
      t.app.services.embedder.embedPassages = embedded
    }
    expect((await statusOf(t, ns, 'rules')).index_status['entity_vectors']).toEqual({ state: 'done', items: { derived: names.size, expected: names.size } })
  })

  it('answers 503 naming the cause when the names cannot be embedded, and the status says failed', async () => {
    const held: string[] = []
    for await (const r of t.app.services.vectors.scroll(collection(), ns)) held.push(r.id)
    await t.app.services.vectors.write(collection(), ns, { deleteDocIds: held })
    const embedded = t.app.services.embedder.embedPassages
    t.app.services.embedder.embedPassages = () => Promise.reject(new Error('the embedder is down (test)'))
    try {
      const r = await t.app.inject({ method: 'POST', url: '/documents/rules/rebuild', payload: { namespace: ns, channels: ['entity_vectors'] } })
      expect(r.statusCode, r.body).toBe(503)
      expect(r.json().message).toContain('the embedder is down (test)')
      const s = (await statusOf(t, ns, 'rules')).index_status['entity_vectors']!
      expect(s.state).toBe('failed')
      expect(s.reason).toContain('the embedder is down (test)')
    } finally {
      t.app.services.embedder.embedPassages = embedded
    }
    const again = await t.app.inject({ method: 'POST', url: '/documents/rules/rebuild', payload: { namespace: ns, channels: ['entity_vectors'] } })
    expect(again.statusCode, again.body).toBe(200)
    expect((await statusOf(t, ns, 'rules')).index_status['entity_vectors']!.state).toBe('done')
  })
})

describe('a document whose title changed but not its chunks', () => {
  let t: TestApp
  let gate: Promise<void> | undefined
  const ns = 'status-title'
  beforeAll(async () => {
    t = await buildTestApp({ DERIVED_EPISODES: 'true' }, (p: Providers) => ({
      ...p,
      // the derived graph's write waits while the test holds the gate
      graph: new Proxy(p.graph, {
        get(target, key, receiver) {
          if (key === 'replaceDerived') return async (...args: Parameters<typeof target.replaceDerived>) => { await gate; return target.replaceDerived(...args) }
          const value = Reflect.get(target, key, receiver)
          return typeof value === 'function' ? value.bind(target) : value
        }
      })
    }))
  })
  afterAll(async () => { await t?.close() })

  it('is pending in the derived channels until they are derived again with the new title, then done', async () => {
    const write = (title: string) => t.app.inject({ method: 'POST', url: '/ingest/documents', payload: { namespace: ns, documents: [{ id: 'titled', title, text: TEXT }] } })
    expect((await write('借阅规则')).statusCode).toBe(200)
    const before = await statusOf(t, ns, 'titled')
    expect(before.index_status['derived_graph']!.state).toBe('done')
    const chunkTexts = [...t.app.services.documents.get(ns)!.storedChunks('titled').values()]

    let open!: () => void
    gate = new Promise((resolve) => { open = resolve })
    const rewriting = write('续借办法')
    try {
      // the documents part is recorded before the derived part runs
      let seen = await t.app.inject({ method: 'GET', url: `/documents/titled?namespace=${ns}` })
      for (const until = Date.now() + 60_000; (seen.json() as { title?: string }).title !== '续借办法' && Date.now() < until; seen = await t.app.inject({ method: 'GET', url: `/documents/titled?namespace=${ns}` })) {
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      const during = seen.json() as { title: string; index_status: Status }
      expect(during.title).toBe('续借办法')
      expect([...t.app.services.documents.get(ns)!.storedChunks('titled').values()]).toEqual(chunkTexts)
      expect(during.index_status['derived_graph']).toMatchObject({ state: 'pending', reason: expect.stringContaining('written again since its last derivation') })
    } finally {
      open()
      gate = undefined
    }
    expect((await rewriting).statusCode).toBe(200)
    const after = (await statusOf(t, ns, 'titled')).index_status
    expect(after['derived_graph']!.state).toBe('done')
    expect(after['derived_episodes']!.state).toBe('done')
  })
})

describe('a service that derives nothing', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await buildTestApp({ DERIVED_GRAPH: 'false', DERIVED_EPISODES: 'false' })
  })
  afterAll(async () => { await t?.close() })

  it('reports the derived channels off, saying which setting, and refuses to rebuild them', async () => {
    await ingest(t, 'off', 'rules')
    const s = (await statusOf(t, 'off', 'rules')).index_status
    expect(s['derived_graph']).toEqual({ state: 'off', reason: expect.stringContaining('DERIVED_GRAPH=false') })
    expect(s['derived_episodes']).toEqual({ state: 'off', reason: expect.stringContaining('DERIVED_EPISODES=false') })
    expect(s['lexical']!.state).toBe('done')
    const r = await t.app.inject({ method: 'POST', url: '/documents/rules/rebuild', payload: { namespace: 'off', channels: ['derived_graph'] } })
    expect(r.statusCode).toBe(400)
    expect(r.json().message).toContain('"derived_graph" is off')
  })

  it('refuses to rebuild the entity vectors where ENTITY_VECTORS=false, naming the setting', async () => {
    const names = await buildTestApp({ ENTITY_VECTORS: 'false' })
    try {
      await ingest(names, 'off-names', 'rules')
      const r = await names.app.inject({ method: 'POST', url: '/documents/rules/rebuild', payload: { namespace: 'off-names', channels: ['lexical', 'entity_vectors'] } })
      expect(r.statusCode).toBe(400)
      expect(r.json().message).toContain('"entity_vectors" is off')
      expect(r.json().message).toContain('ENTITY_VECTORS')
    } finally {
      await names.close()
    }
  })
})

describe('an LLM extractor that times out', () => {
  let server: Awaited<ReturnType<typeof startChatServer>>
  let dir: string
  let slow = true
  const env = () => ({ DATA_DIR: dir, LLM_EXTRACTION: 'true', LLM_URL: server.url, LLM_MODEL: 'test-model', LLM_RETRIES: '0', LLM_TIMEOUT_MS: '300' })
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'recall-status-llm-'))
    server = await startChatServer(() => ({ body: completion('{"entities": [], "relations": []}'), ...(slow ? { delayMs: 2000 } : {}) }))
  })
  afterAll(async () => {
    await server?.close()
    await rm(dir, { recursive: true, force: true })
  })

  it('records the derived graph failed with its reason, keeps it over a restart, and a rebuild asks again', async () => {
    const first = await buildTestApp(env())
    let chunks: number
    try {
      chunks = (await ingest(first, 'llm', 'rules')).chunks
      const s = (await statusOf(first, 'llm', 'rules')).index_status['derived_graph']!
      expect(s.state).toBe('failed')
      expect(s.reason).toContain(`LLM extraction failed for ${chunks} of ${chunks} chunk(s)`)
      expect(s.reason).toContain('LLM_TIMEOUT_MS')
    } finally {
      await first.close()
    }
    const again = await buildTestApp(env())
    try {
      expect((await statusOf(again, 'llm', 'rules')).index_status['derived_graph']).toMatchObject({ state: 'failed', reason: expect.stringContaining('LLM extraction failed') })
      slow = false
      const r = await again.app.inject({ method: 'POST', url: '/documents/rules/rebuild', payload: { namespace: 'llm', channels: ['derived_graph'] } })
      expect(r.statusCode, r.body).toBe(200)
      expect((await statusOf(again, 'llm', 'rules')).index_status['derived_graph']!.state).toBe('done')
    } finally {
      await again.close()
    }
  })
})

import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { decodeChunk, type ChunkRecord } from '../../src/kernel/chunk-payload.js'
import { createRedisClient } from '../../src/providers/cache/redis.js'
import { buildTestApp, type TestApp } from '../helpers/build.js'
import { comparableHybrid, runQdrantUrl, sharedQdrantEnv, useTwoReplicas } from '../helpers/two-replicas.js'

const qdrantUrl = runQdrantUrl('the write window tests')

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

// Replicas over one real Qdrant and the run's Redis, with the write window on (the default): A and B follow each
// other's writes, C catches up only on its reads. A follower must apply a write and a delete from the window, without
// reading them back from Qdrant (the catch-up's own count of documents by source, and the service's metric, say which),
// and then hold exactly what a read-back gives (every field of every chunk, in the same order) and answer exactly as
// the writer (the whole hybrid answer, both legs: ids, scores, texts, metadata). With the window's entry gone, a
// replica reads the document back and must answer the same. Expected values: the writer's answers and Qdrant's points.
describe.skipIf(!qdrantUrl)('applying other replicas\' writes from the write window', () => {
  const env = sharedQdrantEnv('ww', qdrantUrl)
  const namespace = `ww-${randomBytes(3).toString('hex')}`
  let a: TestApp
  let b: TestApp
  let c: TestApp
  const redis = createRedisClient(inject('redisUrl'), { commandTimeoutMs: 1000 })
  redis.on('error', () => undefined)
  useTwoReplicas(env, (pair) => ({ a, b } = pair))
  beforeAll(async () => { c = await buildTestApp({ ...env, CATALOG_FOLLOW_WRITES: 'false' }) })
  afterAll(async () => {
    await c?.close()
    redis.disconnect()
  })

  // titles, sources, metadata (keys not in alphabetical order, a list), headings (heading path, anchors) and pages
  // (a form feed between them), so that every field of a chunk crosses the window
  const doc = (id: string, body: string, extra: object = {}) =>
    ({ id, source: `clinical/${id}.md`, title: `《${id}》`, text: body, metadata: { year: 2024, dept: '内科', tags: ['z', 'a'] }, ...extra })
  const corpus = [
    doc('cough', '# 咳嗽\n\n咳嗽三周以上应做胸片检查。\n\n## 用药 {#drugs}\n\n儿童慎用左氧氟沙星。'),
    doc('fever', '发热超过三天应就医，体温超过三十九度可用退烧药。'),
    doc('travel', '一线城市住宿标准每晚六百元。', { source: 'finance/travel.md' }),
    doc('oncall', '夜间告警由二线值班处理，节假日由三线处理。', { source: 'ops/oncall.md', metadata: { year: 2023 } }),
    doc('manual', '第一页：设备开机前检查电源。\f第二页：设备关机后清洁滤网。', { metadata: { format: 'pdf', year: 2022 } })
  ]
  const questions = [
    { query: '咳嗽三周以上做什么检查' },
    { query: '左氧氟沙星', legs: ['lexical'] },
    { query: '发热就医', legs: ['lexical'] },
    { query: '儿童发热怎么办' },
    { query: '设备清洁滤网' },
    { query: '住宿标准', filter: { metadata: { year: { gte: 2024 } } } }
  ]

  const ingest = async (t: TestApp, documents: object[]) => {
    const r = await t.app.inject({ method: 'POST', url: '/ingest/documents', payload: { namespace, documents } })
    expect(r.statusCode, r.body).toBe(200)
  }
  const remove = async (t: TestApp, id: string) => {
    const r = await t.app.inject({ method: 'DELETE', url: `/documents/${id}?namespace=${namespace}` })
    expect(r.statusCode, r.body).toBe(200)
  }
  const list = async (t: TestApp) => {
    const { generation: _, ...rest } = (await t.app.inject({ method: 'GET', url: `/documents?namespace=${namespace}` })).json()
    return rest
  }
  const version = async () => (await a.app.services.generations.readState('hybrid', namespace)).version
  /** Waits until a following replica's catalog was read at the namespace's version now (it caught up on its own). */
  const caughtUp = async (t: TestApp) => {
    const wanted = await version()
    const deadline = Date.now() + 10_000
    while (t.app.services.sharedCatalog!.versionOf(namespace) !== wanted) {
      if (Date.now() > deadline) throw new Error(`no catch-up to ${wanted} on its own`)
      await sleep(10)
    }
  }
  const sources = (t: TestApp) => t.app.services.sharedCatalog!.lastSources.get(namespace)
  const metric = async (t: TestApp) => {
    const text = (await t.app.inject({ method: 'GET', url: '/metrics' })).body
    const count = (source: string) => Number(new RegExp(`^recall_catalog_catch_up_documents_total\\{source="${source}"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0)
    return { window: count('window'), store: count('store') }
  }
  /** The replica's chunks of these documents, and the same decoded from Qdrant's points (the read-back), as JSON in id order. */
  const heldAndStored = async (t: TestApp, docIds: string[]) => {
    const library = t.app.services.documents.get(namespace)!
    const held = docIds.flatMap((id) => [...library.storedChunks(id).keys()]).sort().map((id) => library.chunk(id)!)
    const stored: ChunkRecord[] = []
    for await (const { id, payload } of t.app.services.vectors.scroll(library.collection, namespace, docIds)) stored.push(decodeChunk(id, payload))
    return { held: JSON.stringify(held), stored: JSON.stringify(stored), count: stored.length }
  }
  const sameAnswers = async (reader: TestApp, writer: TestApp) => {
    expect(await list(reader)).toEqual(await list(writer))
    for (const q of questions) expect(await comparableHybrid(reader, namespace, q), q.query).toEqual(await comparableHybrid(writer, namespace, q))
  }

  beforeAll(async () => {
    await ingest(a, corpus)
    // first reads: each replica now holds the namespace and follows it (B) or catches up on its reads (C)
    for (const t of [b, c]) expect((await list(t)).total).toBe(corpus.length)
  })

  it('B applies A\'s write from the window, holds exactly what a read-back gives and answers as A', async () => {
    const before = await metric(b)
    // one replaced by a longer version (more chunks, another title and metadata), one added
    const written = [
      doc('fever', '# 发热\n\n发热超过三天应就医。\n\n## 儿童\n\n儿童发热先物理降温。\n\n## 老人\n\n老人发热注意补液。', { title: '发热（修订）', metadata: { year: 2025, review: true } }),
      doc('rash', '皮疹伴发热应排除麻疹，儿童需隔离观察。')
    ]
    await ingest(a, written)
    await caughtUp(b)
    expect(sources(b)).toEqual({ window: 2, store: 0 })
    const after = await metric(b)
    expect({ window: after.window - before.window, store: after.store - before.store }).toEqual({ window: 2, store: 0 })
    const { held, stored, count } = await heldAndStored(b, ['fever', 'rash'])
    expect(count).toBe(4)
    expect(held).toBe(stored)
    await sameAnswers(b, a)
  })

  it('A applies B\'s delete from the window and answers as B', async () => {
    await remove(b, 'travel')
    await caughtUp(a)
    expect(sources(a)).toEqual({ window: 1, store: 0 })
    expect(a.app.services.documents.get(namespace)!.has('travel')).toBe(false)
    expect((await heldAndStored(a, ['travel'])).count).toBe(0)
    await sameAnswers(a, b)
  })

  it('with the window\'s entry gone, C reads the document back and answers as A; with it kept, C applies it', async () => {
    // C's read catches it up on the writes above (fever, rash, travel), all kept in the window
    await sameAnswers(c, a)
    expect(sources(c)).toEqual({ window: 3, store: 0 })
    await ingest(a, [doc('oncall', '夜间告警由一线值班处理，节假日由二线处理。', { source: 'ops/oncall.md' })])
    await redis.del(`recall:generations:${namespace}:window`)
    await sameAnswers(c, a)
    expect(sources(c)).toEqual({ window: 0, store: 1 })
    expect((await heldAndStored(c, ['oncall'])).held).toBe((await heldAndStored(a, ['oncall'])).stored)

    await ingest(a, [doc('cough', '# 咳嗽\n\n咳嗽两周以上应做胸片检查。\n\n## 用药 {#drugs}\n\n儿童慎用左氧氟沙星。')])
    await remove(a, 'manual')
    await sameAnswers(c, a)
    expect(sources(c)).toEqual({ window: 2, store: 0 })
    const { held, stored } = await heldAndStored(c, ['cough', 'manual'])
    expect(held).toBe(stored)
  })
})

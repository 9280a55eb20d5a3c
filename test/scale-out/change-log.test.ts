import { randomBytes } from 'node:crypto'
import { afterAll, describe, expect, inject, it } from 'vitest'
import { createRedisClient } from '../../src/providers/cache/redis.js'
import type { TestApp } from '../helpers/build.js'
import { comparableHybrid, runQdrantUrl, sharedQdrantEnv, useTwoReplicas } from '../helpers/two-replicas.js'

const qdrantUrl = runQdrantUrl('the change log tests')

// Two replicas over one real Qdrant and the run's Redis. After writes through A, B catches up from the change log
// (re-reading only the documents it names) and must list, filter and find exactly what A does; with the log lost
// or its hash flushed it reads the whole namespace and must still be exact. Expected: A's answers and the documents.
// Both lexical backends: on Qdrant the leg is shared already; embedded, each replica's own index follows the log.
describe.skipIf(!qdrantUrl).each(['qdrant', 'embedded'])('catching up from the change log (LEXICAL_BACKEND=%s)', (lexical) => {
  // B catches up when a read finds a newer version (what these cases watch), not as A's writes land
  const env = { ...sharedQdrantEnv('cl', qdrantUrl), LEXICAL_BACKEND: lexical, CATALOG_FOLLOW_WRITES: 'false' }
  const namespace = `cl-${randomBytes(3).toString('hex')}`
  const doc = (id: string, source: string, body: string, year: number) =>
    ({ id, source, title: id, text: `# ${id}\n\n${body}`, metadata: { year } })
  const first = [
    doc('cough', 'clinical/cough.md', '咳嗽三周以上应做胸片检查。\n\n## 用药\n\n儿童慎用左氧氟沙星。', 2024),
    doc('fever', 'clinical/fever.md', '发热超过三天应就医，体温超过三十九度可用退烧药。', 2021),
    doc('travel', 'finance/travel.md', '一线城市住宿标准每晚六百元。', 2019),
    doc('oncall', 'ops/oncall.md', '夜间告警由二线值班处理，节假日由三线处理。', 2023)
  ]
  let a: TestApp
  let b: TestApp
  const redis = createRedisClient(inject('redisUrl'), { commandTimeoutMs: 1000 })
  redis.on('error', () => undefined)
  useTwoReplicas(env, (pair) => ({ a, b } = pair))
  afterAll(() => redis.disconnect())

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
  const ask = (t: TestApp, payload: object) => comparableHybrid(t, namespace, payload)
  const questions = [
    { query: '咳嗽三周以上做什么检查' },
    { query: '左氧氟沙星', legs: ['lexical'] },
    { query: '发热', filter: { source_prefix: 'clinical/' } },
    { query: '住宿标准', filter: { metadata: { year: { gte: 2020 } } } },
    { query: '夜间告警', legs: ['lexical'] }
  ]
  const sameAsA = async () => {
    const fromA = await list(a)
    expect(await list(b)).toEqual(fromA)
    for (const q of questions) expect(await ask(b, q), q.query).toEqual(await ask(a, q))
    return fromA
  }
  const lastCatchUp = () => b.app.services.sharedCatalog!.lastCatchUp.get(namespace)

  it('after writes through A, B re-reads only the documents they changed and answers as A', async () => {
    expect((await list(b)).total).toBe(0)
    await ingest(a, first)
    expect((await sameAsA()).documents.map((d: { id: string }) => d.id)).toEqual(['cough', 'fever', 'oncall', 'travel'])
    // one replaced (a longer version: more chunks), one deleted, one added, in three writes
    await ingest(a, [doc('fever', 'clinical/fever.md', '发热超过三天应就医。\n\n## 儿童\n\n儿童发热先物理降温。\n\n## 老人\n\n老人发热注意补液。', 2025)])
    await remove(a, 'travel')
    await ingest(a, [doc('travel-2', 'finance/travel-2.md', '二线城市住宿标准每晚四百元。', 2024)])
    const fromA = await sameAsA()
    expect(lastCatchUp()).toEqual({ kind: 'documents', documents: 3 })
    expect(fromA.documents.map((d: { id: string; chunks: number }) => [d.id, d.chunks])).toEqual([['cough', 2], ['fever', 3], ['oncall', 1], ['travel-2', 1]])
    expect((await ask(b, { query: '住宿标准', legs: ['lexical'] })).recall_bundle.map((i: { id: string }) => i.id)).toEqual(['travel-2#0'])
  })

  it('with its change log lost, B reads the whole namespace and still answers as A', async () => {
    // B has not read the first write when the log (which held it) is lost
    await ingest(a, [doc('oncall', 'ops/oncall.md', '夜间告警由一线值班处理。', 2026)])
    await redis.del(`recall:generations:${namespace}:changes`)
    await ingest(a, [doc('fever', 'clinical/fever.md', '发热超过三天应就医，儿童先物理降温。', 2026)])
    await sameAsA()
    expect(lastCatchUp()).toEqual({ kind: 'namespace' })
    // the log has started again: the next write is caught up from it
    await remove(a, 'cough')
    const fromA = await sameAsA()
    expect(lastCatchUp()).toEqual({ kind: 'documents', documents: 1 })
    expect(fromA.documents.map((d: { id: string }) => d.id)).toEqual(['fever', 'oncall', 'travel-2'])
  })

  it('with the namespace\'s generations flushed (a new epoch), B reads the whole namespace and still answers as A', async () => {
    await ingest(a, [doc('cough', 'clinical/cough.md', '咳嗽伴发热应查血常规。', 2026)])
    await redis.del(`recall:generations:${namespace}`, `recall:generations:${namespace}:changes`)
    await ingest(a, [doc('oncall', 'ops/oncall.md', '夜间告警由二线值班处理。', 2027)])
    const fromA = await sameAsA()
    expect(lastCatchUp()).toEqual({ kind: 'namespace' })
    expect(fromA.documents.map((d: { id: string }) => d.id)).toEqual(['cough', 'fever', 'oncall', 'travel-2'])
  })

  it('a namespace deleted through A is empty on B (a write of unknown documents: the whole namespace is read)', async () => {
    const r = await a.app.inject({ method: 'DELETE', url: `/namespaces/${namespace}` })
    expect(r.statusCode, r.body).toBe(200)
    expect(await list(b)).toEqual({ namespace, documents: [], total: 0, chunks: 0 })
    expect(lastCatchUp()).toEqual({ kind: 'namespace' })
  })
})

/**
 * The lexical leg on Qdrant answers from a local copy (docs/scale-out.md, "The local copy") of the postings while the copy is proven to hold
 * what the points hold, and ranks on Qdrant otherwise. Replica A writes the points; replica B is fed the same
 * changes as the shared catalog feeds it. Expected answers are the embedded index's over the same documents.
 */
import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { QdrantClient } from '@qdrant/js-client-rest'
import { afterAll, describe, expect, inject, it } from 'vitest'
import { EmbeddedLexicalIndex } from '../../src/providers/lexical-index/embedded.js'
import { QdrantLexicalIndexes } from '../../src/providers/lexical-index/qdrant.js'
import type { LexicalDocument } from '../../src/providers/lexical-index/port.js'
import { QDRANT_SKIP_LINE } from '../helpers/qdrant-server.js'

const url = inject('qdrantUrl')
if (!url) console.warn(`lexical-index.qdrant-local-copy: ${QDRANT_SKIP_LINE}`)

const first: LexicalDocument[] = [
  { id: 'd1', text: '咳嗽持续三周以上属于慢性咳嗽' },
  { id: 'd2', text: '急性咳嗽多由上呼吸道感染引起' },
  { id: 'd3', text: '差旅报销住宿标准每晚不超过六百元' }
]
const more: LexicalDocument[] = [
  { id: 'd4', text: '慢性咳嗽患者应当进行胸部X线检查和肺功能检查，慢性咳嗽的病因很多' },
  { id: 'd5', text: '咳嗽咳嗽咳嗽' }
]
const query = '慢性咳嗽'

describe.skipIf(!url)('the local copy of the lexical leg, on a real Qdrant', () => {
  const client = new QdrantClient({ url, checkCompatibility: false })
  const collections: string[] = []
  const dirs: string[] = []
  const closers: (() => Promise<void>)[] = []
  afterAll(async () => {
    for (const close of closers) await close()
    for (const c of collections) await client.deleteCollection(c).catch(() => undefined)
    for (const d of dirs) await rm(d, { recursive: true, force: true })
  })
  const tempDir = async () => {
    const dir = await mkdtemp(join(tmpdir(), 'recall-lex-copy-'))
    dirs.push(dir)
    return dir
  }
  const collectionFor = (name: string) => {
    const c = `lex_copy_${name}_${process.pid}`
    collections.push(c)
    return c
  }
  const exactOver = async (documents: LexicalDocument[]) => {
    const e = new EmbeddedLexicalIndex({ dir: await tempDir() })
    closers.push(() => e.close())
    await e.write({ upsert: documents })
    return e.search(query, 10)
  }
  /** Counts the requests an index set sends to Qdrant, by client method. */
  const countRequests = (indexes: QdrantLexicalIndexes) => {
    const requests: string[] = []
    for (const method of ['facet', 'count', 'scroll', 'query', 'queryBatch'] as const) {
      const original = indexes.client[method].bind(indexes.client) as (...args: unknown[]) => Promise<unknown>
      ;(indexes.client as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => { requests.push(method); return original(...args) }
    }
    return requests
  }

  it('several replicas: searched only while the catalog was read at the stamp now; on Qdrant otherwise', async () => {
    const collection = collectionFor('replicas')
    const writer = new QdrantLexicalIndexes({ url, timeoutMs: 30_000, collection, points: 'own' })
    closers.push(() => writer.close())
    const a = writer.get('default')
    await a.write({ upsert: first })
    // B's catalog: the stamp its copy was fed up to; the stamp: what the generation store says now
    let catalogAt = 'v1'
    let stamp = 'v1'
    const paths: string[] = []
    const readers = new QdrantLexicalIndexes({
      url, timeoutMs: 30_000, collection, points: 'vector-store', statisticsStamp: async () => stamp,
      localCopy: { dir: await tempDir(), complete: (_namespace, at) => at === catalogAt }, onSearch: (path) => paths.push(path)
    })
    closers.push(() => readers.close())
    const requests = countRequests(readers)
    const b = readers.get('default')
    // the catalog's first read of the namespace
    await b.sync(first)
    await b.localCopyIdle()
    expect(b.localCopyReady).toBe(true)
    const exactFirst = await exactOver(first)
    requests.splice(0)
    expect(await b.search(query, 10)).toEqual(exactFirst)
    expect(requests).toEqual([])

    // A's write landed but is not recorded yet: the stamp stands, B answers what was acknowledged
    await a.write({ upsert: more })
    expect(await b.search(query, 10)).toEqual(exactFirst)
    expect(requests).toEqual([])
    // recorded (the stamp moves) before B's catalog caught up: B ranks on Qdrant, exactly
    stamp = 'v2'
    const exactAfter = await exactOver([...first, ...more])
    expect(exactAfter).not.toEqual(exactFirst)
    expect(await b.search(query, 10)).toEqual(exactAfter)
    expect(requests.length).toBeGreaterThan(0)
    expect(paths).toEqual(['local-copy', 'local-copy', 'qdrant:copy-behind'])
    // the catalog caught up (it read A's documents and fed them to B's index)
    await b.write({ upsert: more })
    catalogAt = 'v2'
    await b.localCopyIdle()
    requests.splice(0)
    expect(await b.search(query, 10)).toEqual(exactAfter)
    expect(requests).toEqual([])

    // a delete through A, recorded; then caught up
    await a.write({ delete: ['d4'] })
    stamp = 'v3'
    const exactDeleted = await exactOver([...first, more[1]!])
    expect(await b.search(query, 10)).toEqual(exactDeleted)
    await b.write({ delete: ['d4'] })
    catalogAt = 'v3'
    await b.localCopyIdle()
    requests.splice(0)
    expect(await b.search(query, 10)).toEqual(exactDeleted)
    expect(requests).toEqual([])

    // no stamp can be read (Redis down): the copy is not trusted
    stamp = undefined as unknown as string
    expect(await b.search(query, 10)).toEqual(exactDeleted)
    expect(requests.length).toBeGreaterThan(0)
    expect(paths.slice(3)).toEqual(['local-copy', 'qdrant:copy-behind', 'local-copy', 'qdrant:copy-behind'])
  })

  it('one writer: a write is exact at once and then searched in the copy; a drop empties it; a sync rebuilds it', async () => {
    const collection = collectionFor('sole')
    const paths: string[] = []
    const indexes = new QdrantLexicalIndexes({
      url, timeoutMs: 30_000, collection, points: 'own', localCopy: { dir: await tempDir(), complete: 'sole-writer' }, onSearch: (path) => paths.push(path)
    })
    closers.push(() => indexes.close())
    const requests = countRequests(indexes)
    const index = indexes.get('default')
    // before any whole sync the copy does not know what Qdrant holds: searches rank on Qdrant
    await index.write({ upsert: first })
    expect(index.localCopyReady).toBe(false)
    requests.splice(0)
    expect(await index.search(query, 10)).toEqual(await exactOver(first))
    expect(requests.length).toBeGreaterThan(0)
    expect(paths).toEqual(['qdrant:copy-not-ready'])

    await index.sync(first)
    await index.localCopyIdle()
    await index.write({ upsert: more })
    // right after the write: exact, from the copy if it applied the change in time, else from Qdrant
    const exactAll = await exactOver([...first, ...more])
    expect(await index.search(query, 10)).toEqual(exactAll)
    await index.localCopyIdle()
    requests.splice(0)
    paths.splice(0)
    expect(await index.search(query, 10)).toEqual(exactAll)
    expect(requests).toEqual([])
    expect(paths).toEqual(['local-copy'])

    await indexes.drop('default')
    expect(index.localCopyReady).toBe(false)
    expect(await indexes.get('default').search(query, 10)).toEqual([])
    await indexes.get('default').sync(more)
    await indexes.get('default').localCopyIdle()
    requests.splice(0)
    expect(await indexes.get('default').search(query, 10)).toEqual(await exactOver(more))
    expect(requests).toEqual([])
  })

  it('a sync hands its copy the documents as given, the last of a repeated id, from a list or a one-pass iterable', async () => {
    const collection = collectionFor('given')
    const indexes = new QdrantLexicalIndexes({ url, timeoutMs: 30_000, collection, points: 'own', localCopy: { dir: await tempDir(), complete: 'sole-writer' } })
    closers.push(() => indexes.close())
    const index = indexes.get('default')
    const search = async () => { await index.localCopyIdle(); expect(index.localCopyReady).toBe(true); return index.search(query, 10) }
    // d1 given twice: the second text (no 慢性咳嗽) is what the namespace holds, as the points hold it
    const repeated = [...first, ...more, { id: 'd1', text: '报销单据需在三十日内提交' }]
    await index.sync(repeated)
    expect(await search()).toEqual(await exactOver([...first.slice(1), ...more, repeated.at(-1)!]))
    // a generator can be read once only: the copy still gets every document
    await index.sync((function* () { yield* first; yield* more })())
    expect(await search()).toEqual(await exactOver([...first, ...more]))
  })

  it('a search right after a large write waits for the copy to apply it, and answers from it', async () => {
    const collection = collectionFor('settle')
    const paths: string[] = []
    const indexes = new QdrantLexicalIndexes({
      url, timeoutMs: 30_000, collection, points: 'vector-store',
      // a bound no run reaches, so that the case says what waiting gives, not how fast this machine is
      localCopy: { dir: await tempDir(), complete: 'sole-writer', waitMs: 60_000 }, onSearch: (path) => paths.push(path)
    })
    closers.push(() => indexes.close())
    const requests = countRequests(indexes)
    const index = indexes.get('default')
    await index.sync(first)
    await index.localCopyIdle()
    // far more than the write's own 20 ms wait lets the worker apply: the copy is not ready when the write returns
    const large = Array.from({ length: 8_000 }, (_, i) => ({ id: `n${i}`, text: `第${i}号通知：夜间告警由二线值班处理，节假日由三线处理，编号${i * 7}。` }))
    await index.write({ upsert: [...large, ...more] })
    expect(index.localCopyReady).toBe(false)
    requests.splice(0)
    expect(await index.search(query, 10)).toEqual(await exactOver([...first, ...large, ...more]))
    expect(paths).toEqual(['local-copy'])
    expect(requests).toEqual([])
  })

  it('a copy that fails to apply a change is never searched, and the write itself succeeds', async () => {
    const collection = collectionFor('broken')
    const dir = await tempDir()
    const indexes = new QdrantLexicalIndexes({ url, timeoutMs: 30_000, collection, points: 'own', localCopy: { dir, complete: 'sole-writer' } })
    closers.push(() => indexes.close())
    const index = indexes.get('default')
    await index.sync(first)
    await index.localCopyIdle()
    expect(index.localCopyReady).toBe(true)
    // the copy's folder becomes unusable: a file where its next segment goes
    const folder = join(dir, 'chunks')
    await rm(folder, { recursive: true, force: true })
    await mkdir(dir, { recursive: true })
    await writeFile(folder, 'not a folder')
    await index.write({ upsert: more })
    expect(index.localCopyReady).toBe(false)
    const requests = countRequests(indexes)
    expect(await index.search(query, 10)).toEqual(await exactOver([...first, ...more]))
    expect(requests.length).toBeGreaterThan(0)
  })

  it('ranks exactly while Qdrant cannot facet or order by the length fields (their indexes not built yet)', async () => {
    const collection = collectionFor('noindex')
    const indexes = new QdrantLexicalIndexes({ url, timeoutMs: 30_000, collection, points: 'own' })
    closers.push(() => indexes.close())
    const index = indexes.get('default')
    await index.write({ upsert: [...first, ...more] })
    // what an upgraded collection looks like while the optimizer builds the new indexes: the facet and the
    // ordering are refused (400) for lack of them
    await client.deletePayloadIndex(collection, 'lex_len', { wait: true })
    await client.deletePayloadIndex(collection, 'lex_aref', { wait: true })
    await expect(client.facet(collection, { key: 'lex_len', exact: true })).rejects.toThrow()
    expect(await index.search(query, 10)).toEqual(await exactOver([...first, ...more]))
    await expect(index.write({ delete: ['d5'] })).resolves.toBeUndefined()
    expect(await index.search(query, 10)).toEqual(await exactOver([...first, more[0]!]))
  })
})

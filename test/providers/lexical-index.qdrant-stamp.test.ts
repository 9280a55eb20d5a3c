/**
 * The lexical leg on Qdrant (docs/scale-out.md, "Where N, df and avgdl live") reuses the statistics it read (N, total length, df, smallest reference
 * length) while the namespace's stamp stands, and reads them again when another writer moved it. Replica A
 * writes, replica B searches; the expected answers are the embedded index's over the same documents.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { QdrantClient } from '@qdrant/js-client-rest'
import { afterAll, describe, expect, inject, it } from 'vitest'
import { EmbeddedLexicalIndex } from '../../src/providers/lexical-index/embedded.js'
import { QdrantLexicalIndexes } from '../../src/providers/lexical-index/qdrant.js'
import { QDRANT_SKIP_LINE } from '../helpers/qdrant-server.js'

const url = inject('qdrantUrl')
if (!url) console.warn(`lexical-index.qdrant-stamp: ${QDRANT_SKIP_LINE}`)

describe.skipIf(!url)('statistics reused under a stamp, on a real Qdrant', () => {
  const collection = `lex_stamp_${process.pid}`
  const dirs: string[] = []
  const opened: EmbeddedLexicalIndex[] = []
  afterAll(async () => {
    for (const e of opened) await e.close()
    await new QdrantClient({ url, checkCompatibility: false }).deleteCollection(collection).catch(() => undefined)
    for (const d of dirs) await rm(d, { recursive: true, force: true })
  })
  const embeddedOver = async (documents: { id: string; text: string }[]) => {
    const dir = await mkdtemp(join(tmpdir(), 'recall-lex-stamp-'))
    dirs.push(dir)
    const e = new EmbeddedLexicalIndex({ dir })
    opened.push(e)
    await e.write({ upsert: documents })
    return e
  }

  it('answers from the statistics of its stamp until the stamp moves, then exactly as the embedded index', async () => {
    let stamp = 'v1'
    const requests: string[] = []
    const a = new QdrantLexicalIndexes({ url, timeoutMs: 30_000, collection, points: 'own' }).get('default')
    const b = new QdrantLexicalIndexes({ url, timeoutMs: 30_000, collection, points: 'own', statisticsStamp: async () => stamp })
    // count the requests B sends, by the client method they go through
    for (const method of ['facet', 'count', 'scroll', 'query', 'queryBatch'] as const) {
      const original = b.client[method].bind(b.client) as (...args: unknown[]) => Promise<unknown>
      ;(b.client as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => { requests.push(method); return original(...args) }
    }
    const first = [
      { id: 'd1', text: '咳嗽持续三周以上属于慢性咳嗽' },
      { id: 'd2', text: '急性咳嗽多由上呼吸道感染引起' },
      { id: 'd3', text: '差旅报销住宿标准每晚不超过六百元' }
    ]
    await a.write({ upsert: first })
    const onB = b.get('default')
    const query = '慢性咳嗽'
    const exactFirst = await (await embeddedOver(first)).search(query, 10)
    expect(await onB.search(query, 10)).toEqual(exactFirst)
    const cold = requests.splice(0).length
    expect(await onB.search(query, 10)).toEqual(exactFirst)
    const warm = requests.splice(0)
    // the stamp stood: only the candidates were asked for (the statistics were reused)
    expect(warm).toEqual(['query'])
    expect(cold).toBeGreaterThan(warm.length)

    // A writes documents that change N, df and the average length; B's stamp has not moved yet, so B still
    // scores with the statistics of v1 (what a replica does between a write landing and its record)
    const more = [
      { id: 'd4', text: '慢性咳嗽患者应当进行胸部X线检查和肺功能检查，慢性咳嗽的病因很多' },
      { id: 'd5', text: '咳嗽咳嗽咳嗽' }
    ]
    await a.write({ upsert: more })
    const exactAfter = await (await embeddedOver([...first, ...more])).search(query, 10)
    expect(exactAfter.map((h) => h.score)).not.toEqual(exactFirst.map((h) => h.score))
    const stale = await onB.search(query, 10)
    expect(stale).not.toEqual(exactAfter)
    // the stamp moves (A's write is recorded): B reads everything again and answers exactly
    stamp = 'v2'
    expect(await onB.search(query, 10)).toEqual(exactAfter)
    requests.splice(0)
    expect(await onB.search(query, 10)).toEqual(exactAfter)
    expect(requests).toEqual(['query'])

    // a stamp that cannot be read: nothing is reused, and the answer is still exact
    const c = new QdrantLexicalIndexes({ url, timeoutMs: 30_000, collection, points: 'own', statisticsStamp: async () => { throw new Error('redis down') } })
    expect(await c.get('default').search(query, 10)).toEqual(exactAfter)
  })
})

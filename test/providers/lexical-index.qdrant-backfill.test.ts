/**
 * The lexical part of an in-place upgrade (docs/scale-out-state.md, "Upgrading a collection in place"): a chunk collection written by a version without the lexical leg on Qdrant
 * (dense vectors only) is upgraded in place when the service opens it: the sparse vector is added to the
 * collection, `sync` writes the lexical leg of the points that lack it, and their dense vectors stay. Points
 * written with the first lexical leg (`lex` without `lexw`) are found exactly, from whole posting lists, until
 * `sync` writes their `lexw`.
 */
import { QdrantClient } from '@qdrant/js-client-rest'
import { afterAll, describe, expect, inject, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { WEIGHTED_VECTOR } from '../../src/providers/lexical-index/lexical-point.js'
import { lexicalLegOnQdrant } from '../../src/providers/lexical-index/qdrant-wiring.js'
import { QdrantVectorStore } from '../../src/providers/vector-store/qdrant.js'
import { QDRANT_SKIP_LINE } from '../helpers/qdrant-server.js'

const url = inject('qdrantUrl')
if (!url) console.warn(`lexical-index.qdrant-backfill: ${QDRANT_SKIP_LINE}`)

describe.skipIf(!url)('a collection written before the lexical leg on Qdrant', () => {
  const collection = `backfill_${process.pid}_chunks`
  const old = new QdrantVectorStore({ url, timeoutMs: 10_000 })
  afterAll(async () => { await old.dropCollection(collection) })

  it('gets its lexical leg at sync, keeping every dense vector', async () => {
    const unit = (i: number) => Float32Array.from({ length: 4 }, (_, d) => (d === i ? 1 : 0))
    const chunks = [
      { id: 'a#0', payload: { doc_id: 'a', text: '咳嗽三周以上要做胸片', chunk_index: 0, source: 'a.md' }, vector: unit(0) },
      { id: 'a#1', payload: { doc_id: 'a', text: '复查血常规', chunk_index: 1, source: 'a.md', title: '咳嗽' }, vector: unit(1) },
      { id: 'b#0', payload: { doc_id: 'b', text: '发热先测体温', chunk_index: 0, source: 'b.md' }, vector: unit(2) }
    ]
    await old.ensureCollection(collection, 4)
    await old.write(collection, 'default', { upsert: chunks })

    const leg = lexicalLegOnQdrant(loadConfig({ VECTOR_BACKEND: 'qdrant', QDRANT_URL: url }), collection)
    const upgraded = new QdrantVectorStore({ url, timeoutMs: 10_000, sparse: leg.sparse })
    await upgraded.ensureCollection(collection, 4)
    const index = leg.lexical.get('default')
    expect(await index.search('咳嗽', 10)).toEqual([]) // no point carries the leg yet
    // the library's sync: the chunks' lexical texts (a#1 after its document's title)
    await index.sync([{ id: 'a#0', text: chunks[0]!.payload.text }, { id: 'a#1', text: `咳嗽\n${chunks[1]!.payload.text}` }, { id: 'b#0', text: chunks[2]!.payload.text }])
    expect(index.size).toBe(3)
    expect((await index.search('咳嗽', 10)).map((h) => h.id).sort()).toEqual(['a#0', 'a#1'])
    expect((await index.search('体温', 10)).map((h) => h.id)).toEqual(['b#0'])
    for (const [i, c] of chunks.entries()) {
      const [hit] = await upgraded.search(collection, 'default', unit(i), 1)
      expect(hit).toMatchObject({ id: c.id, score: expect.closeTo(1, 5) })
      expect(Object.keys(hit!.payload).some((k) => k.startsWith('lex_'))).toBe(false)
    }
    // a second sync finds nothing left to write and changes no score
    const before = await index.search('咳嗽 体温', 10)
    await index.sync([])
    expect(await index.search('咳嗽 体温', 10)).toEqual(before)
  })

  it('finds points written without lexw exactly, and ranks them on the server once sync wrote it', async () => {
    const name = `${collection}_lexw`
    const leg = lexicalLegOnQdrant(loadConfig({ VECTOR_BACKEND: 'qdrant', QDRANT_URL: url }), name)
    const store = new QdrantVectorStore({ url, timeoutMs: 10_000, sparse: leg.sparse })
    try {
      const texts = ['咳嗽三周以上要做胸片', '咳嗽伴发热先测体温', '发热先测体温', '胸片正常也要复查']
      const records = texts.map((text, i) => ({ id: `c${i}#0`, payload: { doc_id: `c${i}`, text, chunk_index: 0, source: `c${i}.md` }, vector: Float32Array.of(1, i, 0, 0) }))
      await store.ensureCollection(name, 4)
      const index = leg.lexical.get('default')
      await index.sync([])
      await store.write(name, 'default', { upsert: records })
      // as the first lexical leg wrote them: no lexw, no lex_aref
      const client = new QdrantClient({ url, checkCompatibility: false })
      await client.deleteVectors(name, { filter: { must: [{ key: 'id', match: { value: 'c1#0' } }] }, vector: [WEIGHTED_VECTOR], wait: true })
      await client.deletePayload(name, { keys: ['lex_aref'], filter: { must: [{ key: 'id', match: { value: 'c1#0' } }] }, wait: true })
      index.recordRounds = true
      // BM25 by hand: N 4; 咳嗽 in c0 (len 9) and c1 (len 8), avgdl (9 + 8 + 5 + 7) / 4 = 7.25, df 2,
      // idf = ln((4 - 2 + 0.5)/(2 + 0.5) + 1) = ln 2; c1: 2.2 / (1.2 (0.25 + 0.75 * 8 / 7.25) + 1) * ln 2
      // = 2.2 / 2.293103 * 0.693147 = 0.6650, c0: 2.2 / (1.2 (0.25 + 0.75 * 9 / 7.25) + 1) * ln 2 = 2.2 / 2.417241 * 0.693147 = 0.6309
      const expected = [{ id: 'c1#0', score: 0.665 }, { id: 'c0#0', score: 0.6309 }]
      expect(await index.search('咳嗽', 10)).toEqual(expected)
      expect(index.rounds).toEqual([0]) // whole posting lists: c1 has no lexw for the server to rank it by
      await index.sync(texts.map((text, i) => ({ id: `c${i}#0`, text })))
      expect(await index.search('咳嗽', 10)).toEqual(expected)
      expect(index.rounds).toEqual([0, 1])
    } finally {
      await store.dropCollection(name)
    }
  })

  it('a point rewritten by the service while sync back-fills it keeps the service\'s lexical leg', async () => {
    const name = `${collection}_race`
    const leg = lexicalLegOnQdrant(loadConfig({ VECTOR_BACKEND: 'qdrant', QDRANT_URL: url }), name)
    const store = new QdrantVectorStore({ url, timeoutMs: 10_000, sparse: leg.sparse })
    try {
      const unit = (i: number) => Float32Array.from({ length: 4 }, (_, j) => (j === i ? 1 : 0))
      // written before the lexical leg existed: dense vectors only
      await old.ensureCollection(name, 4)
      await old.write(name, 'default', { upsert: [
        { id: 'e#0', payload: { doc_id: 'e', text: '旧文本说的是咳嗽', chunk_index: 0, source: 'e.md' }, vector: unit(0) },
        { id: 'f#0', payload: { doc_id: 'f', text: '发热先测体温', chunk_index: 0, source: 'f.md' }, vector: unit(1) }
      ] })
      const index = leg.lexical.get('default')
      // the catalog read before the rewrite: sync is handed the old text; the service's re-ingest of e#0 (both legs
      // in one upsert) lands just before the back-fill's write
      const batchUpdate = leg.lexical.writer.batchUpdate.bind(leg.lexical.writer)
      let rewritten = false
      leg.lexical.writer.batchUpdate = (async (...args: Parameters<typeof batchUpdate>) => {
        if (!rewritten) {
          rewritten = true
          await store.write(name, 'default', { deleteDocIds: ['e'], upsert: [{ id: 'e#0', payload: { doc_id: 'e', text: '新文本说的是告警', chunk_index: 0, source: 'e.md' }, vector: unit(0) }] })
        }
        return batchUpdate(...args)
      }) as typeof batchUpdate
      await index.sync([{ id: 'e#0', text: '旧文本说的是咳嗽' }, { id: 'f#0', text: '发热先测体温' }])
      expect(rewritten).toBe(true)
      expect((await index.search('告警', 10)).map((h) => h.id)).toEqual(['e#0'])
      expect(await index.search('咳嗽', 10)).toEqual([]) // only the old text had it
      expect((await index.search('体温', 10)).map((h) => h.id)).toEqual(['f#0'])
    } finally {
      await store.dropCollection(name)
    }
  })
})

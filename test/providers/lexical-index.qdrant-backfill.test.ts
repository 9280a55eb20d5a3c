/**
 * Issue 19, item 7 (the lexical part): a chunk collection written by a version without the lexical leg on Qdrant
 * (dense vectors only) is upgraded in place when the service opens it: the sparse vector is added to the
 * collection, `sync` writes the lexical leg of the points that lack it, and their dense vectors stay.
 */
import { afterAll, describe, expect, inject, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
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
})

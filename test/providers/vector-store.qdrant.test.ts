import { describe, expect, inject, it } from 'vitest'
import { QdrantVectorStore } from '../../src/providers/vector-store/qdrant.js'
import { pointIdOf, POINT_ID_NAMESPACE, uuidV5 } from '../../src/providers/vector-store/qdrant-point-ids.js'
import { describeVectorStoreContract } from '../contracts/vector-store.contract.js'
import { QDRANT_SKIP_LINE } from '../helpers/qdrant-server.js'

const url = inject('qdrantUrl')
if (!url) console.warn(`vector-store.qdrant: ${QDRANT_SKIP_LINE}`)

describe('Qdrant point ids', () => {
  it('uuidV5 matches known RFC values', () => {
    // Python: uuid.uuid5(uuid.NAMESPACE_DNS, 'python.org')
    expect(uuidV5('python.org', '6ba7b810-9dad-11d1-80b4-00c04fd430c8')).toBe('886313e1-3b8a-5372-9b90-0c9aee199e5d')
    // RFC 9562 appendix A.4: UUIDv5 of the name "www.example.com" in the DNS namespace
    expect(uuidV5('www.example.com', '6ba7b810-9dad-11d1-80b4-00c04fd430c8')).toBe('2ed6657d-e927-568b-95e1-2665a8aea6a2')
  })

  it('a point id is the UUIDv5 of our id under its namespace; default keeps the ids of a store without namespaces', () => {
    // the ids of points a version without namespaces wrote: UUIDv5 of the id under the project namespace
    expect(pointIdOf('guide-cough#3', 'default')).toBe(uuidV5('guide-cough#3', POINT_ID_NAMESPACE))
    expect(pointIdOf('guide-cough#3', 'tenant-a')).toBe(uuidV5('guide-cough#3', uuidV5('tenant-a', POINT_ID_NAMESPACE)))
    expect(pointIdOf('guide-cough#3', 'tenant-a')).not.toBe(pointIdOf('guide-cough#3', 'tenant-b'))
    expect(pointIdOf('guide-cough#3', 'default')).not.toBe(pointIdOf('guide-cough#4', 'default'))
    expect(pointIdOf('咳嗽#1', 'tenant-a')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
  })
})

describe.skipIf(!url)('QdrantVectorStore against a real Qdrant', () => {
  describeVectorStoreContract(
    'qdrant',
    () =>
      new QdrantVectorStore({
        url,
        ...(process.env.QDRANT_API_KEY ? { apiKey: process.env.QDRANT_API_KEY } : {}),
        timeoutMs: 10_000,
        // small pages so the contract's 600-record scroll crosses page boundaries
        batchSize: 64
      })
  )
})

describe.skipIf(!url)('QdrantVectorStore.rank in a process that did not write the points', () => {
  it('reads their ids once and ranks as the writer searches', async () => {
    const writer = new QdrantVectorStore({ url, timeoutMs: 10_000 })
    const reader = new QdrantVectorStore({ url, timeoutMs: 10_000 })
    const collection = `rank_reader_${process.pid}_${Date.now()}`
    try {
      await writer.ensureCollection(collection, 4)
      // cosines with q = (1,0,0,0) by hand: a#0 1, b#0 0.8, c#0 0.6, d#0 0
      const rows: [string, number[]][] = [['a#0', [1, 0, 0, 0]], ['b#0', [0.8, 0, 0, 0.6]], ['c#0', [0.6, 0.8, 0, 0]], ['d#0', [0, 0, 1, 0]]]
      await writer.write(collection, 'tenant-r', {
        upsert: rows.map(([id, v]) => ({ id, vector: Float32Array.from(v), payload: { doc_id: id.split('#')[0]!, text: `text ${id}` } }))
      })
      const q = Float32Array.of(1, 0, 0, 0)
      for (let i = 0; i < 2; i++) {
        const ranked = await reader.rank(collection, 'tenant-r', q, 3)
        expect(ranked.map((h) => [h.id, Number(h.score.toFixed(5))])).toEqual([['a#0', 1], ['b#0', 0.8], ['c#0', 0.6]])
      }
    } finally {
      await writer.dropCollection(collection)
      await writer.close()
      await reader.close()
    }
  })
})

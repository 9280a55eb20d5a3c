/**
 * The 40 ms stall (docs/operations.md, "Reliability"): asked for gzip, Qdrant compresses, and the compressed body leaves in a
 * second small TCP write that waits for the client's delayed ACK on a kept-alive connection. The stand-in
 * answers as Qdrant does (gzip when accepted, headers and body in separate writes, Nagle on); the store
 * must ask for uncompressed answers on every call. `bench/qdrant-stall.ts` measures the stall itself.
 */
import { QdrantClient } from '@qdrant/js-client-rest'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { QdrantVectorStore } from '../../src/providers/vector-store/qdrant.js'
import { loadQdrantOpenApi } from '../helpers/qdrant-openapi.js'
import { startFakeQdrant, type FakeQdrant } from '../helpers/qdrant-stand-in.js'
import { describeWith, QDRANT_OPENAPI } from '../helpers/reference-data.js'

const describe = describeWith(QDRANT_OPENAPI)

let fake: FakeQdrant
beforeAll(async () => {
  fake = await startFakeQdrant(loadQdrantOpenApi())
})
afterAll(async () => fake.close())

describe('Qdrant answers without compression', () => {
  it('the stand-in compresses for a client that accepts gzip, as Qdrant does (Node fetch asks for it by default)', async () => {
    fake.acceptEncodings.length = 0
    const plain = new QdrantClient({ url: fake.url, checkCompatibility: false })
    await plain.collectionExists('nothing')
    expect(fake.acceptEncodings).toHaveLength(1)
    expect(fake.acceptEncodings[0]).toMatch(/\bgzip\b/)
    // And the answer really is compressed on the wire.
    const raw = await fetch(`${fake.url}/collections/nothing/exists`, { headers: { 'accept-encoding': 'gzip' } })
    expect(raw.headers.get('content-encoding')).toBe('gzip')
    const identity = await fetch(`${fake.url}/collections/nothing/exists`, { headers: { 'accept-encoding': 'identity' } })
    expect(identity.headers.get('content-encoding')).toBeNull()
  })

  it('every call of the store, reads and writes, asks for an uncompressed answer', async () => {
    fake.acceptEncodings.length = 0
    const store = new QdrantVectorStore({ url: fake.url, timeoutMs: 5_000, writeTimeoutMs: 5_000 })
    await store.ensureCollection('enc', 3)
    await store.write('enc', 'default', { upsert: [{ id: 'a#0', vector: Float32Array.of(1, 0, 0), payload: { doc_id: 'a', text: 'x'.repeat(4000) } }] })
    await store.search('enc', 'default', Float32Array.of(1, 0, 0), 5)
    for await (const _ of store.scroll('enc', 'default')) { /* read every page */ }
    await store.count('enc', 'default')
    await store.health()
    await store.write('enc', 'default', { deleteDocIds: ['a'] })
    await store.dropCollection('enc')
    await store.close()
    expect(fake.acceptEncodings.length).toBeGreaterThanOrEqual(10)
    expect(fake.acceptEncodings.filter((e) => e !== 'identity')).toEqual([])
  })
})

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { BackendTimeoutError, BackendUnavailableError, UnexpectedResponseError } from '../../src/providers/errors.js'
import type { VectorPayload, VectorRecord } from '../../src/providers/vector-store/port.js'
import { pointIdOf, QdrantVectorStore } from '../../src/providers/vector-store/qdrant.js'
import { loadQdrantOpenApi, type QdrantOpenApiValidator, type RecordedRequest } from '../helpers/qdrant-openapi.js'
import { startFakeQdrant, type FakeQdrant } from '../helpers/qdrant-stand-in.js'

function rec(id: string, vector: number[], extra: Record<string, unknown> = {}): VectorRecord {
  return { id, vector: Float32Array.from(vector), payload: { doc_id: id.split('#')[0]!, text: `text ${id}`, ...extra } }
}

let validator: QdrantOpenApiValidator
beforeAll(() => {
  validator = loadQdrantOpenApi()
})

describe("Qdrant's OpenAPI validator", () => {
  const createCollection = (body: unknown): RecordedRequest => ({
    method: 'PUT',
    path: '/collections/docs',
    query: {},
    body
  })
  const upsert = (id: unknown): RecordedRequest => ({
    method: 'PUT',
    path: '/collections/docs/points',
    query: { wait: 'true' },
    body: { points: [{ id, vector: [0.1, 0.2], payload: { doc_id: 'doc' } }] }
  })

  it('accepts correct requests', () => {
    expect(validator.validate(createCollection({ vectors: { size: 512, distance: 'Cosine' } }))).toEqual([])
    expect(validator.validate(upsert(pointIdOf('doc#1')))).toEqual([])
    expect(validator.validate(upsert(7))).toEqual([])
  })

  it('rejects a collection body with size "x"', () => {
    const errors = validator.validate(createCollection({ vectors: { size: 'x', distance: 'Cosine' } }))
    expect(errors.length).toBeGreaterThan(0)
  })

  it('rejects a point id that is neither an unsigned integer nor a UUID, such as "doc#1"', () => {
    expect(validator.validate(upsert('doc#1')).length).toBeGreaterThan(0)
    expect(validator.validate(upsert(-3)).length).toBeGreaterThan(0)
  })

  it('rejects unknown routes, bad query parameters, unknown query parameters and an unknown distance', () => {
    expect(validator.validate({ method: 'POST', path: '/collections/docs/pointz', query: {}, body: {} })).not.toEqual([])
    expect(validator.validate({ ...upsert(1), query: { wait: 'maybe' } })).not.toEqual([])
    expect(validator.validate({ ...upsert(1), query: { wiat: 'true' } })).not.toEqual([])
    expect(validator.validate(createCollection({ vectors: { size: 4, distance: 'Cosinus' } }))).not.toEqual([])
  })

  it('treats a lone {nullable: true} alternative as null only, so a nullable filter still checks its shape', () => {
    const scroll = (filter: unknown): RecordedRequest => ({
      method: 'POST',
      path: '/collections/docs/points/scroll',
      query: {},
      body: { filter, limit: 10 }
    })
    expect(validator.validate(scroll(null))).toEqual([])
    expect(validator.validate(scroll({ must: [{ key: 'doc_id', match: { any: ['a'] } }] }))).toEqual([])
    expect(validator.validate(scroll('not a filter'))).not.toEqual([])
  })
})

describe('QdrantVectorStore requests validate against Qdrant OpenAPI document', () => {
  let fake: FakeQdrant
  beforeAll(async () => {
    fake = await startFakeQdrant(validator)
  })
  afterAll(async () => {
    await fake.close()
  })

  it('every request of every operation, sent by the real client, matches the document', async () => {
    const store = new QdrantVectorStore({ url: fake.url, timeoutMs: 5_000, batchSize: 2 })
    expect((await store.health()).ok).toBe(true)

    await store.ensureCollection('docs', 3)
    await store.ensureCollection('docs', 3)
    await expect(store.ensureCollection('docs', 4)).rejects.toThrow(/3 dimensions/)
    // another instance (another replica) learns the dimension from Qdrant itself
    const replica = new QdrantVectorStore({ url: fake.url, timeoutMs: 5_000 })
    await expect(replica.ensureCollection('docs', 4)).rejects.toThrow(/3 dimensions/)
    await replica.ensureCollection('docs', 3)

    await store.write('docs', {
      upsert: [
        rec('a#0', [1, 0, 0]),
        rec('a#1', [0, 1, 0]),
        rec('b#0', [0.6, 0.8, 0], { title: 'B' }),
        rec('c#0', [0, 0.8, 0.6]),
        rec('c#1', [0, 0.8, 0.6])
      ]
    })
    await store.write('docs', { deleteDocIds: ['a'], upsert: [rec('a#0', [0, 0, 1])] })
    await store.write('docs', { deleteDocIds: ['nobody'] })

    expect(await store.count('docs')).toBe(4)
    const hits = await store.search('docs', Float32Array.of(0, 1, 0), 2)
    // c#0 and c#1 tie at 0.8 (by hand), b#0 scores 0.8 too: ties by id ascending across the cut
    expect(hits.map((h) => h.id)).toEqual(['b#0', 'c#0'])
    expect(hits[0]!.score).toBeCloseTo(0.8, 6)
    expect(hits[0]!.payload).toEqual({ doc_id: 'b', text: 'text b#0', title: 'B' })

    const rows: { id: string; payload: VectorPayload }[] = []
    for await (const row of store.scroll('docs')) rows.push(row)
    // a#1 went with the delete of doc a; batchSize 2 makes the scroll take two pages
    expect(rows.map((r) => r.id)).toEqual(['a#0', 'b#0', 'c#0', 'c#1'])

    expect(await store.search('nowhere', Float32Array.of(1, 0, 0), 3)).toEqual([])
    expect(await store.count('nowhere')).toBe(0)
    const none: string[] = []
    for await (const row of store.scroll('nowhere')) none.push(row.id)
    expect(none).toEqual([])

    await store.dropCollection('docs')
    await store.dropCollection('docs')
    await store.close()

    const problems = fake.requests.flatMap((r) => validator.validate(r).map((e) => `${r.method} ${r.path}: ${e}`))
    expect(problems).toEqual([])
    expect(fake.responseErrors).toEqual([])
    const used = new Set(fake.requests.map((r) => validator.operationOf(r)))
    expect([...used].sort()).toEqual(
      [
        'GET /',
        'GET /collections/{collection_name}',
        'GET /collections/{collection_name}/exists',
        'PUT /collections/{collection_name}',
        'DELETE /collections/{collection_name}',
        'PUT /collections/{collection_name}/index',
        'PUT /collections/{collection_name}/points',
        'POST /collections/{collection_name}/points/delete',
        'POST /collections/{collection_name}/points/query',
        'POST /collections/{collection_name}/points/scroll',
        'POST /collections/{collection_name}/points/count'
      ].sort()
    )
  })

  it('sends what the issue asks for: UUIDv5 ids, our id in the payload, batches with wait, a doc_id index and filter', async () => {
    fake.requests.length = 0
    const store = new QdrantVectorStore({ url: fake.url, timeoutMs: 5_000, batchSize: 2 })
    await store.ensureCollection('shape', 3)
    await store.write('shape', {
      deleteDocIds: ['d'],
      upsert: [rec('d#0', [1, 0, 0]), rec('d#1', [0, 1, 0]), rec('d#2', [0, 0, 1])]
    })
    await store.search('shape', Float32Array.of(1, 0, 0), 2)
    await store.dropCollection('shape')

    const create = fake.requests.find((r) => r.method === 'PUT' && r.path === '/collections/shape')
    expect(create?.body).toEqual({ vectors: { size: 3, distance: 'Cosine' } })
    const index = fake.requests.find((r) => r.path.endsWith('/index'))
    expect(index?.body).toEqual({ field_name: 'doc_id', field_schema: 'keyword' })
    const upserts = fake.requests.filter((r) => r.method === 'PUT' && r.path.endsWith('/points'))
    expect(upserts.map((r) => (r.body as { points: unknown[] }).points.length)).toEqual([2, 1])
    for (const u of upserts) expect(u.query.wait).toBe('true')
    const first = (upserts[0]!.body as { points: { id: string; payload: Record<string, unknown> }[] }).points[0]!
    expect(first.id).toBe(pointIdOf('d#0'))
    expect(first.payload).toEqual({ doc_id: 'd', text: 'text d#0', id: 'd#0' })
    const del = fake.requests.find((r) => r.path.endsWith('/points/delete'))
    expect(del?.query.wait).toBe('true')
    expect(del?.body).toEqual({
      filter: {
        must: [{ key: 'doc_id', match: { any: ['d'] } }],
        must_not: [{ has_id: ['d#0', 'd#1', 'd#2'].map(pointIdOf) }]
      }
    })
    const query = fake.requests.find((r) => r.path.endsWith('/points/query'))
    expect(query?.body).toMatchObject({ query: [1, 0, 0], with_payload: true })
    expect((query?.body as { limit: number }).limit).toBeGreaterThanOrEqual(2)
    await store.close()
  })
})

describe('QdrantVectorStore error mapping, through the real client', () => {
  let fake: FakeQdrant
  beforeAll(async () => {
    fake = await startFakeQdrant(validator)
  })
  afterEach(() => {
    fake.stall = undefined
    fake.fail = undefined
  })
  afterAll(async () => {
    await fake.close()
  })

  it('a refused connection is BackendUnavailableError naming qdrant', async () => {
    const closed = await startFakeQdrant(validator)
    await closed.close()
    const store = new QdrantVectorStore({ url: closed.url, timeoutMs: 2_000 })
    const error = await store.count('docs').catch((e: unknown) => e)
    expect(error).toBeInstanceOf(BackendUnavailableError)
    expect((error as BackendUnavailableError).backend).toBe('vector-store:qdrant')
    const health = await store.health()
    expect(health).toMatchObject({ backend: 'vector-store:qdrant', ok: false })
  })

  it('an answer slower than timeoutMs is BackendTimeoutError', async () => {
    fake.stall = { pattern: /points\/query$/, ms: 1_500 }
    const store = new QdrantVectorStore({ url: fake.url, timeoutMs: 200 })
    await store.ensureCollection('slow', 2)
    const started = performance.now()
    const error = await store.search('slow', Float32Array.of(1, 0), 1).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(BackendTimeoutError)
    expect(performance.now() - started).toBeLessThan(1_400)
  })

  it('writes have their own timeout: a write slower than the read budget succeeds, a read that slow times out', async () => {
    const store = new QdrantVectorStore({ url: fake.url, timeoutMs: 200, writeTimeoutMs: 20_000 })
    await store.ensureCollection('patient', 2)
    fake.stall = { pattern: /\/points$/, ms: 800 }
    await store.write('patient', { upsert: [rec('p#0', [1, 0])] })
    expect(await store.count('patient')).toBe(1)
    fake.stall = { pattern: /points\/query$/, ms: 800 }
    const error = await store.search('patient', Float32Array.of(1, 0), 1).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(BackendTimeoutError)
    expect(error).toMatchObject({ backend: 'vector-store:qdrant' })
  })

  it('a write slower than its own timeout is BackendTimeoutError naming the store', async () => {
    const store = new QdrantVectorStore({ url: fake.url, timeoutMs: 5_000, writeTimeoutMs: 200 })
    await store.ensureCollection('hasty', 2)
    fake.stall = { pattern: /\/points$/, ms: 1_500 }
    const error = await store.write('hasty', { upsert: [rec('h#0', [1, 0])] }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(BackendTimeoutError)
    expect(error).toMatchObject({ backend: 'vector-store:qdrant' })
  })

  it('a 5xx answer is UnexpectedResponseError with the status', async () => {
    const store = new QdrantVectorStore({ url: fake.url, timeoutMs: 2_000 })
    await store.ensureCollection('broken', 2)
    fake.fail = /points$/
    const error = await store.write('broken', { upsert: [rec('x#0', [1, 0])] }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(UnexpectedResponseError)
    expect((error as Error).message).toMatch(/500/)
  })
})

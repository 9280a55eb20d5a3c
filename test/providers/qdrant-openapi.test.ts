import { afterAll, afterEach, beforeAll, expect, it } from 'vitest'
import { BackendTimeoutError, BackendUnavailableError, UnexpectedResponseError } from '../../src/providers/errors.js'
import type { VectorPayload, VectorRecord } from '../../src/providers/vector-store/port.js'
import { QdrantClient } from '@qdrant/js-client-rest'
import { qdrantFilter, QdrantVectorStore } from '../../src/providers/vector-store/qdrant.js'
import { POINT_ID_NAMESPACE, pointIdOf, uuidV5 } from '../../src/providers/vector-store/qdrant-point-ids.js'
import { loadQdrantOpenApi, type QdrantOpenApiValidator, type RecordedRequest } from '../helpers/qdrant-openapi.js'
import { startFakeQdrant, type FakeQdrant } from '../helpers/qdrant-stand-in.js'
import { describeWith, QDRANT_OPENAPI } from '../helpers/reference-data.js'

const describe = describeWith(QDRANT_OPENAPI)

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
    expect(validator.validate(upsert(pointIdOf('doc#1', 'default')))).toEqual([])
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

    await store.write('docs', 'default', {
      upsert: [
        rec('a#0', [1, 0, 0]),
        rec('a#1', [0, 1, 0]),
        rec('b#0', [0.6, 0.8, 0], { title: 'B' }),
        rec('c#0', [0, 0.8, 0.6]),
        rec('c#1', [0, 0.8, 0.6])
      ]
    })
    await store.write('docs', 'default', { deleteDocIds: ['a'], upsert: [rec('a#0', [0, 0, 1])] })
    await store.write('docs', 'default', { deleteDocIds: ['nobody'] })

    expect(await store.count('docs', 'default')).toBe(4)
    const hits = await store.search('docs', 'default', Float32Array.of(0, 1, 0), 2)
    // c#0 and c#1 tie at 0.8 (by hand), b#0 scores 0.8 too: ties by id ascending across the cut
    expect(hits.map((h) => h.id)).toEqual(['b#0', 'c#0'])
    expect(hits[0]!.score).toBeCloseTo(0.8, 6)
    expect(hits[0]!.payload).toEqual({ doc_id: 'b', text: 'text b#0', title: 'B' })

    // stored vectors by id, in batches of 2; an id without a point is left out
    const kept = await store.vectorsOf('docs', 'default', ['b#0', 'a#0', 'a#1'])
    expect([...kept.keys()].sort()).toEqual(['a#0', 'b#0'])
    expect(Array.from(kept.get('b#0')!, (x) => Number(x.toFixed(5)))).toEqual([0.6, 0.8, 0])

    const rows: { id: string; payload: VectorPayload }[] = []
    for await (const row of store.scroll('docs', 'default')) rows.push(row)
    // a#1 went with the delete of doc a; batchSize 2 makes the scroll take two pages
    expect(rows.map((r) => r.id)).toEqual(['a#0', 'b#0', 'c#0', 'c#1'])

    // a second namespace with the same ids, filters, listing and dropping a namespace
    await store.write('docs', 'tenant-b', {
      upsert: [rec('a#0', [1, 0, 0], { metadata: { lang: 'zh', year: 2024, tags: ['x', 'y'] } }), rec('b#0', [0, 1, 0], { metadata: { lang: 'en', year: 2020.5 } })]
    })
    expect(await store.count('docs', 'tenant-b')).toBe(2)
    expect(await store.count('docs', 'default')).toBe(4)
    expect(await store.namespaces('docs')).toEqual(['default', 'tenant-b'])
    const filtered = await store.search('docs', 'tenant-b', Float32Array.of(1, 0, 0), 5, {
      doc_ids: ['a', 'b'],
      metadata: [{ key: 'lang', any_of: ['zh', 'en'] }, { key: 'year', range: { gte: 2021 } }, { key: 'tags', equals: 'x' }]
    })
    expect(filtered.map((h) => h.id)).toEqual(['a#0'])
    expect(filtered[0]!.payload).toEqual({ doc_id: 'a', text: 'text a#0', metadata: { lang: 'zh', year: 2024, tags: ['x', 'y'] } })
    const mixed = await store.search('docs', 'tenant-b', Float32Array.of(1, 0, 0), 5, {
      metadata: [{ key: 'year', any_of: [2020.5, 'never'] }, { key: 'year', equals: 2020.5 }]
    })
    expect(mixed.map((h) => h.id)).toEqual(['b#0'])
    await store.write('docs', 'tenant-b', { deleteDocIds: ['a'] })
    expect(await store.count('docs', 'default')).toBe(4)
    await store.dropNamespace('docs', 'tenant-b')
    expect(await store.namespaces('docs')).toEqual(['default'])
    expect(await store.count('docs', 'default')).toBe(4)
    expect(await store.namespaces('nowhere')).toEqual([])
    await store.dropNamespace('nowhere', 'tenant-b')

    expect(await store.search('nowhere', 'default', Float32Array.of(1, 0, 0), 3)).toEqual([])
    expect(await store.count('nowhere', 'default')).toBe(0)
    const none: string[] = []
    for await (const row of store.scroll('nowhere', 'default')) none.push(row.id)
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
        'POST /collections/{collection_name}/points',
        'POST /collections/{collection_name}/points/delete',
        'POST /collections/{collection_name}/points/query',
        'POST /collections/{collection_name}/points/scroll',
        'POST /collections/{collection_name}/points/count',
        'POST /collections/{collection_name}/facet'
      ].sort()
    )
  })

  it('sends what the issue asks for: UUIDv5 ids, our id and namespace in the payload, batches with wait, a doc_id index, a tenant index and filters', async () => {
    fake.requests.length = 0
    const store = new QdrantVectorStore({ url: fake.url, timeoutMs: 5_000, batchSize: 2 })
    await store.ensureCollection('shape', 3)
    await store.write('shape', 'tenant-a', {
      deleteDocIds: ['d'],
      upsert: [rec('d#0', [1, 0, 0]), rec('d#1', [0, 1, 0]), rec('d#2', [0, 0, 1])]
    })
    await store.search('shape', 'tenant-a', Float32Array.of(1, 0, 0), 2, { metadata: [{ key: 'lang', equals: 'zh' }] })
    expect((await store.rank('shape', 'tenant-a', Float32Array.of(1, 0.5, 0), 2)).map((h) => h.id)).toEqual(['d#0', 'd#1'])
    // another process (a replica) has not seen these points: it reads their ids once, then never again
    const replica = new QdrantVectorStore({ url: fake.url, timeoutMs: 5_000 })
    expect((await replica.rank('shape', 'tenant-a', Float32Array.of(1, 0.5, 0), 2)).map((h) => h.id)).toEqual(['d#0', 'd#1'])
    expect((await replica.rank('shape', 'tenant-a', Float32Array.of(1, 0.5, 0), 2)).map((h) => h.id)).toEqual(['d#0', 'd#1'])
    await store.dropCollection('shape')

    const create = fake.requests.find((r) => r.method === 'PUT' && r.path === '/collections/shape')
    // Qdrant's own defaults, sent as configured (QDRANT_REPLICATION_FACTOR, QDRANT_WRITE_CONSISTENCY_FACTOR: 1; no shard number)
    expect(create?.body).toEqual({ vectors: { size: 3, distance: 'Cosine' }, replication_factor: 1, write_consistency_factor: 1 })
    const indexes = fake.requests.filter((r) => r.path.endsWith('/index'))
    expect(indexes.map((r) => r.body)).toEqual([
      { field_name: 'doc_id', field_schema: 'keyword' },
      { field_name: 'namespace', field_schema: { type: 'keyword', is_tenant: true } }
    ])
    // opening a collection writes no payload: points a version without namespaces wrote join `default` through the write path
    expect(fake.requests.filter((r) => r.path.endsWith('/points/payload'))).toEqual([])
    const upserts = fake.requests.filter((r) => r.method === 'PUT' && r.path.endsWith('/points'))
    expect(upserts.map((r) => (r.body as { points: unknown[] }).points.length)).toEqual([2, 1])
    for (const u of upserts) expect(u.query.wait).toBe('true')
    const first = (upserts[0]!.body as { points: { id: string; payload: Record<string, unknown> }[] }).points[0]!
    expect(first.id).toBe(pointIdOf('d#0', 'tenant-a'))
    expect(first.payload).toEqual({ doc_id: 'd', text: 'text d#0', id: 'd#0', namespace: 'tenant-a' })
    const del = fake.requests.find((r) => r.path.endsWith('/points/delete'))
    expect(del?.query.wait).toBe('true')
    expect(del?.body).toEqual({
      filter: {
        must: [{ key: 'namespace', match: { value: 'tenant-a' } }, { key: 'doc_id', match: { any: ['d'] } }],
        must_not: [{ has_id: ['d#0', 'd#1', 'd#2'].map((id) => pointIdOf(id, 'tenant-a')) }]
      }
    })
    const [query, rank, replicaRank, replicaRankAgain] = fake.requests.filter((r) => r.path.endsWith('/points/query'))
    // a search reads every payload key but the lexical leg's (`lex_terms` alone outweighs the rest), as a scroll does
    expect(query?.body).toMatchObject({
      query: [1, 0, 0], with_payload: { exclude: ['lex_len', 'lex_terms', 'lex_split', 'lex_aref'] }, with_vector: false,
      filter: { must: [{ key: 'namespace', match: { value: 'tenant-a' } }, { key: 'metadata.lang', match: { value: 'zh' } }] }
    })
    expect((query?.body as { limit: number }).limit).toBeGreaterThanOrEqual(2)
    // a ranking reads no payload: the store knows our id of every point it wrote or read
    for (const r of [rank, replicaRank, replicaRankAgain]) {
      expect(r?.body).toMatchObject({ query: [1, 0.5, 0], with_payload: false, with_vector: false, filter: { must: [{ key: 'namespace', match: { value: 'tenant-a' } }] } })
    }
    const reads = fake.requests.filter((r) => r.method === 'POST' && r.path === '/collections/shape/points')
    expect(reads.map((r) => r.body)).toEqual([{ ids: ['d#0', 'd#1', 'd#2'].map((id) => pointIdOf(id, 'tenant-a')), with_payload: ['id'], with_vector: false }])
    expect(reads.flatMap((r) => validator.validate(r))).toEqual([])
    await store.close()
  })
})

describe('a Qdrant collection written before namespaces', () => {
  let fake: FakeQdrant
  beforeAll(async () => {
    fake = await startFakeQdrant(validator)
  })
  afterAll(async () => {
    await fake.close()
  })

  it('comes up with its points in default, their ids unchanged', async () => {
    // the points as the version without namespaces wrote them: point id UUIDv5(id), our id in the payload, no namespace
    const old = new QdrantClient({ url: fake.url, checkCompatibility: false })
    await old.createCollection('legacy', { vectors: { size: 3, distance: 'Cosine' } })
    await old.upsert('legacy', {
      wait: true,
      points: [
        { id: uuidV5('a#0', POINT_ID_NAMESPACE), vector: [1, 0, 0], payload: { doc_id: 'a', text: 'old a', id: 'a#0' } },
        { id: uuidV5('b#0', POINT_ID_NAMESPACE), vector: [0, 1, 0], payload: { doc_id: 'b', text: 'old b', id: 'b#0' } }
      ]
    })
    const store = new QdrantVectorStore({ url: fake.url, timeoutMs: 5_000 })
    await store.ensureCollection('legacy', 3)
    // opening leaves them as they were: counted, in no namespace until adopted
    expect(await store.namespaces('legacy')).toEqual([])
    expect(await store.legacyRecords('legacy')).toBe(2)
    expect(await store.adoptLegacyRecords('legacy')).toBe(2)
    const migrate = fake.requests.find((r) => r.path.endsWith('/points/payload'))
    expect(migrate?.body).toEqual({ payload: { namespace: 'default' }, filter: { must: [{ is_empty: { key: 'namespace' } }] } })
    expect(await store.legacyRecords('legacy')).toBe(0)
    expect(await store.adoptLegacyRecords('legacy')).toBe(0)
    expect(await store.legacyRecords('missing')).toBe(0)
    expect(await store.namespaces('legacy')).toEqual(['default'])
    expect(await store.count('legacy', 'default')).toBe(2)
    expect((await store.search('legacy', 'default', Float32Array.of(1, 0, 0), 1)).map((h) => [h.id, h.payload])).toEqual([['a#0', { doc_id: 'a', text: 'old a' }]])
    // re-ingesting a document in default replaces its old point: the ids are the same
    await store.write('legacy', 'default', { deleteDocIds: ['a'], upsert: [rec('a#0', [0, 0, 1])] })
    expect(await store.count('legacy', 'default')).toBe(2)
    expect(await store.count('legacy', 'tenant-a')).toBe(0)
    const problems = fake.requests.flatMap((r) => validator.validate(r).map((e) => `${r.method} ${r.path}: ${e}`))
    expect(problems).toEqual([])
    // the adoption's payload write is checked against the spec here (the flow above sends none)
    expect(fake.requests.filter((r) => r.path.endsWith('/points/payload'))).toHaveLength(1)
  })
})

describe('qdrantFilter', () => {
  it('maps the namespace, doc ids and each kind of metadata condition onto Qdrant conditions', () => {
    expect(qdrantFilter('ns1', {
      doc_ids: ['a', 'b'],
      metadata: [
        { key: 'lang', equals: 'zh' }, { key: 'public', equals: true }, { key: 'year', equals: 2024 }, { key: 'score', equals: 0.5 },
        { key: 'tags', any_of: ['x', 'y'] }, { key: 'year', any_of: [2020, 2021] }, { key: 'mixed', any_of: ['x', 1.5, false] },
        { key: 'year', range: { gte: 2020, lt: 2025 } }
      ]
    })).toEqual({
      must: [
        { key: 'namespace', match: { value: 'ns1' } },
        { key: 'doc_id', match: { any: ['a', 'b'] } },
        { key: 'metadata.lang', match: { value: 'zh' } },
        { key: 'metadata.public', match: { value: true } },
        { key: 'metadata.year', match: { value: 2024 } },
        { key: 'metadata.score', range: { gte: 0.5, lte: 0.5 } },
        { key: 'metadata.tags', match: { any: ['x', 'y'] } },
        { key: 'metadata.year', match: { any: [2020, 2021] } },
        { should: [{ key: 'metadata.mixed', match: { value: 'x' } }, { key: 'metadata.mixed', range: { gte: 1.5, lte: 1.5 } },
          { key: 'metadata.mixed', match: { value: false } }] },
        { key: 'metadata.year', range: { gte: 2020, lt: 2025 } }
      ]
    })
    const body: RecordedRequest = {
      method: 'POST', path: '/collections/docs/points/query', query: {},
      body: { query: [1, 0], limit: 3, filter: qdrantFilter('ns1', { metadata: [{ key: 'mixed', any_of: ['x', 1.5, false] }] }) }
    }
    expect(validator.validate(body)).toEqual([])
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
    fake.dropSocket = undefined
  })
  afterAll(async () => {
    await fake.close()
  })

  it('a refused connection is BackendUnavailableError naming qdrant', async () => {
    const closed = await startFakeQdrant(validator)
    await closed.close()
    const store = new QdrantVectorStore({ url: closed.url, timeoutMs: 2_000 })
    const error = await store.count('docs', 'default').catch((e: unknown) => e)
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
    const error = await store.search('slow', 'default', Float32Array.of(1, 0), 1).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(BackendTimeoutError)
    expect(performance.now() - started).toBeLessThan(1_400)
  })

  it('writes have their own timeout: a write slower than the read budget succeeds, a read that slow times out', async () => {
    const store = new QdrantVectorStore({ url: fake.url, timeoutMs: 200, writeTimeoutMs: 20_000 })
    await store.ensureCollection('patient', 2)
    fake.stall = { pattern: /\/points$/, ms: 800 }
    await store.write('patient', 'default', { upsert: [rec('p#0', [1, 0])] })
    expect(await store.count('patient', 'default')).toBe(1)
    fake.stall = { pattern: /points\/query$/, ms: 800 }
    const error = await store.search('patient', 'default', Float32Array.of(1, 0), 1).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(BackendTimeoutError)
    expect(error).toMatchObject({ backend: 'vector-store:qdrant' })
  })

  it('a write slower than its own timeout is BackendTimeoutError naming the store', async () => {
    const store = new QdrantVectorStore({ url: fake.url, timeoutMs: 5_000, writeTimeoutMs: 200 })
    await store.ensureCollection('hasty', 2)
    fake.stall = { pattern: /\/points$/, ms: 1_500 }
    const error = await store.write('hasty', 'default', { upsert: [rec('h#0', [1, 0])] }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(BackendTimeoutError)
    expect(error).toMatchObject({ backend: 'vector-store:qdrant' })
  })

  it('a 5xx answer is UnexpectedResponseError with the status', async () => {
    const store = new QdrantVectorStore({ url: fake.url, timeoutMs: 2_000 })
    await store.ensureCollection('broken', 2)
    fake.fail = /points$/
    const sent = upsertsTo('broken')
    const error = await store.write('broken', 'default', { upsert: [rec('x#0', [1, 0])] }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(UnexpectedResponseError)
    expect((error as Error).message).toMatch(/500/)
    expect(upsertsTo('broken') - sent).toBe(1) // an answer, even a 500, is not retried
  })

  const upsertsTo = (collection: string) => fake.requests.filter((r) => r.method === 'PUT' && r.path === `/collections/${collection}/points`).length

  it('an upsert whose socket the server closed as it arrived is sent once more, and lands', async () => {
    const store = new QdrantVectorStore({ url: fake.url, timeoutMs: 2_000 })
    await store.ensureCollection('dropped', 2) // the next request reuses this kept-alive connection
    fake.dropSocket = { pattern: /^\/collections\/dropped\/points$/, times: 1 }
    await store.write('dropped', 'default', { upsert: [rec('d#0', [1, 0]), rec('d#1', [0, 1])] })
    expect(fake.dropped).toContain('PUT /collections/dropped/points')
    expect(upsertsTo('dropped')).toBe(1) // the retry: the dropped request never reached the handler
    expect(await store.count('dropped', 'default')).toBe(2)
  })

  it('a delete whose socket the server closed is sent once more, and the document is gone', async () => {
    const store = new QdrantVectorStore({ url: fake.url, timeoutMs: 2_000 })
    await store.ensureCollection('dropped-delete', 2)
    await store.write('dropped-delete', 'default', { upsert: [rec('gone#0', [1, 0]), rec('kept#0', [0, 1])] })
    fake.dropSocket = { pattern: /^\/collections\/dropped-delete\/points\/delete$/, times: 1 }
    await store.write('dropped-delete', 'default', { deleteDocIds: ['gone'] })
    expect(fake.dropped).toContain('POST /collections/dropped-delete/points/delete')
    const left: string[] = []
    for await (const row of store.scroll('dropped-delete', 'default')) left.push(row.id)
    expect(left).toEqual(['kept#0'])
  })

  it('a write whose socket is closed twice in a row fails as unreachable after exactly two tries', async () => {
    const store = new QdrantVectorStore({ url: fake.url, timeoutMs: 2_000 })
    await store.ensureCollection('dropped-twice', 2)
    const before = fake.dropped.length
    fake.dropSocket = { pattern: /^\/collections\/dropped-twice\/points$/, times: 3 }
    const error = await store.write('dropped-twice', 'default', { upsert: [rec('t#0', [1, 0])] }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(BackendUnavailableError)
    expect((error as Error).message).toMatch(/unreachable/)
    expect(fake.dropped.length - before).toBe(2)
    expect(upsertsTo('dropped-twice')).toBe(0)
  })
})

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { BackendTimeoutError, BackendUnavailableError, UnexpectedResponseError } from '../../src/providers/errors.js'
import type { VectorPayload, VectorRecord } from '../../src/providers/vector-store/port.js'
import { pointIdOf, QdrantVectorStore } from '../../src/providers/vector-store/qdrant.js'
import { loadQdrantOpenApi, type QdrantOpenApiValidator, type RecordedRequest } from '../helpers/qdrant-openapi.js'

/**
 * A stand-in for Qdrant on 127.0.0.1 that answers the routes the adapter uses, in Qdrant's response shapes
 * (each answer is itself checked against the document). It records every request so the test can validate
 * what the real `@qdrant/js-client-rest` sent. It is not a second Qdrant: the contract suite runs against a
 * real one when QDRANT_URL is set (vector-store.qdrant.test.ts).
 */
interface FakePoint {
  id: string
  vector: number[]
  payload: Record<string, unknown>
}

interface FakeQdrant {
  url: string
  requests: RecordedRequest[]
  responseErrors: string[]
  /** Requests to paths matching this answer after this many ms (to provoke client timeouts). */
  stall: { pattern: RegExp; ms: number } | undefined
  /** Requests to paths matching this answer 500. */
  fail: RegExp | undefined
  close(): Promise<void>
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  if (chunks.length === 0) return undefined
  const text = Buffer.concat(chunks).toString('utf8')
  return text.length === 0 ? undefined : (JSON.parse(text) as unknown)
}

function cosine(a: number[], b: number[]): number {
  let dot = 0
  let na = 0
  let nb = 0
  a.forEach((x, i) => {
    dot += x * b[i]!
    na += x * x
    nb += b[i]! * b[i]!
  })
  return dot / Math.sqrt(na * nb)
}

type Condition = { key?: string; match?: { any?: unknown[]; value?: unknown }; has_id?: string[] }

function matches(point: FakePoint, filter: { must?: Condition[]; must_not?: Condition[] } | undefined): boolean {
  const test = (c: Condition): boolean => {
    if (c.has_id) return c.has_id.includes(point.id)
    const value = point.payload[c.key!]
    if (c.match?.any) return c.match.any.includes(value)
    return value === c.match?.value
  }
  return (filter?.must ?? []).every(test) && !(filter?.must_not ?? []).some(test)
}

async function startFakeQdrant(validator: QdrantOpenApiValidator): Promise<FakeQdrant> {
  const collections = new Map<string, { size: number; points: Map<string, FakePoint>; indexed: Set<string> }>()
  const fake: FakeQdrant = {
    url: '',
    requests: [],
    responseErrors: [],
    stall: undefined,
    fail: undefined,
    close: async () => undefined
  }

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1')
    const request: RecordedRequest = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      body: await readBody(req)
    }
    fake.requests.push(request)
    const send = (status: number, body: Record<string, unknown>): void => {
      const answer = status === 200 && !('title' in body) ? { ...body, status: 'ok', time: 0.0001 } : body
      fake.responseErrors.push(...validator.validateResponse(request, status, answer))
      res.writeHead(status, { 'content-type': 'application/json' })
      res.end(JSON.stringify(answer))
    }
    if (fake.stall?.pattern.test(request.path)) await new Promise((r) => setTimeout(r, fake.stall!.ms))
    if (fake.fail?.test(request.path)) {
      send(500, { status: { error: 'Service internal error: injected by the test' }, time: 0 })
      return
    }
    const missing = (name: string): void =>
      send(404, { status: { error: `Not found: Collection \`${name}\` doesn't exist!` }, time: 0 })
    const body = (request.body ?? {}) as Record<string, unknown>
    const m = /^\/collections\/([^/]+)(\/.*)?$/.exec(request.path)
    if (request.method === 'GET' && request.path === '/') {
      send(200, { title: 'qdrant - vector search engine', version: '1.19.0', commit: null })
      return
    }
    if (!m) {
      send(404, { status: { error: 'no such route' }, time: 0 })
      return
    }
    const name = decodeURIComponent(m[1]!)
    const rest = m[2] ?? ''
    const c = collections.get(name)
    const route = `${request.method} ${rest}`
    switch (route) {
      case 'GET /exists':
        return send(200, { result: { exists: c !== undefined } })
      case 'PUT ': {
        if (c) return send(409, { status: { error: `Wrong input: Collection \`${name}\` already exists!` }, time: 0 })
        const vectors = body.vectors as { size: number }
        collections.set(name, { size: vectors.size, points: new Map(), indexed: new Set() })
        return send(200, { result: true })
      }
      case 'DELETE ':
        return send(200, { result: collections.delete(name) })
    }
    if (!c) return missing(name)
    switch (route) {
      case 'GET ':
        return send(200, {
          result: {
            status: 'green',
            optimizer_status: 'ok',
            segments_count: 1,
            points_count: c.points.size,
            config: {
              params: { vectors: { size: c.size, distance: 'Cosine' }, shard_number: 1, replication_factor: 1 },
              hnsw_config: { m: 16, ef_construct: 100, full_scan_threshold: 10000 },
              optimizer_config: {
                deleted_threshold: 0.2,
                vacuum_min_vector_number: 1000,
                default_segment_number: 0,
                flush_interval_sec: 5
              },
              wal_config: { wal_capacity_mb: 32, wal_segments_ahead: 0 }
            },
            payload_schema: Object.fromEntries([...c.indexed].map((f) => [f, { data_type: 'keyword', points: 0 }]))
          }
        })
      case 'PUT /index':
        c.indexed.add(body.field_name as string)
        return send(200, { result: { operation_id: 1, status: 'completed' } })
      case 'PUT /points':
        for (const p of body.points as FakePoint[]) c.points.set(p.id, p)
        return send(200, { result: { operation_id: 2, status: 'completed' } })
      case 'POST /points/delete': {
        const filter = body.filter as Parameters<typeof matches>[1]
        for (const p of [...c.points.values()]) if (matches(p, filter)) c.points.delete(p.id)
        return send(200, { result: { operation_id: 3, status: 'completed' } })
      }
      case 'POST /points/query': {
        const query = body.query as number[]
        const limit = (body.limit as number | undefined) ?? 10
        // like Qdrant, equal scores come back in no order we promise: here, reverse point-id order
        const points = [...c.points.values()]
          .map((p) => ({ id: p.id, version: 1, score: Math.fround(cosine(p.vector, query)), payload: p.payload }))
          .sort((a, b) => b.score - a.score || (a.id < b.id ? 1 : -1))
          .slice(0, limit)
        return send(200, { result: { points } })
      }
      case 'POST /points/scroll': {
        const limit = (body.limit as number | undefined) ?? 10
        const sorted = [...c.points.values()].sort((a, b) => (a.id < b.id ? -1 : 1))
        const from = body.offset === undefined ? 0 : sorted.findIndex((p) => p.id >= (body.offset as string))
        const page = sorted.slice(from, from + limit)
        const next = sorted[from + limit]
        return send(200, {
          result: { points: page.map((p) => ({ id: p.id, payload: p.payload })), next_page_offset: next ? next.id : null }
        })
      }
      case 'POST /points/count':
        return send(200, { result: { count: c.points.size } })
    }
    send(404, { status: { error: `the stand-in has no route ${route}` }, time: 0 })
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      res.writeHead(500, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ status: { error: String(error) }, time: 0 }))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  fake.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    })
  return fake
}

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

  it('a 5xx answer is UnexpectedResponseError with the status', async () => {
    const store = new QdrantVectorStore({ url: fake.url, timeoutMs: 2_000 })
    await store.ensureCollection('broken', 2)
    fake.fail = /points$/
    const error = await store.write('broken', { upsert: [rec('x#0', [1, 0])] }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(UnexpectedResponseError)
    expect((error as Error).message).toMatch(/500/)
  })
})

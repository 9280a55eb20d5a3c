import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { gzipSync } from 'node:zlib'
import type { QdrantOpenApiValidator, RecordedRequest } from './qdrant-openapi.js'

/**
 * A stand-in for Qdrant on 127.0.0.1 that answers the routes the adapter uses, in Qdrant's response shapes
 * (each answer is itself checked against the document). It records every request so the test can validate
 * what the real `@qdrant/js-client-rest` sent. It is not a second Qdrant: the contract suite runs against a
 * real one when QDRANT_URL is set (vector-store.qdrant.test.ts).
 *
 * It answers on the wire as Qdrant does: gzip when the client accepts it, the compressed body written
 * after the headers in a write of its own, on a socket with Nagle's algorithm on. A client that asks for
 * gzip on a kept-alive connection then waits for its own delayed ACK (~40 ms on Linux) on every answer.
 */
interface FakePoint {
  id: string
  vector: number[]
  payload: Record<string, unknown>
}

export interface FakeQdrant {
  url: string
  requests: RecordedRequest[]
  /** The `accept-encoding` header of each request, in order (`''` when absent). */
  acceptEncodings: string[]
  responseErrors: string[]
  /** Requests to paths matching this answer after this many ms (to provoke client timeouts). */
  stall: { pattern: RegExp; ms: number } | undefined
  /** Requests to paths matching this answer 500. */
  fail: RegExp | undefined
  /**
   * The next `times` requests to paths matching this have their socket destroyed as they arrive, unanswered (as
   * a server that closed a kept-alive connection just as the client reused it); each is then listed in `dropped`.
   */
  dropSocket: { pattern: RegExp; times: number } | undefined
  /** `METHOD path` of every request whose socket `dropSocket` destroyed, in order. */
  dropped: string[]
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

type Filter = { must?: Condition[]; should?: Condition[]; must_not?: Condition[] }
type Condition = Filter & {
  key?: string
  match?: { any?: unknown[]; value?: unknown }
  range?: { gt?: number; gte?: number; lt?: number; lte?: number }
  has_id?: string[]
  is_empty?: { key: string }
}

/** A payload value by Qdrant's dotted key (`metadata.lang`). */
function valueAt(payload: Record<string, unknown>, key: string): unknown {
  let value: unknown = payload
  for (const part of key.split('.')) value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[part] : undefined
  return value
}

/** Qdrant's filter semantics, as its documentation states them: a list value matches when any element does. */
function matches(point: FakePoint, filter: Filter | undefined): boolean {
  const test = (c: Condition): boolean => {
    if (c.has_id) return c.has_id.includes(point.id)
    if (c.is_empty) {
      const v = valueAt(point.payload, c.is_empty.key)
      return v === undefined || v === null || (Array.isArray(v) && v.length === 0)
    }
    if (c.key === undefined) return matches(point, c)
    const v = valueAt(point.payload, c.key)
    const values = Array.isArray(v) ? v : v === undefined ? [] : [v]
    if (c.match?.any) return values.some((x) => c.match!.any!.includes(x))
    if (c.match) return values.some((x) => x === c.match!.value)
    const r = c.range ?? {}
    return values.some((x) => typeof x === 'number' && (r.gt === undefined || x > r.gt) && (r.gte === undefined || x >= r.gte) &&
      (r.lt === undefined || x < r.lt) && (r.lte === undefined || x <= r.lte))
  }
  return (filter?.must ?? []).every(test) && ((filter?.should ?? []).length === 0 || filter!.should!.some(test)) &&
    !(filter?.must_not ?? []).some(test)
}

export interface FakeQdrantOptions {
  /** Port to listen on (a service may have been pointed at it before it came up). Default: any free port. */
  port?: number
}

export async function startFakeQdrant(validator: QdrantOpenApiValidator, options: FakeQdrantOptions = {}): Promise<FakeQdrant> {
  const collections = new Map<string, { size: number; points: Map<string, FakePoint>; indexed: Set<string> }>()
  const fake: FakeQdrant = {
    url: '',
    requests: [],
    acceptEncodings: [],
    responseErrors: [],
    stall: undefined,
    fail: undefined,
    dropSocket: undefined,
    dropped: [],
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
    const accepted = req.headers['accept-encoding'] ?? ''
    fake.acceptEncodings.push(accepted)
    const send = (status: number, body: Record<string, unknown>): void => {
      const answer = status === 200 && !('title' in body) ? { ...body, status: 'ok', time: 0.0001 } : body
      fake.responseErrors.push(...validator.validateResponse(request, status, answer))
      const json = Buffer.from(JSON.stringify(answer))
      if (!/\bgzip\b/.test(accepted)) {
        res.writeHead(status, { 'content-type': 'application/json', 'content-length': json.length })
        res.end(json)
        return
      }
      const compressed = gzipSync(json)
      res.writeHead(status, { 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': compressed.length })
      res.flushHeaders()
      res.end(compressed)
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
      case 'POST /points/payload': {
        const filter = body.filter as Filter
        for (const p of c.points.values()) if (matches(p, filter)) Object.assign(p.payload, body.payload as Record<string, unknown>)
        return send(200, { result: { operation_id: 4, status: 'completed' } })
      }
      case 'POST /facet': {
        const counts = new Map<string, number>()
        for (const p of c.points.values()) {
          if (!matches(p, body.filter as Filter | undefined)) continue
          const v = valueAt(p.payload, body.key as string)
          for (const x of Array.isArray(v) ? v : v === undefined ? [] : [v]) counts.set(String(x), (counts.get(String(x)) ?? 0) + 1)
        }
        const hits = [...counts].map(([value, count]) => ({ value, count }))
          .sort((a, b) => b.count - a.count || (a.value < b.value ? -1 : 1)).slice(0, (body.limit as number | undefined) ?? 10)
        return send(200, { result: { hits } })
      }
      case 'POST /points/delete': {
        const filter = body.filter as Filter
        for (const p of [...c.points.values()]) if (matches(p, filter)) c.points.delete(p.id)
        return send(200, { result: { operation_id: 3, status: 'completed' } })
      }
      case 'POST /points/query': {
        const query = body.query as number[]
        const limit = (body.limit as number | undefined) ?? 10
        // like Qdrant, equal scores come back in no order we promise: here, reverse point-id order
        const points = [...c.points.values()]
          .filter((p) => matches(p, body.filter as Filter | undefined))
          .map((p) => ({ id: p.id, version: 1, score: Math.fround(cosine(p.vector, query)), ...selected(p.payload, body.with_payload) }))
          .sort((a, b) => b.score - a.score || (a.id < b.id ? 1 : -1))
          .slice(0, limit)
        return send(200, { result: { points } })
      }
      case 'POST /points': {
        // retrieve by point ids: the payload keys `with_payload` selects, the vector when asked for
        const points = (body.ids as string[]).flatMap((id) => {
          const p = c.points.get(id)
          return p ? [{ id: p.id, ...selected(p.payload, body.with_payload), ...(body.with_vector ? { vector: p.vector } : {}) }] : []
        })
        return send(200, { result: points })
      }
      case 'POST /points/scroll': {
        const limit = (body.limit as number | undefined) ?? 10
        const sorted = [...c.points.values()].filter((p) => matches(p, body.filter as Filter | undefined)).sort((a, b) => (a.id < b.id ? -1 : 1))
        const from = body.offset === undefined ? 0 : sorted.findIndex((p) => p.id >= (body.offset as string))
        const page = sorted.slice(from, from + limit)
        const next = sorted[from + limit]
        return send(200, {
          result: { points: page.map((p) => ({ id: p.id, payload: p.payload })), next_page_offset: next ? next.id : null }
        })
      }
      case 'POST /points/count':
        return send(200, { result: { count: [...c.points.values()].filter((p) => matches(p, body.filter as Filter | undefined)).length } })
    }
    send(404, { status: { error: `the stand-in has no route ${route}` }, time: 0 })
  }

  /** The payload keys a `with_payload` selector keeps (false: none; a list: those; `{exclude}`: the others). */
  function selected(payload: Record<string, unknown>, selector: unknown): { payload?: Record<string, unknown> } {
    if (selector === false) return {}
    if (Array.isArray(selector)) return { payload: Object.fromEntries(Object.entries(payload).filter(([k]) => selector.includes(k))) }
    const exclude = (selector as { exclude?: string[] } | undefined)?.exclude
    if (exclude) return { payload: Object.fromEntries(Object.entries(payload).filter(([k]) => !exclude.includes(k))) }
    return { payload }
  }

  const server: Server = createServer({ noDelay: false }, (req, res) => {
    const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname
    const drop = fake.dropSocket
    if (drop && drop.times > 0 && drop.pattern.test(path)) {
      drop.times -= 1
      fake.dropped.push(`${req.method ?? 'GET'} ${path}`)
      req.socket.destroy()
      return
    }
    handle(req, res).catch((error: unknown) => {
      res.writeHead(500, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ status: { error: String(error) }, time: 0 }))
    })
  })
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve))
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  fake.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    })
  return fake
}


/**
 * Every error path fits its schema: each route of the served OpenAPI document is driven into
 * each error the plugins can raise (auth, rate limit, body limit, unsupported media type, malformed JSON,
 * overload, start-up), and each answer's status must be documented for that operation and its body must
 * validate against the documented schema. A 503 and a 429 carry Retry-After, a 401 WWW-Authenticate.
 */
import { PassThrough } from 'node:stream'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Ajv } from 'ajv'
import addFormatsModule from 'ajv-formats'
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../../src/http/app.js'
import { loadConfig } from '../../../src/config.js'
import { createServices } from '../../../src/services.js'
import { createRuntime } from '../../../src/runtime.js'
import { buildTestApp, type TestApp } from '../../helpers/build.js'

type Doc = { paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: unknown }> }> }>> }
interface Operation { path: string; method: string; url: string; body: boolean }

// Valid inputs, so an error raised after validation (start-up) is reached; unknown routes get `{}`.
const BODIES: Record<string, unknown> = {
  '/retrieve': { mode: 'hybrid', query: '咳嗽' },
  '/context': { mode: 'hybrid', query: '咳嗽', max_tokens: 500 },
  '/ingest/documents': { documents: [{ id: 'd', text: '# 标题\n\n正文。' }] },
  '/ingest/graph': { entities: [{ id: 'e', name: '实体' }] },
  '/ingest/episodes': { episodes: [{ id: 'E', name: '事件', summary: '摘要' }] },
  '/ingest/conversations': { conversations: [{ id: 'c', sessions: [{ id: 's', time: '2023-05-08T13:56:00Z', turns: [{ id: 't', speaker: '王芳', text: '你好。' }] }] }] },
  '/analyze': { text: '流式返回' },
  '/documents/{id}/rebuild': { channels: ['lexical'] }
}
const QUERIES: Record<string, string> = { '/retrieve': `?mode=hybrid&q=${encodeURIComponent('咳嗽')}` }
const PROBES = new Set(['/healthz', '/readyz', '/metrics'])
/** Every operation of the service (src/http/routes/): one the served document lacks fails, rather than going undriven. */
const EXPECTED_OPERATIONS = [
  'GET /retrieve', 'POST /retrieve', 'GET /retrieve/compare', 'POST /retrieve/compare',
  'POST /ingest/documents', 'GET /documents', 'DELETE /documents/{id}', 'POST /ingest/graph', 'DELETE /entities/{id}',
  'POST /ingest/episodes', 'DELETE /episodes/{id}', 'POST /ingest/conversations', 'DELETE /conversations/{id}',
  'GET /namespaces', 'DELETE /namespaces/{namespace}', 'POST /analyze', 'GET /healthz', 'GET /readyz',
  'GET /documents/{id}', 'POST /documents/{id}/rebuild', 'GET /namespaces/{namespace}'
]

let doc: Doc
let operations: Operation[]
const ajv = new Ajv({ strict: false, allErrors: true })
;(addFormatsModule as unknown as (a: Ajv) => void)(ajv)

const apps: TestApp[] = []
async function app(env: Record<string, string>): Promise<FastifyInstance> {
  const t = await buildTestApp(env)
  apps.push(t)
  return t.app
}

beforeAll(async () => {
  const t = await app({})
  doc = (await t.inject({ method: 'GET', url: '/openapi.json' })).json() as Doc
  ajv.addSchema(doc as object, 'served')
  operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.keys(methods).filter((m) => ['get', 'post', 'delete', 'put', 'patch'].includes(m)).map((method) => ({
      path, method: method.toUpperCase(),
      url: path.replace(/\{[^}]+\}/g, 'x') + (method === 'get' ? QUERIES[path] ?? '' : ''),
      body: method === 'post' || method === 'put' || method === 'patch'
    })))
}, 120_000)
afterAll(async () => {
  for (const t of apps) await t.close()
})

const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/')

/** Every way `response` breaks the document for `op`; [] when it fits. */
function misfits(op: Operation, response: LightMyRequestResponse): string[] {
  const declared = doc.paths[op.path]![op.method.toLowerCase()]!.responses
  const status = String(response.statusCode)
  if (!declared[status]) return [`${op.method} ${op.path}: status ${status} is not documented (${Object.keys(declared).join(', ')})`]
  if (!declared[status]!.content?.['application/json']) return []
  const validate = ajv.getSchema(`served#/${pointer('paths', op.path, op.method.toLowerCase(), 'responses', status, 'content', 'application/json', 'schema')}`)!
  return validate(response.json()) ? [] : [`${op.method} ${op.path} ${status}: ${ajv.errorsText(validate.errors)} in ${response.body}`]
}

function request(op: Operation, extra: Partial<InjectOptions> = {}): InjectOptions {
  return {
    method: op.method as InjectOptions['method'], url: op.url,
    ...(op.body ? { payload: (BODIES[op.path] ?? {}) as object } : {}),
    ...extra
  } as InjectOptions
}

describe('every route, driven into every error the plugins raise, answers as the OpenAPI document says', () => {
  it('drives every operation of the service: none is missing from the served document', () => {
    const found = new Set(operations.map((o) => `${o.method} ${o.path}`))
    expect(EXPECTED_OPERATIONS.filter((op) => !found.has(op))).toEqual([])
  })

  it('401 without an API key (reads protected too), with WWW-Authenticate; probes stay open', async () => {
    const a = await app({ API_KEYS: 'k1', READ_API_KEYS_REQUIRED: 'true' })
    const problems: string[] = []
    for (const op of operations) {
      const r = await a.inject(request(op))
      problems.push(...misfits(op, r))
      if (PROBES.has(op.path)) continue
      expect(r.statusCode, `${op.method} ${op.path}`).toBe(401)
      expect(r.headers['www-authenticate']).toBe('Bearer')
    }
    expect(problems).toEqual([])
  })

  it('429 past the rate limit, with Retry-After', async () => {
    const a = await app({ RATE_LIMIT_MAX: '1' })
    await a.inject({ method: 'GET', url: '/documents' })
    const problems: string[] = []
    for (const op of operations) {
      const r = await a.inject(request(op))
      problems.push(...misfits(op, r))
      if (PROBES.has(op.path)) continue
      expect(r.statusCode, `${op.method} ${op.path}`).toBe(429)
      expect(Number(r.headers['retry-after'])).toBeGreaterThan(0)
    }
    expect(problems).toEqual([])
  })

  it('413 for a body past the limit, 415 for another content type, 400 for malformed JSON', async () => {
    const a = await app({ BODY_LIMIT_BYTES: '1024' })
    const problems: string[] = []
    for (const op of operations.filter((o) => o.body)) {
      const big = await a.inject(request(op, { payload: JSON.stringify({ text: '字'.repeat(2000) }), headers: { 'content-type': 'application/json' } }))
      expect(big.statusCode, `${op.method} ${op.path}`).toBe(413)
      const text = await a.inject(request(op, { payload: '<doc/>', headers: { 'content-type': 'application/xml' } }))
      expect(text.statusCode, `${op.method} ${op.path}`).toBe(415)
      const broken = await a.inject(request(op, { payload: '{"broken', headers: { 'content-type': 'application/json' } }))
      expect(broken.statusCode, `${op.method} ${op.path}`).toBe(400)
      problems.push(...misfits(op, big), ...misfits(op, text), ...misfits(op, broken))
    }
    expect(problems).toEqual([])
  })

  it('503 RECALL_OVERLOADED with Retry-After past the in-flight limit; probes are never refused', async () => {
    const a = await app({ MAX_IN_FLIGHT: '1' })
    // One request stays in flight while its body never ends.
    const body = new PassThrough()
    const held = a.inject({ method: 'POST', url: '/analyze', headers: { 'content-type': 'application/json' }, payload: body })
    for (let i = 0; i < 100 && a.overload.figures().inFlight < 1; i++) await new Promise((r) => setTimeout(r, 20))
    expect(a.overload.figures().inFlight).toBe(1)
    const problems: string[] = []
    for (const op of operations) {
      const r = await a.inject(request(op))
      problems.push(...misfits(op, r))
      if (PROBES.has(op.path)) {
        expect(r.statusCode, op.path).not.toBe(429)
        expect(r.json().code).not.toBe('RECALL_OVERLOADED')
        continue
      }
      expect(r.statusCode, `${op.method} ${op.path}`).toBe(503)
      expect(r.json().code).toBe('RECALL_OVERLOADED')
      expect(Number(r.headers['retry-after'])).toBeGreaterThan(0)
    }
    body.end('{"text":"流式"}')
    expect((await held).statusCode).toBe(200)
    expect(problems).toEqual([])
  })

  it('503 RECALL_STARTING with Retry-After while start-up has not run; /readyz 503 in its own schema', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'recall-errors-'))
    const config = loadConfig({ DATA_DIR: dataDir, DEMO_DATA: 'false', MODEL_DIR: process.env.MODEL_DIR ?? './models' })
    const services = createServices(config)
    const a = await buildApp(createRuntime(services), { logger: false })
    try {
      const problems: string[] = []
      const starting: string[] = []
      for (const op of operations) {
        const r = await a.inject(request(op))
        problems.push(...misfits(op, r))
        if (r.statusCode === 503 && r.json().code === 'RECALL_STARTING') {
          starting.push(`${op.method} ${op.path}`)
          expect(Number(r.headers['retry-after'])).toBeGreaterThan(0)
        }
      }
      expect(problems).toEqual([])
      // Every route that reads or writes a store waits; /analyze, the probes and the document do not.
      expect(starting.sort()).toEqual([
        'DELETE /conversations/{id}', 'DELETE /documents/{id}', 'DELETE /entities/{id}', 'DELETE /episodes/{id}', 'DELETE /namespaces/{namespace}', 'GET /documents', 'GET /images/{id}',
        'GET /namespaces', 'GET /retrieve', 'POST /context', 'POST /ingest/conversations', 'POST /ingest/documents', 'POST /ingest/episodes', 'POST /ingest/graph',
        'POST /retrieve', 'GET /documents/{id}', 'POST /documents/{id}/rebuild', 'GET /namespaces/{namespace}', 'POST /ingest/files'
      ].sort())
      expect((await a.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(503)
    } finally {
      await a.close()
      await rm(dataDir, { recursive: true, force: true })
    }
  })
})

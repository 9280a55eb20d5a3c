/**
 * Issue 12: `recall_backend_errors_total` read 3 after about 9 failures (failed legs inside a 200 and the
 * all-legs 503 were not counted), and that 503's message listed a leg that worked
 * ("every hybrid leg is unavailable: embedding: ok; vector: error …").
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { BackendUnavailableError } from '../../src/providers/errors.js'
import { buildTestApp, type TestApp } from '../helpers/build.js'

const docs = [
  { id: 'cough', text: '# 咳嗽\n\n慢性咳嗽需要胸部影像检查。' },
  { id: 'travel', text: '# 报销\n\n一线城市住宿每晚不超过600元。' },
  { id: 'stream', text: '# 流式\n\nAPI 流式返回改造。' }
]

/** `method` of `target` throws while `failing()` says so; otherwise its result goes through `wrap`. */
function failing<T extends object>(target: T, method: string, failing: () => boolean, backend: string, wrap: (result: unknown) => unknown = (r) => r): T {
  return new Proxy(target, {
    get(t, key, receiver) {
      const value = Reflect.get(t, key, receiver)
      if (key === method) {
        return (...args: unknown[]) => {
          if (failing()) return Promise.reject(new BackendUnavailableError(backend, `${backend} is down (test)`))
          return wrap((value as (...a: unknown[]) => unknown).apply(t, args))
        }
      }
      return typeof value === 'function' ? value.bind(t) : value
    }
  })
}

function errorsOf(metrics: string, backend: string): number {
  const line = metrics.split('\n').find((l) => l.startsWith(`recall_backend_errors_total{backend="${backend}"}`))
  return line === undefined ? 0 : Number(line.split(' ').pop())
}

describe('issue 12: failed legs are counted and named', () => {
  let t: TestApp
  let vectorDown = false
  let lexicalDown = false
  beforeAll(async () => {
    t = await buildTestApp({ CACHE_TTL_SECONDS: '0' }, (p) => ({
      ...p,
      vectors: failing(p.vectors, 'rank', () => vectorDown, 'vector-store:memory'),
      // every namespace's index fails its searches
      lexical: failing(p.lexical, 'get', () => false, '', (index) => failing(index as object, 'search', () => lexicalDown, 'lexical-index:bm25'))
    }))
    expect((await t.app.inject({ method: 'POST', url: '/ingest/documents', payload: { documents: docs } })).statusCode).toBe(200)
  })
  afterAll(async () => t.close())

  const ask = () => t.app.inject({ method: 'GET', url: `/retrieve?mode=hybrid&q=${encodeURIComponent('慢性咳嗽')}` })
  const metrics = async () => (await t.app.inject({ method: 'GET', url: '/metrics' })).body

  it('counts a failed leg inside a 200 and each failed leg of the all-legs 503, against its backend; the 503 names only failed legs', async () => {
    vectorDown = true
    const degraded = await ask()
    expect(degraded.statusCode).toBe(200)
    expect(degraded.json().legs.find((l: { name: string }) => l.name === 'vector')).toMatchObject({ status: 'error' })
    expect(errorsOf(await metrics(), 'vector-store:memory')).toBe(1)

    lexicalDown = true
    const refused = await ask()
    expect(refused.statusCode).toBe(503)
    expect(refused.json().code).toBe('RECALL_BACKEND_UNAVAILABLE')
    const message = refused.json().message as string
    expect(message).toContain('vector: error (vector-store:memory: vector-store:memory is down (test))')
    expect(message).toContain('lexical: error (lexical-index:bm25: lexical-index:bm25 is down (test))')
    // The embedding leg worked: it is not named.
    expect(message).not.toContain('embedding')
    const after = await metrics()
    expect(errorsOf(after, 'vector-store:memory')).toBe(2)
    expect(errorsOf(after, 'lexical-index:bm25')).toBe(1)
    expect(errorsOf(after, 'embedder:local')).toBe(0)

    vectorDown = false
    lexicalDown = false
    expect((await ask()).statusCode).toBe(200)
    expect(errorsOf(await metrics(), 'vector-store:memory')).toBe(2)
  })
})

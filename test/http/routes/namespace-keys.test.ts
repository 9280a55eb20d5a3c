/**
 * Keys scoped to namespaces, through the whole app: a tenant's key cannot read, write, list, delete or
 * compare another tenant's namespace, and its 403 is decided before any store is called, so neither its
 * message nor its timing depends on whether that namespace exists or what it holds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Providers } from '../../../src/services.js'
import { buildTestApp, type TestApp } from '../../helpers/build.js'

/** Counts every call made to a store's methods. */
function counted<T extends object>(target: T, calls: { n: number }): T {
  return new Proxy(target, {
    get(t, key, receiver) {
      const value = Reflect.get(t, key, receiver)
      if (typeof value !== 'function') return value
      return (...args: unknown[]) => {
        calls.n++
        return (value as (...a: unknown[]) => unknown).apply(t, args)
      }
    }
  })
}

const storeCalls = { n: 0 }
let t: TestApp
const as = (key: string) => ({ authorization: `Bearer ${key}` })

beforeAll(async () => {
  t = await buildTestApp({ API_KEYS: 'k-admin,k-a=tenant-a,k-b=tenant-b|shared', READ_API_KEYS_REQUIRED: 'true' }, (p: Providers) => ({
    ...p, vectors: counted(p.vectors, storeCalls), graph: counted(p.graph, storeCalls), episodes: counted(p.episodes, storeCalls),
    lexical: counted(p.lexical, storeCalls)
  }))
  for (const [key, namespace] of [['k-a', 'tenant-a'], ['k-b', 'tenant-b']]) {
    const r = await t.app.inject({
      method: 'POST', url: '/ingest/documents', headers: as(key!),
      payload: { namespace, documents: [{ id: 'secret', text: `# ${namespace}\n\n${namespace} 的机密文档。` }] }
    })
    expect(r.statusCode, r.body).toBe(200)
  }
})
afterAll(async () => t.close())

describe('keys scoped to namespaces', () => {
  it('a 403 for another tenant\'s namespace calls no store and reads the same whether that namespace exists or not', async () => {
    const requests = (namespace: string) => [
      { method: 'POST' as const, url: '/retrieve', payload: { mode: 'hybrid', query: '机密', namespace } },
      { method: 'GET' as const, url: `/retrieve?mode=graphrag&q=x&namespace=${namespace}` },
      { method: 'GET' as const, url: `/documents?namespace=${namespace}` },
      { method: 'DELETE' as const, url: `/documents/secret?namespace=${namespace}` },
      { method: 'DELETE' as const, url: `/namespaces/${namespace}` },
      { method: 'POST' as const, url: '/ingest/graph', payload: { namespace, entities: [{ id: 'x', name: 'x' }] } },
      { method: 'POST' as const, url: '/retrieve/compare', payload: { query: '机密', namespace: 'tenant-a', arms: [{ mode: 'hybrid' }, { mode: 'hybrid', namespace }] } }
    ]
    for (const namespace of ['tenant-b', 'never-written']) {
      for (const request of requests(namespace)) {
        const before = storeCalls.n
        const r = await t.app.inject({ ...request, headers: as('k-a') })
        expect(r.statusCode, `${request.method} ${request.url}`).toBe(403)
        expect(r.json()).toEqual({
          statusCode: 403, code: 'RECALL_NAMESPACE_FORBIDDEN', error: 'Forbidden', message: `this API key may not use namespace "${namespace}"`
        })
        expect(storeCalls.n, `${request.method} ${request.url}`).toBe(before)
      }
    }
    // nothing of tenant-b changed
    const own = await t.app.inject({ method: 'GET', url: '/documents?namespace=tenant-b', headers: as('k-b') })
    expect(own.json().documents.map((d: { id: string }) => d.id)).toEqual(['secret'])
  })

  it('a scoped key uses its own namespaces; an unscoped key any', async () => {
    const ask = (key: string, namespace: string) =>
      t.app.inject({ method: 'POST', url: '/retrieve', headers: as(key), payload: { mode: 'hybrid', query: '机密文档', namespace, legs: ['lexical'] } })
    const own = await ask('k-a', 'tenant-a')
    expect(own.statusCode).toBe(200)
    expect(own.json().recall_bundle.map((i: { text: string }) => i.text)).toEqual([expect.stringContaining('tenant-a 的机密文档')])
    expect((await ask('k-b', 'shared')).statusCode).toBe(200)
    expect((await ask('k-a', 'default')).statusCode).toBe(403)
    expect((await ask('k-admin', 'tenant-b')).json().recall_bundle).toHaveLength(1)
    const compare = await t.app.inject({
      method: 'POST', url: '/retrieve/compare', headers: as('k-b'),
      payload: { query: '机密', namespace: 'tenant-b', arms: [{ mode: 'hybrid' }, { mode: 'hybrid', namespace: 'shared' }] }
    })
    expect(compare.statusCode).toBe(200)
  })

  it('GET /namespaces lists a scoped key\'s namespaces only', async () => {
    const list = async (key: string) =>
      (await t.app.inject({ method: 'GET', url: '/namespaces', headers: as(key) })).json().namespaces.map((n: { namespace: string }) => n.namespace)
    expect(await list('k-a')).toEqual(['tenant-a'])
    expect(await list('k-b')).toEqual(['tenant-b'])
    expect(await list('k-admin')).toEqual(['tenant-a', 'tenant-b'])
    expect((await t.app.inject({ method: 'GET', url: '/namespaces' })).statusCode).toBe(401)
  })
})

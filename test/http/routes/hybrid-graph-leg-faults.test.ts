/**
 * hybrid's `graph` leg when the graph fails or is slow (issue #41, item 1): it degrades like the other legs, with its
 * own deadline (`GRAPH_TIMEOUT_MS`) and a report saying why; the other legs' answer stands. Alone, a failed graph leg is
 * a 503 naming it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { KnowledgeGraphStore } from '../../../src/providers/knowledge-graph/port.js'
import { BackendUnavailableError } from '../../../src/providers/errors.js'
import { buildTestApp, type TestApp } from '../../helpers/build.js'
import { failingWhen } from '../../helpers/failing-provider.js'

let mode: 'ok' | 'fail' | 'slow' = 'ok'
/** The store's neighbourhood read, held for 2 s while `mode` is `slow`. */
function slowed(graph: KnowledgeGraphStore): KnowledgeGraphStore {
  return new Proxy(graph, {
    get(object, key, receiver) {
      const value = Reflect.get(object, key, receiver)
      if (key !== 'neighbourhood' || typeof value !== 'function') return typeof value === 'function' ? value.bind(object) : value
      return async (...args: unknown[]) => {
        if (mode === 'slow') await new Promise((r) => setTimeout(r, 2000))
        return (value as (...a: unknown[]) => unknown).apply(object, args)
      }
    }
  })
}

let t: TestApp
beforeAll(async () => {
  t = await buildTestApp({ DERIVED_GRAPH: 'false', GRAPH_TIMEOUT_MS: '300', CACHE_TTL_SECONDS: '0' }, (p) => ({
    ...p, graph: failingWhen(slowed(p.graph), () => mode === 'fail', () => new BackendUnavailableError('graph-store', 'connection refused'))
  }))
  const docs = [
    { id: 'a', text: '差旅报销单由财务共享中心审核。' }, { id: 'b', text: '食堂每天七点开门。' }, { id: 'c', text: '访客车辆停在东门外。' }
  ]
  expect((await t.app.inject({ method: 'POST', url: '/ingest/documents', payload: { documents: docs } })).statusCode).toBe(200)
  const graph = { entities: [{ id: 'r', name: '差旅报销', source_chunk_ids: ['a#0'] }] }
  expect((await t.app.inject({ method: 'POST', url: '/ingest/graph', payload: graph })).statusCode).toBe(200)
})
afterAll(async () => t.close())

const ask = (legs: string[]) => t.app.inject({ method: 'POST', url: '/retrieve', payload: { mode: 'hybrid', query: '差旅报销谁审核', legs } })

describe('the graph leg degrades', () => {
  it('answers with the leg when the graph answers', async () => {
    mode = 'ok'
    const r = await ask(['lexical', 'graph'])
    expect(r.json().legs.at(-1)).toEqual(expect.objectContaining({ name: 'graph', status: 'ok', hits: 1 }))
  })

  it('reports an error and keeps the lexical leg\'s answer when the graph fails', async () => {
    mode = 'fail'
    const r = await ask(['lexical', 'graph'])
    expect(r.statusCode, r.body).toBe(200)
    expect(r.json().legs.at(-1)).toEqual(expect.objectContaining({ name: 'graph', status: 'error', reason: expect.stringContaining('connection refused') }))
    expect(r.json().recall_bundle[0].id).toBe('a#0')
    expect(r.json().recall_bundle[0].metadata.legs.graph).toBeUndefined()
  })

  it('reports a timeout at GRAPH_TIMEOUT_MS and keeps the lexical leg\'s answer when the graph is slow', async () => {
    mode = 'slow'
    const started = performance.now()
    const r = await ask(['lexical', 'graph'])
    expect(performance.now() - started).toBeLessThan(1800)
    expect(r.statusCode, r.body).toBe(200)
    expect(r.json().legs.at(-1)).toEqual(expect.objectContaining({ name: 'graph', status: 'timeout' }))
    expect(r.json().recall_bundle[0].id).toBe('a#0')
  })

  it('is a 503 naming the leg when it is the only leg asked and it fails', async () => {
    mode = 'fail'
    const r = await ask(['graph'])
    expect(r.statusCode).toBe(503)
    expect(r.json().message).toContain('graph: error')
  })
})

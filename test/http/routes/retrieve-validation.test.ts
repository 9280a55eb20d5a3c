import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../../helpers/build.js'

let t: TestApp
beforeAll(async () => { t = await buildTestApp({ MAX_QUERY_CHARS: '50', BODY_LIMIT_BYTES: '4096' }) })
afterAll(async () => t.close())

const get = (qs: string) => t.app.inject({ method: 'GET', url: `/retrieve?${qs}` })
const post = (body: unknown) => t.app.inject({ method: 'POST', url: '/retrieve', payload: body as object })

describe('GET /retrieve rejects bad input with 400 and a message naming the problem', () => {
  it.each([
    ['q=hello', 'mode'],
    ['mode=vector&q=hello', 'mode'],
    ['mode=hybrid', 'q'],
    ['mode=hybrid&q=', 'q'],
    ['mode=hybrid&q=hi&top_k=0', 'top_k'],
    ['mode=hybrid&q=hi&top_k=101', 'top_k'],
    ['mode=hybrid&q=hi&top_k=abc', 'top_k'],
    ['mode=hybrid&q=hi&legs=vector,sparse', 'legs'],
    ['mode=hybrid&q=hi&rrf_k=-1', 'rrf_k'],
    ['mode=hybrid&q=hi&window=0', 'window'],
    ['mode=hybrid&q=hi&colour=red', 'colour']
  ])('%s -> names %s', async (qs, field) => {
    const r = await get(qs)
    expect(r.statusCode).toBe(400)
    const body = r.json()
    expect(body).toMatchObject({ statusCode: 400, error: 'Bad Request' })
    expect(body.code).toMatch(/^RECALL_/)
    expect(body.message).toContain(field)
    expect(body).not.toHaveProperty('stack')
  })

  it('lists the allowed modes for an unknown mode', async () => {
    const r = await get('mode=vector&q=hi')
    expect(r.json().message).toContain('hybrid, graphrag, episodic')
  })

  it('rejects a blank query', async () => {
    const r = await get(`mode=hybrid&q=${encodeURIComponent('   ')}`)
    expect(r.statusCode).toBe(400)
    expect(r.json().message).toBe('query is blank')
  })

  it('rejects a query over MAX_QUERY_CHARS, counting characters not bytes', async () => {
    expect((await get(`mode=hybrid&q=${encodeURIComponent('咳'.repeat(50))}`)).statusCode).not.toBe(400)
    const r = await get(`mode=hybrid&q=${encodeURIComponent('咳'.repeat(51))}`)
    expect(r.statusCode).toBe(400)
    expect(r.json().message).toContain('limit is 50')
  })
})

describe('POST /retrieve', () => {
  it.each([
    [{ query: 'hi' }, 'mode'],
    [{ mode: 'hybrid' }, 'query'],
    [{ mode: 'hybrid', query: 'hi', top_k: 1000 }, 'top_k'],
    [{ mode: 'hybrid', query: 'hi', legs: ['dense'] }, 'legs'],
    [{ mode: 'hybrid', query: 'hi', legs: [] }, 'legs'],
    [{ mode: 'hybrid', query: 'hi', weights: { vector: -1 } }, 'weights'],
    [{ mode: 'hybrid', query: 'hi', topk: 3 }, 'topk'],
    [{ mode: 'graphrag', query: 'hi', rrf_k: 10 }, 'rrf_k']
  ])('%o -> 400 naming %s', async (body, field) => {
    const r = await post(body)
    expect(r.statusCode).toBe(400)
    expect(r.json().message).toContain(field)
  })

  it('answers 413 for a body over BODY_LIMIT_BYTES', async () => {
    const r = await post({ mode: 'hybrid', query: 'x'.repeat(5000) })
    expect(r.statusCode).toBe(413)
    expect(r.json()).toMatchObject({ statusCode: 413, code: 'RECALL_PAYLOAD_TOO_LARGE' })
  })

  it('answers 400 for malformed JSON', async () => {
    const r = await t.app.inject({ method: 'POST', url: '/retrieve', payload: '{"mode": ', headers: { 'content-type': 'application/json' } })
    expect(r.statusCode).toBe(400)
    expect(r.json()).not.toHaveProperty('stack')
  })

  it('answers an empty corpus with an empty bundle and the leg statuses', async () => {
    const r = await post({ mode: 'hybrid', query: '咳嗽' })
    expect(r.statusCode).toBe(200)
    const body = r.json()
    expect(body.recall_bundle).toEqual([])
    expect(body.match_strength).toBe('none')
    expect(body.legs.map((l: { name: string; status: string }) => `${l.name}:${l.status}`)).toEqual(['embedding:ok', 'vector:ok', 'lexical:ok'])
  })

  it('answers 404 in the error shape for an unknown route', async () => {
    const r = await t.app.inject({ method: 'GET', url: '/nope' })
    expect(r.statusCode).toBe(404)
    expect(r.json()).toMatchObject({ statusCode: 404, code: 'RECALL_NOT_FOUND' })
  })
})

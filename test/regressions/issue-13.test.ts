import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/build.js'

// Issue 13 through the service: writes are searchable as soon as their request answers, symbols-only
// documents are accepted without lexical tokens, and unit symbols make no stray tokens.
describe('issue 13: the lexical leg at the service', () => {
  let t: TestApp
  beforeAll(async () => { t = await buildTestApp() })
  afterAll(async () => t.close())

  const lexicalIds = async (q: string) =>
    (await t.app.inject({ method: 'GET', url: `/retrieve?mode=hybrid&legs=lexical&top_k=10&q=${encodeURIComponent(q)}` }))
      .json().recall_bundle.map((i: { id: string }) => i.id) as string[]

  it('finds an ingested document in the very next request, and no longer finds it after its delete answered', async () => {
    const ingest = await t.app.inject({ method: 'POST', url: '/ingest/documents', payload: { documents: [{ id: 'fresh', text: '编号 tagfresh 的段落。' }] } })
    expect(ingest.statusCode).toBe(200)
    expect(await lexicalIds('tagfresh')).toEqual(['fresh#0'])
    expect((await t.app.inject({ method: 'DELETE', url: '/documents/fresh' })).statusCode).toBe(200)
    expect(await lexicalIds('tagfresh')).toEqual([])
  })

  it('accepts a document of symbols and emoji only; it has no lexical tokens and is listed', async () => {
    const r = await t.app.inject({ method: 'POST', url: '/ingest/documents', payload: { documents: [{ id: 'emoji', text: '😀👍🏽 ★☆ →→ ❤️' }] } })
    expect(r.statusCode).toBe(200)
    expect(r.json().chunks).toBe(1)
    expect((await t.app.inject({ method: 'POST', url: '/analyze', payload: { text: '😀👍🏽 ★☆ →→ ❤️' } })).json().tokens).toEqual([])
    expect(await lexicalIds('😀')).toEqual([])
    expect((await t.app.inject({ method: 'GET', url: '/documents' })).json().documents.map((d: { id: string }) => d.id)).toContain('emoji')
  })

  it('does not let 30℃ match 维生素C', async () => {
    await t.app.inject({ method: 'POST', url: '/ingest/documents', payload: { documents: [
      { id: 'vitamin', text: '维生素C 每日摄入量。' }, { id: 'fever', text: '体温 30℃ 以下。' }
    ] } })
    expect(await lexicalIds('30℃')).toEqual(['fever#0'])
    expect(await lexicalIds('维生素C')).toEqual(['vitamin#0'])
  })
})

/**
 * graphrag's passage fallback reads the documents' lexical index, which a documents write changes without moving
 * graphrag's generation (a write that derives nothing new leaves the graph as it was). So its answers are never cached,
 * while an answer from the graph alone still is.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../../helpers/build.js'

const NS = 'passages-cache'
let t: TestApp
beforeAll(async () => {
  t = await buildTestApp()
  const r = await t.app.inject({ method: 'POST', url: '/ingest/documents', payload: { namespace: NS, documents: [
    { id: 'tea', text: '张三在杭州开设了一家茶馆，生意兴隆。' },
    { id: 'hill', text: '李四喜欢爬山，周末常去。' }
  ] } })
  expect(r.statusCode, r.body).toBe(200)
})
afterAll(async () => t.close())

const ask = async (query: string) => {
  const r = await t.app.inject({ method: 'POST', url: '/retrieve', payload: { mode: 'graphrag', query, namespace: NS } })
  expect(r.statusCode, r.body).toBe(200)
  return r.json() as { cached: boolean; recall_bundle: Array<{ metadata: { matched_by: string } }> }
}

describe('graphrag answers from the passage fallback are not cached', () => {
  it('asks twice a question no entity name, part of a name or description reaches: both run the mode', async () => {
    const first = await ask('周末常去做什么')
    expect(first.recall_bundle.length).toBeGreaterThan(0)
    expect(first.recall_bundle.every((item) => item.metadata.matched_by === 'evidence')).toBe(true)
    const second = await ask('周末常去做什么')
    expect(second.cached).toBe(false)
    expect(second.recall_bundle).toEqual(first.recall_bundle)
  })

  it('an answer from the graph alone is cached as before', async () => {
    const first = await ask('茶馆')
    expect(first.recall_bundle[0]?.metadata.matched_by).toBe('name')
    expect((await ask('茶馆')).cached).toBe(true)
  })
})

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../../helpers/build.js'

// Two Episodes, each with one facet. F1's label is close to the question; F2 has an unrelated label and
// the only anchor text. Per collection (m-flow) the best hit of each collection scores 0, so F1 (best
// search text) and F2 (the only anchor text) both score 0 and both Episodes cost 0 + 0.1 + 0.05 = 0.15
// (the tier-1 discount of docs/episodic.md, step 8): a tie, ordered by id. One pool per query keeps F2's weak anchor weak.
const body = {
  episodes: [
    { id: 'T1', name: '支付回调改造', summary: '【支付回调改造的重试策略】失败后按 1、5、30 分钟重试三次。',
      facets: [{ id: 'TF1', search_text: '支付回调改造的重试策略' }] },
    { id: 'T2', name: '年会节目', summary: '【年会节目的彩排安排】周四晚上在大会议室彩排。',
      facets: [{ id: 'TF2', search_text: '年会节目的彩排安排', anchor_text: '周四晚上在大会议室彩排' }] }
  ]
}

let t: TestApp
beforeAll(async () => {
  t = await buildTestApp({ CACHE_TTL_SECONDS: '0' })
  const r = await t.app.inject({ method: 'POST', url: '/ingest/episodes', payload: body })
  expect(r.statusCode, r.body).toBe(200)
})
afterAll(async () => t.close())

const ask = (episodic?: Record<string, unknown>) =>
  t.app.inject({ method: 'POST', url: '/retrieve', payload: { mode: 'episodic', query: '支付回调失败以后怎么重试', ...(episodic ? { episodic } : {}) } })

describe('episodic normalisation over HTTP', () => {
  it('collection: the two Episodes tie at 0.15; the response says so and match_strength is at most medium', async () => {
    const r = await ask({ normalisation: 'collection' })
    expect(r.statusCode, r.body).toBe(200)
    const answer = r.json()
    expect(answer.recall_bundle.map((i: { id: string }) => i.id)).toEqual(['T1', 'T2'])
    for (const item of answer.recall_bundle) {
      expect(item.metadata.cost).toBeCloseTo(0.15, 9)
      expect(item.metadata.normalisation).toBe('collection')
    }
    expect(answer.tie).toEqual({ ids: ['T1', 'T2'], value: answer.recall_bundle[0].metadata.cost, ordered_by: 'id' })
    expect(['medium', 'weak']).toContain(answer.match_strength)
  })

  it('query (the default): the weak anchor stays weak, T1 comes first alone, no tie', async () => {
    const answer = (await ask()).json()
    expect(answer.recall_bundle[0].id).toBe('T1')
    expect(answer.recall_bundle[0].metadata.normalisation).toBe('query')
    expect(answer.recall_bundle[1].metadata.cost).toBeGreaterThan(answer.recall_bundle[0].metadata.cost)
    expect(answer).not.toHaveProperty('tie')
  })

  it('an unknown rule is a 400 naming the allowed values', async () => {
    const r = await ask({ normalisation: 'global' })
    expect(r.statusCode).toBe(400)
    expect(r.json().message).toMatch(/normalisation/)
    expect(r.json().message).toMatch(/query, collection/)
  })

  it('the OpenAPI document describes the option with its values and default', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json()
    const schema = doc.paths['/retrieve'].post.requestBody.content['application/json'].schema
    const option = schema.properties.episodic.properties.normalisation
    expect(option.enum).toEqual(['query', 'collection'])
    expect(option.default).toBe('query')
    expect(option.description).toMatch(/m-flow/)
  })
})

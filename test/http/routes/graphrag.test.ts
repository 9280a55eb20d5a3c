import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../../helpers/build.js'

const graph = {
  entities: [
    { id: 'pku', name: '北京大学', aliases: ['北大', 'PKU'], type: '机构', description: '位于北京的综合性大学', source: 'org/pku.md', source_chunk_ids: ['pku#0'] },
    { id: 'beijing', name: '北京', type: '地点', description: '中国首都' },
    { id: 'haidian', name: '海淀区', type: '地点', description: '北京市的一个区' },
    { id: 'auth', name: '鉴权中间件', aliases: ['auth middleware'], type: '系统', description: '校验访问令牌的服务组件' }
  ],
  relations: [
    { source: 'pku', target: 'beijing', type: '位于', description: '校址', weight: 0.9 },
    { source: 'pku', target: 'haidian', type: '位于', weight: 0.5 },
    { source: 'haidian', target: 'beijing', type: '属于', weight: 1 }
  ]
}

let t: TestApp
beforeAll(async () => { t = await buildTestApp() })
afterAll(async () => t.close())

const ask = async (query: string, extra: Record<string, unknown> = {}) => {
  const r = await t.app.inject({ method: 'POST', url: '/retrieve', payload: { mode: 'graphrag', query, ...extra } })
  expect(r.statusCode, r.body).toBe(200)
  return r.json()
}

describe('graphrag over HTTP on the embedded graph', () => {
  it('answers an empty graph with an empty bundle and a skipped leg, not an error', async () => {
    const body = await ask('北京大学在哪里')
    expect(body.recall_bundle).toEqual([])
    expect(body.legs).toEqual([expect.objectContaining({ name: 'graph', status: 'skipped', reason: 'the knowledge graph of namespace "default" is empty' })])
    expect(body.match_strength).toBe('none')
  })

  it('rejects a relation to an unknown entity with a 400 listing the missing ids, writing nothing', async () => {
    const r = await t.app.inject({ method: 'POST', url: '/ingest/graph', payload: {
      entities: [{ id: 'x', name: 'X' }],
      relations: [{ source: 'x', target: 'ghost', type: 't' }, { source: 'phantom', target: 'x', type: 't' }]
    } })
    expect(r.statusCode).toBe(400)
    expect(r.json().message).toContain('relations[0].target: unknown entity "ghost"')
    expect(r.json().message).toContain('relations[1].source: unknown entity "phantom"')
    expect((await ask('X')).recall_bundle).toEqual([])
  })

  it('imports a graph and finds the longest named entity first, then its neighbours', async () => {
    const r = await t.app.inject({ method: 'POST', url: '/ingest/graph', payload: graph })
    expect(r.json()).toEqual({ entities: 4, relations: 3, generation: expect.any(Number) })
    const body = await ask('北京大学在哪个区')
    const [first, ...rest] = body.recall_bundle
    // 北京大学 is named; 北京 overlaps it and loses (longest match wins).
    expect(first.id).toBe('pku')
    expect(first.score).toBe(1)
    expect(first.metadata).toMatchObject({ entity_id: 'pku', entity_name: '北京大学', matched_by: 'name', hop: 0, score_kind: 'graph_match', source_chunk_ids: ['pku#0'] })
    expect(first.metadata.relations.map((x: { target: string }) => x.target)).toEqual(['beijing', 'haidian'])
    expect(first.text).toContain('北京大学')
    expect(rest.map((i: { id: string }) => i.id)).toEqual(['beijing', 'haidian'])
    expect(rest.every((i: { score: number; metadata: { hop: number } }) => i.score === 0.6 && i.metadata.hop === 1)).toBe(true)
    expect(body.match_strength).toBe('strong')
  })

  it('matches aliases case-insensitively, and says so', async () => {
    const body = await ask('pku 的校址')
    expect(body.recall_bundle[0].metadata).toMatchObject({ entity_id: 'pku', matched_by: 'alias' })
    expect(body.match_strength).toBe('medium')
  })

  it('falls back to keywords over names and descriptions below any name match', async () => {
    const body = await ask('哪个组件校验令牌')
    expect(body.recall_bundle[0].id).toBe('auth')
    expect(body.recall_bundle[0].metadata.matched_by).toBe('keyword')
    expect(body.recall_bundle[0].score).toBeLessThan(0.6)
    expect(body.match_strength).toBe('weak')
  })

  it('treats quotes, backslashes, Cypher and braces as data, in questions and in names', async () => {
    const hostile = ['") MATCH (n) DETACH DELETE n //', "' OR 1=1 --", '\\\\u0000 {x: $y}', 'CALL db.labels() YIELD label RETURN label', '}{][)(*?+^$|.']
    for (const q of hostile) await ask(q)
    const names = hostile.map((name, i) => ({ id: `h${i}`, name }))
    const r = await t.app.inject({ method: 'POST', url: '/ingest/graph', payload: { entities: names } })
    expect(r.statusCode).toBe(200)
    const body = await ask(`问题里有 ${hostile[0]} 这个名字`)
    expect(body.recall_bundle[0].id).toBe('h0')
    expect((await ask('北京大学')).recall_bundle[0].id).toBe('pku')
  })

  it('deletes an entity with its relations; 404 for an unknown id', async () => {
    expect((await t.app.inject({ method: 'DELETE', url: '/entities/haidian' })).statusCode).toBe(200)
    expect((await t.app.inject({ method: 'DELETE', url: '/entities/haidian' })).statusCode).toBe(404)
    const body = await ask('北京大学')
    expect(body.recall_bundle[0].metadata.relations.map((x: { target: string }) => x.target)).toEqual(['beijing'])
  })

  it('rejects hybrid options in graphrag and takes max_relations', async () => {
    const bad = await t.app.inject({ method: 'POST', url: '/retrieve', payload: { mode: 'graphrag', query: '北京', window: 5 } })
    expect(bad.statusCode).toBe(400)
    const body = await ask('北京大学', { max_relations: 1 })
    expect(body.recall_bundle[0].metadata.relations).toHaveLength(1)
  })
})

/**
 * hybrid's `graph` leg over HTTP (issue #41, item 1), on the embedded graph and on Neo4j: the imported graph reached
 * from the question by name, one hop, back to the chunks each entity cites. Expected values by hand from the graph:
 * the question names 差旅报销 (1.0 on trip#0); its neighbour 财务共享中心 (0.6) cites trip#0 first (the chunk the named
 * entity cites: support 1), then center#0 (0.6/√2 = 0.4243); 王敏 is two hops away and not reached. So the graph leg
 * ranks trip#0 (1.6) then center#0 (0.4243).
 */
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { buildTestApp, type TestApp } from '../../helpers/build.js'

const documents = [
  { id: 'trip', source: 'finance/trip.md', text: '# 差旅报销\n\n差旅报销单提交后由财务共享中心审核。' },
  { id: 'center', source: 'org/center.md', text: '# 部门介绍\n\n该中心的负责人是王敏，办公地点在三号楼。' },
  { id: 'canteen', source: 'life/canteen.md', text: '# 食堂\n\n食堂每天七点开门，周末不营业。' },
  { id: 'parking', source: 'life/parking.md', text: '# 停车\n\n访客车辆停在东门外的停车场。' }
]
const graph = {
  entities: [
    { id: 'reimb', name: '差旅报销', source_chunk_ids: ['trip#0'] },
    { id: 'fsc', name: '财务共享中心', source_chunk_ids: ['trip#0', 'center#0'] },
    { id: 'wang', name: '王敏', source_chunk_ids: ['center#0'] }
  ],
  relations: [
    { source: 'reimb', target: 'fsc', type: '审核部门' },
    { source: 'fsc', target: 'wang', type: '负责人' }
  ]
}
const QUESTION = '差旅报销归哪个部门审核'
const VIA = { type: '审核部门', source: 'reimb', target: 'fsc' }

const backends = [
  { name: 'embedded', env: (): Record<string, string> => ({}) },
  { name: 'neo4j', env: (): Record<string, string> => ({ GRAPH_BACKEND: 'neo4j', NEO4J_URI: inject('neo4jUri'), GRAPH_TIMEOUT_MS: '30000' }) }
]

for (const backend of backends) {
  describe(`hybrid with the graph leg (${backend.name})`, () => {
    let t: TestApp
    const ns = `graphleg-${randomBytes(4).toString('hex')}`
    const empty = `${ns}-nograph`
    const ask = async (payload: Record<string, unknown>) => {
      const r = await t.app.inject({ method: 'POST', url: '/retrieve', payload: { mode: 'hybrid', namespace: ns, query: QUESTION, top_k: 5, ...payload } })
      expect(r.statusCode, r.body).toBe(200)
      return r.json()
    }

    beforeAll(async () => {
      // no derived graph: the namespaces hold exactly the imported graph (and `empty` none)
      t = await buildTestApp({ DERIVED_GRAPH: 'false', ...backend.env() })
      for (const namespace of [ns, empty]) {
        const w = await t.app.inject({ method: 'POST', url: '/ingest/documents', payload: { namespace, documents } })
        expect(w.statusCode, w.body).toBe(200)
      }
      const g = await t.app.inject({ method: 'POST', url: '/ingest/graph', payload: { namespace: ns, ...graph } })
      expect(g.statusCode, g.body).toBe(200)
    })
    afterAll(async () => {
      for (const namespace of [ns, empty]) await t.app.services.writePath.write(namespace, { kind: 'namespace', op: 'drop' }).catch(() => undefined)
      await t.close()
    })

    it('alone, ranks the chunks by their paths\' summed weights and explains each by entity, relation and hop', async () => {
      const body = await ask({ legs: ['graph'] })
      expect(body.legs).toEqual([
        expect.objectContaining({ name: 'embedding', status: 'skipped' }), expect.objectContaining({ name: 'vector', status: 'skipped' }),
        expect.objectContaining({ name: 'lexical', status: 'skipped' }), expect.objectContaining({ name: 'graph', status: 'ok', hits: 2 })
      ])
      expect(body.recall_bundle.map((i: { id: string }) => i.id)).toEqual(['trip#0', 'center#0'])
      const [trip, center] = body.recall_bundle
      expect(trip.metadata.legs).toEqual({ graph: { rank: 1, score: 1.6 } })
      expect(trip.metadata.graph_paths).toEqual([
        { entity_id: 'reimb', entity_name: '差旅报销', matched_by: 'name', hop: 0, weight: 1 },
        { entity_id: 'fsc', entity_name: '财务共享中心', matched_by: 'name', hop: 1, relation: VIA, weight: 0.6 }
      ])
      expect(center.metadata.legs).toEqual({ graph: { rank: 2, score: 0.4243 } })
      expect(center.metadata.graph_paths).toEqual([
        { entity_id: 'fsc', entity_name: '财务共享中心', matched_by: 'name', hop: 1, relation: VIA, weight: 0.4243 }
      ])
    })

    it('with the other two legs, brings in the chunk only the graph reaches (it shares no word of the question)', async () => {
      const body = await ask({ legs: ['vector', 'lexical', 'graph'], window: 2 })
      expect(body.legs.map((l: { name: string; status: string }) => `${l.name}:${l.status}`)).toEqual(['embedding:ok', 'vector:ok', 'lexical:ok', 'graph:ok'])
      const center = body.recall_bundle.find((i: { id: string }) => i.id === 'center#0')
      expect(center.metadata.legs.graph).toEqual({ rank: 2, score: 0.4243 })
      expect(center.metadata.convex.graph_weight).toBeCloseTo(1 / 3, 6)
      expect(center.metadata.convex.contributions.graph).toBe(0)
      // trip#0 is first in every leg: 1 in each normalised leg, weights 0.5·2/3 + 0.5·2/3 + 1/3
      expect(body.recall_bundle[0].id).toBe('trip#0')
      expect(body.recall_bundle[0].score).toBeCloseTo(1, 6)
    })

    it('with RRF, the graph leg contributes weight / (k + rank)', async () => {
      const body = await ask({ legs: ['lexical', 'graph'], fusion: 'rrf', weights: { graph: 2 } })
      const center = body.recall_bundle.find((i: { id: string }) => i.id === 'center#0')
      expect(center.metadata.rrf.contributions.graph).toBeCloseTo(2 / 62, 6)
    })

    it('answers without the graph leg exactly as before: no graph report, no graph explanation', async () => {
      const body = await ask({})
      expect(body.legs.map((l: { name: string }) => l.name)).toEqual(['embedding', 'vector', 'lexical'])
      for (const item of body.recall_bundle) {
        expect(item.metadata.graph_paths).toBeUndefined()
        expect(item.metadata.legs.graph).toBeUndefined()
        expect(item.metadata.convex.graph_weight).toBeUndefined()
      }
    })

    it('takes the leg from the query string too', async () => {
      const r = await t.app.inject({ method: 'GET', url: `/retrieve?mode=hybrid&namespace=${ns}&legs=graph,lexical&q=${encodeURIComponent(QUESTION)}` })
      expect(r.statusCode, r.body).toBe(200)
      expect(r.json().legs.at(-1)).toEqual(expect.objectContaining({ name: 'graph', status: 'ok' }))
    })

    it('keeps only the chunks the filter keeps', async () => {
      const body = await ask({ legs: ['graph'], filter: { doc_ids: ['center'] } })
      expect(body.recall_bundle.map((i: { id: string }) => i.id)).toEqual(['center#0'])
    })

    it('skips the leg, saying why, on a namespace without a graph; the other legs answer', async () => {
      const r = await t.app.inject({ method: 'POST', url: '/retrieve', payload: { mode: 'hybrid', namespace: empty, query: QUESTION, legs: ['lexical', 'graph'] } })
      expect(r.statusCode, r.body).toBe(200)
      expect(r.json().legs.at(-1)).toEqual(expect.objectContaining({ name: 'graph', status: 'skipped', reason: `the knowledge graph of namespace "${empty}" is empty` }))
      expect(r.json().recall_bundle.length).toBeGreaterThan(0)
    })

    it('reads the part of the graph `structures` names: nothing derived here, so `derived` reaches nothing', async () => {
      const body = await ask({ legs: ['graph'], structures: 'derived' })
      expect(body.recall_bundle).toEqual([])
      expect(body.legs.at(-1)).toEqual(expect.objectContaining({ name: 'graph', status: 'skipped', reason: `the knowledge graph of namespace "${ns}" is empty` }))
      expect((await ask({ legs: ['graph'], structures: 'both' })).recall_bundle.map((i: { id: string }) => i.id)).toEqual(['trip#0', 'center#0'])
    })

    it('names no entity: the leg answers nothing and the other legs answer', async () => {
      const body = await ask({ legs: ['lexical', 'graph'], query: '食堂几点开门' })
      expect(body.legs.at(-1)).toEqual(expect.objectContaining({ name: 'graph', status: 'ok', hits: 0 }))
      expect(body.recall_bundle[0].id).toBe('canteen#0')
    })

    it('refuses bad input with a 400 naming the field and the value', async () => {
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ legs: ['graph', 'vectors'] }, 'legs'],
        [{ legs: ['graph'], graph_weight: 1.5 }, 'graph_weight'],
        [{ legs: ['graph'], fusion: 'rrf', graph_weight: 0.2 }, 'graph_weight apply to fusion=convex only'],
        [{ structures: 'derived' }, 'not mode=hybrid without "graph" in legs']
      ]
      for (const [payload, says] of cases) {
        const r = await t.app.inject({ method: 'POST', url: '/retrieve', payload: { mode: 'hybrid', namespace: ns, query: QUESTION, ...payload } })
        expect(r.statusCode, JSON.stringify(payload)).toBe(400)
        expect(r.json().message).toContain(says)
      }
      const q = await t.app.inject({ method: 'GET', url: `/retrieve?mode=hybrid&legs=graph,graph,graph,graph&q=x` })
      expect(q.statusCode).toBe(400)
      expect(q.json().message).toContain('legs')
    })
  })
}

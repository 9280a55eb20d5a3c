import { randomBytes } from 'node:crypto'
import { describe, expect, inject, it } from 'vitest'
import { NO_LOCK } from '../../src/corpus/write-lock.js'
import type { TestApp } from '../helpers/build.js'
import { runQdrantUrl, sharedQdrantEnv, useTwoReplicas } from '../helpers/two-replicas.js'

const qdrantUrl = runQdrantUrl('the concurrent Episode and graph writers tests')

// The control run of docs/scale-out-state.md: CW_LOCK=off takes the write lock away from both replicas.
const lockOff = process.env.CW_LOCK === 'off'
const ROUNDS = Number(process.env.CW_ROUNDS ?? 8)

// Two replicas (app instances) over one real Qdrant, the run's Neo4j and Redis write the same Episode ids and
// the same graph entities at once, each its own version: each must end as one whole version in every store.
describe.skipIf(!qdrantUrl)('two replicas writing the same Episode / graph entity at once', () => {
  const env = {
    ...sharedQdrantEnv('cweg', qdrantUrl),
    GRAPH_BACKEND: 'neo4j', NEO4J_URI: inject('neo4jUri'), GRAPH_TIMEOUT_MS: '30000', VECTOR_TIMEOUT_MS: '30000' // a loaded machine
  }
  const namespace = `race-${randomBytes(3).toString('hex')}`
  let a: TestApp
  let b: TestApp
  useTwoReplicas(env, (pair) => {
    ;({ a, b } = pair)
  }, lockOff ? { writeLock: NO_LOCK } : {})

  // Version `v` of Episode `id`: A has 2 facets of 1 point each, B 3 facets of 2 points; every id and text says whose it is.
  const episode = (id: string, v: 'A' | 'B') => {
    const facets = v === 'A' ? 2 : 3
    const points = v === 'A' ? 1 : 2
    return {
      id, name: `事件 ${id} 版本 ${v}`, summary: `事件 ${id} 的摘要，版本 ${v}。`,
      facets: Array.from({ length: facets }, (_, i) => ({
        id: `${id}-${v}-f${i}`, search_text: `事件 ${id} 版本 ${v} 的第 ${i + 1} 个方面`,
        points: Array.from({ length: points }, (_, k) => ({ id: `${id}-${v}-f${i}-p${k}`, search_text: `版本 ${v} 方面 ${i + 1} 要点 ${k + 1}：${id}` }))
      }))
    }
  }
  const versionOf = (text: string) => /版本 ([AB])/.exec(text)?.[1]

  it('every Episode ends as one whole version in the graph and in each of its vector collections', async () => {
    const ids = Array.from({ length: ROUNDS }, (_, i) => `ep-${i}`)
    const writes = await Promise.all(ids.flatMap((id) => [
      a.app.inject({ method: 'POST', url: '/ingest/episodes', payload: { namespace, episodes: [episode(id, 'A')] } }),
      b.app.inject({ method: 'POST', url: '/ingest/episodes', payload: { namespace, episodes: [episode(id, 'B')] } })
    ]))
    for (const w of writes) expect(w.statusCode, w.body).toBe(200)

    const { services } = a.app
    const vectors = new Map<string, Map<string, string[]>>() // collection -> episode id -> point ids
    for (const c of ['Episode_summary', 'Facet_search_text', 'FacetPoint_search_text']) {
      const byEpisode = new Map<string, string[]>()
      for await (const { id, payload } of services.vectors.scroll(`${env.COLLECTION_PREFIX}${c}`, namespace)) {
        byEpisode.set(payload.doc_id, [...(byEpisode.get(payload.doc_id) ?? []), `${id}:${versionOf(payload.text)}`])
      }
      vectors.set(c, byEpisode)
    }
    const graph = await services.episodes.describe(namespace, ids)
    const mixed: string[] = []
    for (const id of ids) {
      const node = graph.nodes.get(id)
      const v = versionOf(String(node?.summary ?? ''))
      const expected = episode(id, v === 'B' ? 'B' : 'A')
      const facetIds = expected.facets.map((f) => f.id).sort()
      const pointIds = expected.facets.flatMap((f) => f.points.map((p) => p.id)).sort()
      const inGraph = graph.edges.filter((e) => e.from === id && e.relationship_name === 'has_facet').map((e) => e.to).sort()
      const got = {
        graph: inGraph,
        summary: vectors.get('Episode_summary')!.get(id) ?? [],
        facets: (vectors.get('Facet_search_text')!.get(id) ?? []).sort(),
        points: (vectors.get('FacetPoint_search_text')!.get(id) ?? []).sort()
      }
      const want = {
        graph: facetIds,
        summary: [`${id}:${v}`],
        facets: facetIds.map((f) => `${f}:${v}`),
        points: pointIds.map((p) => `${p}:${v}`)
      }
      if (v === undefined || JSON.stringify(got) !== JSON.stringify(want)) mixed.push(`${id}: ${JSON.stringify(got)}`)
    }
    expect(mixed, `Episodes that are not one whole version:\n${mixed.join('\n')}`).toEqual([])
  })

  // Version `v` of graph entity `id` and its relation to a shared entity; the relation id is derived, so both write the same one.
  const graphBody = (id: string, v: 'A' | 'B') => ({
    namespace,
    entities: [
      { id, name: `实体${id}${v}`, aliases: v === 'A' ? [`${id}-A1`, `${id}-A2`] : [`${id}-B1`], description: `版本 ${v} 的实体 ${id}`, type: `type-${v}` },
      { id: `${id}-hub`, name: `枢纽${id}`, description: `版本 ${v} 的枢纽` }
    ],
    relations: [{ source: id, target: `${id}-hub`, type: 'linked_to', description: `版本 ${v} 的关系`, weight: v === 'A' ? 1 : 2 }]
  })

  it('every graph entity and relation ends as one whole version, and no write fails', async () => {
    const ids = Array.from({ length: ROUNDS }, (_, i) => `ent-${i}`)
    const writes = await Promise.all(ids.flatMap((id) => [
      a.app.inject({ method: 'POST', url: '/ingest/graph', payload: graphBody(id, 'A') }),
      b.app.inject({ method: 'POST', url: '/ingest/graph', payload: graphBody(id, 'B') })
    ]))
    const failed = writes.filter((w) => w.statusCode !== 200).map((w) => `${w.statusCode} ${w.body}`)
    expect(failed, failed.join('\n')).toEqual([])

    const { graph } = a.app.services
    const around = await graph.neighbourhood(namespace, ids)
    const mixed: string[] = []
    for (const id of ids) {
      const entity = around.entities.find((e) => e.id === id)
      const hub = around.entities.find((e) => e.id === `${id}-hub`)
      const relations = around.relations.filter((r) => r.source === id)
      const v = versionOf(entity?.description ?? '') as 'A' | 'B' | undefined
      const whole = v !== undefined && entity?.name === `实体${id}${v}` && entity.type === `type-${v}` &&
        JSON.stringify([...entity.aliases].sort()) === JSON.stringify(graphBody(id, v).entities[0]!.aliases)
      // One request writes all three: they must all be of the version whose request came last.
      const sameVersion = relations.length === 1 && versionOf(relations[0]!.description ?? '') === v &&
        relations[0]!.weight === (v === 'A' ? 1 : 2) && versionOf(hub?.description ?? '') === v
      if (!whole || !sameVersion) mixed.push(`${id}: ${JSON.stringify({ entity, hub, relations })}`)
    }
    expect(mixed, mixed.join('\n')).toEqual([])
    expect(await graph.count(namespace)).toEqual({ entities: 2 * ROUNDS, relations: ROUNDS })
  })
})

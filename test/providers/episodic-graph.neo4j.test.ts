import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { startNeo4j, type Neo4jServer } from '../../scripts/neo4j/server.js'
import { createNeo4jConnection, type Neo4jConnection } from '../../src/providers/neo4j/connection.js'
import { Neo4jEpisodicGraphStore } from '../../src/providers/episodic-graph/neo4j.js'
import { describeEpisodicGraphStoreContract } from '../contracts/episodic-graph.contract.js'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { runScenario, type ScenarioInput, type ScenarioOutput } from '../../adapters/episodic/scenario.js'
import type { EpisodeGraph, EpisodicNode, GraphFragment, ProjectionRequest } from '../../src/providers/episodic-graph/port.js'
import { EmbeddedEpisodicGraphStore } from '../../src/providers/episodic-graph/embedded.js'
import { relevantIds } from '../../src/providers/episodic-graph/projection.js'
import { rng } from '../../bench/lib/synthetic.js'
import { resolveEpisodicConfig } from '../../adapters/episodic/config.js'
import { runEpisodicPipeline, type PipelineGraph } from '../../adapters/episodic/pipeline.js'
import { preprocessQuery } from '../../adapters/episodic/preprocess.js'

// The shared server of test/setup/neo4j.ts; a run without that setup (a narrowed config) starts its own.
let server: Neo4jServer | undefined
let connection: Neo4jConnection
let store: Neo4jEpisodicGraphStore
const namespaces: string[] = []

beforeAll(async () => {
  let uri: string | undefined = inject('neo4jUri')
  if (!uri) {
    server = await startNeo4j()
    uri = server.uri
  }
  connection = createNeo4jConnection({ uri, timeoutMs: 30_000 })
  store = new Neo4jEpisodicGraphStore({ connection })
})

afterAll(async () => {
  for (const ns of namespaces) await store.dropNamespace(ns)
  await connection?.close()
  await server?.stop()
})

/** A namespace no other test or test file uses (they share the server), dropped at the end. */
function freshNamespace(): string {
  const ns = `test-${randomUUID().slice(0, 13)}`
  namespaces.push(ns)
  return ns
}

/** The store's projection and description in one namespace, as the pipeline reaches a graph. */
const within = (ns: string): PipelineGraph => ({
  project: (request) => store.project(ns, request),
  describe: (ids) => store.describe(ns, ids)
})

describeEpisodicGraphStoreContract('neo4j', async () => new Neo4jEpisodicGraphStore({ connection }))

describe('Neo4jEpisodicGraphStore', () => {
  it('keeps namespaces apart: a projection never leaves its own', async () => {
    const a = freshNamespace()
    const b = freshNamespace()
    const write = (ns: string, summary: string) =>
      store.apply(ns, {
        entities: [{ id: 'N1', type: 'Entity', name: 'API' }],
        episodes: [{ episode: { id: 'E1', type: 'Episode', name: 'e', summary }, nodes: [],
          edges: [{ from: 'E1', to: 'N1', relationship_name: 'involves_entity', edge_text: 'API' }] }]
      })
    await write(a, 'in a')
    await write(b, 'in b')
    expect((await store.describe(a, ['N1'])).nodes.get('E1')?.summary).toBe('in a')
    expect((await store.describe(b, ['N1'])).nodes.get('E1')?.summary).toBe('in b')
    await store.apply(b, { deleteEpisodeIds: ['E1'] })
    expect((await store.describe(a, ['N1'])).nodes.has('E1')).toBe(true)
    expect((await store.nodeTypes(b, ['E1', 'N1'])).size).toBe(0)
  })

  it('projects both phases, and describes, in one round trip each', async () => {
    const ns = freshNamespace()
    await store.apply(ns, {
      entities: [{ id: 'N1', type: 'Entity', name: 'API' }],
      episodes: [{ episode: { id: 'E1', type: 'Episode', name: 'e', summary: 's' },
        nodes: [{ id: 'F1', type: 'Facet', name: 'f', search_text: 'f' }],
        edges: [{ from: 'E1', to: 'F1', relationship_name: 'has_facet', edge_text: 'f' },
          { from: 'F1', to: 'N1', relationship_name: 'involves_entity', edge_text: 'API (in: f)' }] }]
    })
    let calls = 0
    const run = connection.run.bind(connection)
    // The store names its view of the connection (`named`); the view must count too.
    const counting: typeof connection = { ...connection, run: (async (...args: Parameters<typeof run>) => { calls++; return run(...args) }) as typeof run, named: () => counting }
    const counted = new Neo4jEpisodicGraphStore({ connection: counting })
    await counted.nodeTypes(ns, ['E1']) // schema set-up happens on first use
    calls = 0
    // Phase 1 from N1 reaches F1, phase 2 from F1 reaches E1.
    const f = await counted.project(ns, { relevant_ids: ['N1'], best_by_id: new Map([['N1', 0]]), max_ids: 2, episode_hit_ids: [] })
    expect(calls).toBe(1)
    expect([...f.nodes.keys()].sort()).toEqual(['E1', 'F1', 'N1'])
    expect(f.edges).toHaveLength(2)
    calls = 0
    expect([...(await counted.describe(ns, ['N1', 'E1'])).nodes.keys()].sort()).toEqual(['E1', 'F1', 'N1'])
    expect(calls).toBe(1)
  })

  it('sends only the retrieved labels\' texts, and the other edges marked withheld', async () => {
    const ns = freshNamespace()
    await store.apply(ns, {
      entities: [{ id: 'N1', type: 'Entity', name: 'API' }],
      episodes: [{ episode: { id: 'E1', type: 'Episode', name: 'e', summary: 's' },
        nodes: [{ id: 'F1', type: 'Facet', name: 'f', search_text: 'f' }],
        edges: [{ from: 'E1', to: 'F1', relationship_name: 'has_facet', edge_text: 'f: 只改响应层' },
          { from: 'E1', to: 'N1', relationship_name: 'involves_entity', edge_text: 'API | 对外接口' }] }]
    })
    const f = await store.project(ns, { relevant_ids: ['E1'], best_by_id: new Map([['E1', 0]]), max_ids: 1, episode_hit_ids: [], retrieved_labels: new Set(['f: 只改响应层']) })
    const edge = (rel: string) => f.edges.find((e) => e.relationship_name === rel)!
    expect(edge('has_facet')).toMatchObject({ edge_text: 'f: 只改响应层' })
    expect(edge('has_facet').label_withheld).toBeUndefined()
    expect(edge('involves_entity')).toMatchObject({ edge_text: null, label_withheld: true })
    expect((await store.describe(ns, ['E1'])).edges.find((e) => e.relationship_name === 'involves_entity')?.edge_text).toBe('API | 对外接口')
  })
})

describe('the scoring projection on Neo4j is the in-process one', () => {
  it('returns the same nodes and edges as the embedded store for capped two-phase requests, strays and labels', async () => {
    const random = rng(11)
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!
    const entities = Array.from({ length: 12 }, (_, k): EpisodicNode => ({ id: `N${k}`, type: 'Entity', name: `n${k}` }))
    const episodes = Array.from({ length: 40 }, (_, i): EpisodeGraph => {
      const facets = Array.from({ length: 1 + (i % 3) }, (_, j) => `E${i}F${j}`)
      const links = [...new Set([pick(entities).id, pick(entities).id])]
      return {
        episode: { id: `E${i}`, type: 'Episode', name: `e${i}`, summary: 's', created_at: 1_700_000_000_000 + i },
        nodes: facets.flatMap((f) => [{ id: f, type: 'Facet', name: f, search_text: f }, { id: `${f}P`, type: 'FacetPoint', name: 'p', search_text: 'p' }]),
        edges: [
          ...facets.flatMap((f) => [
            { from: `E${i}`, to: f, relationship_name: 'has_facet', edge_text: `hf ${f}` },
            { from: f, to: `${f}P`, relationship_name: 'has_point', edge_text: `hp ${f}` },
            ...(random() < 0.4 ? [{ from: f, to: pick(entities).id, relationship_name: 'involves_entity', edge_text: `fe ${f}` }] : [])
          ]),
          ...links.map((n) => ({ from: `E${i}`, to: n, relationship_name: 'involves_entity', edge_text: `ie ${n}` }))
        ]
      }
    })
    const ns = freshNamespace()
    const embedded = new EmbeddedEpisodicGraphStore()
    for (const s of [store, embedded]) await s.apply(ns, { entities, episodes })
    const ids = [...entities.map((e) => e.id), ...episodes.flatMap((e) => [e.episode.id, ...e.nodes.map((n) => n.id)]), 'missing']
    const shape = (f: GraphFragment) => ({
      nodes: [...f.nodes.values()].map((n) => `${n.id}|${n.type}|${n.created_at ?? ''}`).sort(),
      edges: f.edges.map((e) => `${e.from}|${e.to}|${e.relationship_name}|${e.label_withheld ? '-' : e.edge_text}`).sort()
    })
    const linkedTo = (n: string) => episodes.flatMap((e) => e.edges.filter((x) => x.to === n).map((x) => x.from))
    for (let round = 0; round < 25; round++) {
      // Entities as the relevant ids (score 0); some of their neighbours hit with other scores, so that
      // phase 2 has more neighbours than room and must order them by type, score and id; and other hits.
      const seeds = [...new Set([pick(entities).id, pick(entities).id])]
      const best = new Map<string, number>(seeds.map((n) => [n, 0]))
      for (const n of seeds) for (const id of linkedTo(n)) if (random() < 0.5) best.set(id, Math.round(1 + random() * 3) / 4)
      while (best.size < seeds.length + 8) best.set(pick(ids), Math.round(1 + random() * 3) / 4)
      const cap = round % 5 === 4 ? 1 + Math.floor(random() * 20) : seeds.length
      const request: ProjectionRequest = {
        relevant_ids: relevantIds(best, cap), best_by_id: best, max_ids: 2 * cap,
        episode_hit_ids: [pick(episodes).episode.id, pick(episodes).episode.id],
        retrieved_labels: new Set([`hf ${pick(episodes).nodes[0]!.id}`, `ie ${pick(entities).id}`])
      }
      const onNeo4j = shape(await store.project(ns, request))
      const inProcess = shape(await embedded.project(ns, request))
      // The embedded store may send every text; a withheld edge must be one whose label was not retrieved.
      expect(onNeo4j.nodes, `round ${round}`).toEqual(inProcess.nodes)
      expect(onNeo4j.edges.map((e) => e.replace(/\|[^|]*$/, '')), `round ${round}`).toEqual(inProcess.edges.map((e) => e.replace(/\|[^|]*$/, '')))
      for (const e of onNeo4j.edges) {
        const text = e.slice(e.lastIndexOf('|') + 1)
        expect(text === '-' || request.retrieved_labels!.has(text), e).toBe(true)
      }
      for (const e of inProcess.edges.filter((x) => request.retrieved_labels!.has(x.slice(x.lastIndexOf('|') + 1)))) expect(onNeo4j.edges).toContain(e)
    }
  })
})

describe('the episodic pipeline on Neo4j', () => {
  it('shows an entity link\'s description and the display properties in detail output (difference 7)', async () => {
    const ns = freshNamespace()
    await store.apply(ns, {
      entities: [{ id: 'N1', type: 'Entity', name: 'Kafka', description: '消息总线' }],
      episodes: [{
        episode: { id: 'E1', type: 'Episode', name: 'Kafka 迁移', summary: '【完成】迁移完成。', created_at: 1_700_000_000_000 },
        nodes: [{ id: 'F1', type: 'Facet', name: 'Kafka 迁移完成后的延迟变化', search_text: 'Kafka 迁移完成后的延迟变化', description: '延迟下降' }],
        edges: [
          { from: 'E1', to: 'F1', relationship_name: 'has_facet', edge_text: 'Kafka 迁移完成后的延迟变化: 延迟下降' },
          { from: 'E1', to: 'N1', relationship_name: 'involves_entity', edge_text: 'Kafka | 迁移的目标总线', description: '迁移的目标总线' }
        ]
      }]
    })
    const cfg = resolveEpisodicConfig({ display_mode: 'detail' })
    const pre = preprocessQuery('迁移以后延迟怎么样了', cfg, Date.parse('2026-04-22T12:00:00Z'))
    const hits = { Facet_search_text: [{ id: 'F1', score: 0.05, text: 'x' }], Entity_name: [{ id: 'N1', score: 0.2, text: 'Kafka' }] }
    const result = await runEpisodicPipeline(pre, hits, cfg, within(ns))
    const [shown] = result.output.bundles
    expect(shown!.node).toMatchObject({ name: 'Kafka 迁移', summary: '【完成】迁移完成。' })
    expect(shown!.block.startsWith('[November 14, 2023 (recorded)] [Kafka 迁移]\n【完成】迁移完成。')).toBe(true)
    expect(shown!.edges.find((e) => e.relationship_name === 'involves_entity')).toMatchObject({ to: 'N1', description: '迁移的目标总线' })
    expect(shown!.edges.find((e) => e.relationship_name === 'has_facet')?.description).toBeNull()
    expect(shown!.block).toContain('- has_facet: Kafka 迁移完成后的延迟变化: 延迟下降 | 延迟下降')
  })
})

/**
 * Splits a scenario graph into what the store writes: entities, and each Episode with the facets and
 * points it reaches. A store holds one nodeset, so only the scenario's members are written.
 */
function toChange(given: ScenarioInput['graph']): { entities: ScenarioInput['graph']['nodes']; episodes: EpisodeGraph[] } {
  const members = given.members ? new Set(given.members) : undefined
  const graph = members
    ? { nodes: given.nodes.filter((n) => members.has(n.id)), edges: given.edges.filter((e) => members.has(e.from) && members.has(e.to)) }
    : given
  const byId = new Map(graph.nodes.map((n) => [n.id, n]))
  const owner = new Map<string, string>()
  for (const e of graph.edges.filter((x) => x.relationship_name === 'has_facet')) owner.set(byId.get(e.from)?.type === 'Episode' ? e.to : e.from, byId.get(e.from)?.type === 'Episode' ? e.from : e.to)
  for (const e of graph.edges.filter((x) => x.relationship_name === 'has_point')) {
    const facet = byId.get(e.from)?.type === 'Facet' ? e.from : e.to
    owner.set(facet === e.from ? e.to : e.from, owner.get(facet)!)
  }
  const episodes = graph.nodes.filter((n) => n.type === 'Episode').map((episode): EpisodeGraph => ({
    episode,
    nodes: graph.nodes.filter((n) => owner.get(n.id) === episode.id),
    edges: graph.edges.filter((e) => [e.from, e.to].some((id) => id === episode.id || owner.get(id) === episode.id))
  }))
  return { entities: graph.nodes.filter((n) => n.type === 'Entity'), episodes }
}

describe('golden scenarios with the projection on Neo4j', () => {
  const dir = join(import.meta.dirname, '../adapters/episodic/scenarios')
  const files = readdirSync(dir).filter((f) => f.endsWith('.json') && !f.startsWith('a19') && !f.startsWith('d2')).sort()
  for (const file of files) {
    it(file.replace(/\.json$/, ''), async () => {
      const scenario = JSON.parse(readFileSync(join(dir, file), 'utf8')) as ScenarioInput & { expect: Partial<ScenarioOutput> }
      const ns = freshNamespace()
      await store.apply(ns, toChange(scenario.graph))
      const onNeo4j = await runScenario(scenario, { graph: within(ns) })
      const inMemory = await runScenario(scenario)
      expect(onNeo4j).toEqual(inMemory)
      expect(onNeo4j.bundles.map((b) => b.episode_id)).toEqual(scenario.expect.bundles!.map((b) => b.episode_id))
    })
  }
})

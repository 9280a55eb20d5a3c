import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { startNeo4j, type Neo4jServer } from '../../scripts/neo4j/server.js'
import { createNeo4jConnection, type Neo4jConnection } from '../../src/providers/neo4j/connection.js'
import { Neo4jEpisodicGraphStore } from '../../src/providers/episodic-graph/neo4j.js'
import { describeEpisodicGraphStoreContract } from '../contracts/episodic-graph.contract.js'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { runScenario, type ScenarioInput, type ScenarioOutput } from '../../adapters/episodic/scenario.js'
import type { EpisodeGraph } from '../../src/providers/episodic-graph/port.js'

// The shared server of test/setup/neo4j.ts; a run without that setup (a narrowed config) starts its own.
let server: Neo4jServer | undefined
let connection: Neo4jConnection
const stores: Neo4jEpisodicGraphStore[] = []

beforeAll(async () => {
  let uri: string | undefined = inject('neo4jUri')
  if (!uri) {
    server = await startNeo4j()
    uri = server.uri
  }
  connection = createNeo4jConnection({ uri, timeoutMs: 30_000 })
})

afterAll(async () => {
  for (const s of stores) await s.dropNamespace()
  await connection?.close()
  await server?.stop()
})

async function makeStore(): Promise<Neo4jEpisodicGraphStore> {
  const store = new Neo4jEpisodicGraphStore({ connection, namespace: `test-${randomUUID()}` })
  stores.push(store)
  return store
}

describeEpisodicGraphStoreContract('neo4j', makeStore)

describe('Neo4jEpisodicGraphStore', () => {
  it('keeps namespaces apart: a projection never leaves its own', async () => {
    const a = await makeStore()
    const b = await makeStore()
    const write = (s: Neo4jEpisodicGraphStore, summary: string) =>
      s.apply({
        entities: [{ id: 'N1', type: 'Entity', name: 'API' }],
        episodes: [{ episode: { id: 'E1', type: 'Episode', name: 'e', summary }, nodes: [],
          edges: [{ from: 'E1', to: 'N1', relationship_name: 'involves_entity', edge_text: 'API' }] }]
      })
    await write(a, 'in a')
    await write(b, 'in b')
    expect((await a.project(['N1'])).nodes.get('E1')?.summary).toBe('in a')
    expect((await b.project(['N1'])).nodes.get('E1')?.summary).toBe('in b')
    await b.apply({ deleteEpisodeIds: ['E1'] })
    expect((await a.project(['N1'])).nodes.has('E1')).toBe(true)
    expect((await b.nodeTypes(['E1', 'N1'])).size).toBe(0)
  })

  it('projects through one round trip per call', async () => {
    const store = await makeStore()
    await store.apply({
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
    const counted = new Neo4jEpisodicGraphStore({ connection: counting, namespace: store.namespace })
    await counted.nodeTypes(['E1']) // schema set-up happens on first use
    calls = 0
    const f = await counted.project(['N1', 'E1'])
    expect(calls).toBe(1)
    expect([...f.nodes.keys()].sort()).toEqual(['E1', 'F1', 'N1'])
    expect(f.edges).toHaveLength(2)
  })
})

/** Splits a scenario graph into what the store writes: entities, and each Episode with the facets and points it reaches. */
function toChange(graph: ScenarioInput['graph']): { entities: ScenarioInput['graph']['nodes']; episodes: EpisodeGraph[] } {
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
      const store = await makeStore()
      await store.apply(toChange(scenario.graph))
      const onNeo4j = await runScenario(scenario, { project: (ids) => store.project(ids) })
      const inMemory = await runScenario(scenario)
      expect(onNeo4j).toEqual(inMemory)
      expect(onNeo4j.bundles.map((b) => b.episode_id)).toEqual(scenario.expect.bundles!.map((b) => b.episode_id))
    })
  }
})

/**
 * Neo4j down: the store answers BackendUnavailableError naming neo4j within its timeout, and the same store
 * object works again once the server is back. Starts its own server, since it stops it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startNeo4j, type Neo4jServer } from '../../scripts/neo4j/server.js'
import { createGraphragAdapter } from '../../adapters/graphrag/index.js'
import { BackendUnavailableError, ProviderError } from '../../src/providers/errors.js'
import { createNeo4jConnection } from '../../src/providers/neo4j/connection.js'
import { Neo4jKnowledgeGraphStore } from '../../src/providers/knowledge-graph/neo4j.js'

const TIMEOUT_MS = 3000

async function timed(work: () => Promise<unknown>): Promise<{ error: unknown; ms: number }> {
  const started = performance.now()
  try {
    await work()
    return { error: null, ms: performance.now() - started }
  } catch (error) {
    return { error, ms: performance.now() - started }
  }
}

/** Retries `work` on provider errors for up to a minute; the last error fails the test. */
async function eventually<T>(work: () => Promise<T>): Promise<T> {
  const until = Date.now() + 60_000
  for (;;) {
    try {
      return await work()
    } catch (error) {
      if (!(error instanceof ProviderError) || Date.now() > until) throw error
      await new Promise((done) => setTimeout(done, 250))
    }
  }
}

describe('Neo4j knowledge graph store when Neo4j goes down and comes back', () => {
  let server: Neo4jServer
  beforeAll(async () => {
    server = await startNeo4j()
  })
  afterAll(async () => {
    await server?.stop()
  })

  it('throws BackendUnavailableError naming neo4j within the timeout, then recovers with the same store', async () => {
    // A fresh JVM plans its first statements slowly: load and warm up with a patient store first.
    const patient = new Neo4jKnowledgeGraphStore({ connection: createNeo4jConnection({ uri: server.uri, timeoutMs: 60_000 }) })
    await patient.upsert('default', {
        entities: [
        { id: 'pku', name: '北京大学', aliases: [], source_chunk_ids: [] },
        { id: 'bj', name: '北京', aliases: [], source_chunk_ids: [] }
      ],
      relations: [{ id: 'r1', source: 'pku', target: 'bj', type: 'located_in', weight: 1 }]
    })
    await createGraphragAdapter({ graph: patient }).retrieve({ query: '北京大学', top_k: 5 })
    await patient.close()

    const store = new Neo4jKnowledgeGraphStore({ connection: createNeo4jConnection({ uri: server.uri, timeoutMs: TIMEOUT_MS }) })
    const adapter = createGraphragAdapter({ graph: store })
    try {
      expect((await adapter.retrieve({ query: '北京大学', top_k: 5 })).items.map((i) => i.id)).toEqual(['pku', 'bj'])

      await server.pause()
      for (const call of [
        () => adapter.retrieve({ query: '北京大学', top_k: 5 }),
        () => store.upsert('default', { entities: [{ id: 'x', name: 'X', aliases: [], source_chunk_ids: [] }] }),
        () => store.deleteEntity('default', 'bj')
      ]) {
        const { error, ms } = await timed(call)
        expect(error).toBeInstanceOf(BackendUnavailableError)
        expect(error).toMatchObject({ backend: 'knowledge-graph:neo4j' })
        expect((error as Error).message).toMatch(/neo4j/i)
        expect(ms).toBeLessThan(TIMEOUT_MS + 500)
      }
      expect(await store.health()).toMatchObject({ backend: 'knowledge-graph:neo4j', ok: false })

      await server.resume()
      // The same store and adapter objects, no reconnect by hand. A restarted JVM plans its first statements
      // slowly, so a first call may still time out: recovery means it answers again without intervention.
      const ids = await eventually(async () => (await adapter.retrieve({ query: '北京大学', top_k: 5 })).items.map((i) => i.id))
      expect(ids).toEqual(['pku', 'bj'])
      expect(await store.health()).toMatchObject({ backend: 'knowledge-graph:neo4j', ok: true })
      expect(await store.count('default')).toEqual({ entities: 2, relations: 1 })
    } finally {
      await store.close()
    }
  })

  it('a store created while Neo4j is down starts working when it comes up', async () => {
    await server.pause()
    const store = new Neo4jKnowledgeGraphStore({
      connection: createNeo4jConnection({ uri: server.uri, timeoutMs: TIMEOUT_MS }),
      labelPrefix: 'Late'
    })
    try {
      const { error } = await timed(() => store.init())
      expect(error).toBeInstanceOf(BackendUnavailableError)
      await server.resume()
      await eventually(() => store.upsert('default', { entities: [{ id: 'a', name: 'A', aliases: [], source_chunk_ids: [] }] }))
      expect(await store.count('default')).toEqual({ entities: 1, relations: 0 })
    } finally {
      await store.close()
    }
  })
})

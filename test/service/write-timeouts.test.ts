/**
 * Writes have their own timeouts (docs/operations.md, "Reliability"): an import whose first write is slower than the read budget
 * (a lock wait here, a plan compile on a busy server in the field) succeeds; a write past its own timeout
 * fails naming the backend, with nothing written. The slow write is made deterministic by holding a write
 * lock in another transaction for a fixed time, on the real Neo4j of the test run.
 */
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { BackendTimeoutError } from '../../src/providers/errors.js'
import { createKnowledgeGraphStore } from '../../src/providers/knowledge-graph/index.js'
import { createNeo4jConnection, type Neo4jConnection } from '../../src/providers/neo4j/connection.js'
import { buildTestApp, type TestApp } from '../helpers/build.js'

const READ_BUDGET_MS = 300
const HOLD_MS = 1_500

let holder: Neo4jConnection
beforeAll(() => {
  holder = createNeo4jConnection({ uri: inject('neo4jUri'), timeoutMs: 30_000, writeTimeoutMs: 30_000 })
})
afterAll(async () => holder.close())

/** Takes a write lock on the nodes `match` finds and rolls it back after `ms`; `released` resolves then. */
async function holdLock(match: string, params: Record<string, unknown>, ms: number): Promise<{ released: Promise<void> }> {
  const session = holder.driver.session()
  const tx = await session.beginTransaction()
  await tx.run(`${match} SET n._lock = true`, params)
  const released = new Promise<void>((resolve, reject) => {
    setTimeout(() => void tx.rollback().then(() => session.close()).then(resolve, reject), ms)
  })
  return { released }
}

describe('Neo4j writes have their own timeout', () => {
  it('a write blocked past the read budget succeeds within the write timeout', async () => {
    const key = randomUUID()
    await holder.run('CREATE (n:WriteTimeoutProbe {key: $key, v: 0})', { key })
    const connection = createNeo4jConnection({ uri: inject('neo4jUri'), timeoutMs: READ_BUDGET_MS, writeTimeoutMs: 60_000 })
    try {
      const { released } = await holdLock('MATCH (n:WriteTimeoutProbe {key: $key})', { key }, HOLD_MS)
      const started = performance.now()
      await connection.write((tx) => tx.run('MATCH (n:WriteTimeoutProbe {key: $key}) SET n.v = n.v + 10', { key }))
      // It really waited for the lock, far past the read budget.
      expect(performance.now() - started).toBeGreaterThan(READ_BUDGET_MS * 2)
      await released
      const v = (await holder.run('MATCH (n:WriteTimeoutProbe {key: $key}) RETURN n.v AS v', { key }, 'READ')).records[0]?.get('v')
      expect(v).toBe(10)
    } finally {
      await connection.close()
      await holder.run('MATCH (n:WriteTimeoutProbe {key: $key}) DELETE n', { key })
    }
  })

  it('a write blocked past its own timeout fails naming the backend, and writes nothing', async () => {
    const key = randomUUID()
    await holder.run('CREATE (n:WriteTimeoutProbe {key: $key, v: 0})', { key })
    const connection = createNeo4jConnection({ uri: inject('neo4jUri'), timeoutMs: 30_000, writeTimeoutMs: READ_BUDGET_MS, backend: 'knowledge-graph:neo4j' })
    try {
      const { released } = await holdLock('MATCH (n:WriteTimeoutProbe {key: $key})', { key }, HOLD_MS)
      const error = await connection.write((tx) => tx.run('MATCH (n:WriteTimeoutProbe {key: $key}) SET n.v = n.v + 10', { key })).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(BackendTimeoutError)
      expect(error).toMatchObject({ backend: 'knowledge-graph:neo4j' })
      await released
      // Well after the lock is gone, the abandoned write has not landed.
      await new Promise((r) => setTimeout(r, 500))
      const v = (await holder.run('MATCH (n:WriteTimeoutProbe {key: $key}) RETURN n.v AS v', { key }, 'READ')).records[0]?.get('v')
      expect(v).toBe(0)
    } finally {
      await connection.close()
      await holder.run('MATCH (n:WriteTimeoutProbe {key: $key}) DELETE n', { key })
    }
  })
})

describe('POST /ingest/graph on Neo4j with a tight read budget', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await buildTestApp({ GRAPH_BACKEND: 'neo4j', NEO4J_URI: inject('neo4jUri'), GRAPH_TIMEOUT_MS: String(READ_BUDGET_MS), CACHE_TTL_SECONDS: '0' })
  })
  afterAll(async () => t?.close())

  it('an import whose write waits past GRAPH_TIMEOUT_MS succeeds under GRAPH_WRITE_TIMEOUT_MS', async () => {
    const id = `wt-${randomUUID()}`
    const body = { entities: [{ id, name: `写超时实体${id.slice(3, 11)}` }] }
    // Every import bumps the knowledge graph's change counter (the KgMeta node): hold that node's lock.
    expect((await t.app.inject({ method: 'POST', url: '/ingest/graph', payload: { entities: [{ id: `${id}-warm`, name: 'warm' }] } })).statusCode).toBe(200)
    const { released } = await holdLock("MATCH (n:KgMeta {key: 'kg'})", {}, HOLD_MS)
    const started = performance.now()
    const r = await t.app.inject({ method: 'POST', url: '/ingest/graph', payload: body })
    expect(r.statusCode, r.body).toBe(200)
    expect(performance.now() - started).toBeGreaterThan(READ_BUDGET_MS * 2)
    await released
    // read back with a read budget of 30 s: the service's 300 ms is what is under test, and a cold server's first plan
    // for this read (the test run alone) took longer
    const entities = await createKnowledgeGraphStore({ backend: 'neo4j', neo4j: holder }).getEntities('default', [id])
    expect(entities.map((e) => e.id)).toEqual([id])
    await t.app.services.graph.deleteEntity('default', id)
    await t.app.services.graph.deleteEntity('default', `${id}-warm`)
  })
})

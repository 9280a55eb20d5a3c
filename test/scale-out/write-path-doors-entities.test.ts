/**
 * The entity-names write (src/corpus/appliers/entity-names.ts) is a write like any other, though no door sends it: the
 * graph write that asks for it answers first; then, in the background, it takes the namespace's `entities:` lock in
 * Redis, ends the graphrag answers replica A cached, and records a generation that replica B, over the same Qdrant,
 * Neo4j and Redis, reads the names' vectors at. Two replicas, response cache on, ENTITY_VECTORS on.
 */
import { randomBytes } from 'node:crypto'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import type { TestApp } from '../helpers/build.js'
import { runQdrantUrl, sharedQdrantEnv, startTwoReplicas, type TwoReplicas } from '../helpers/two-replicas.js'

const qdrantUrl = runQdrantUrl('the entity-names write-path tests')

describe.skipIf(!qdrantUrl)('the background entity-names write goes through the one write path', () => {
  const env = {
    ...sharedQdrantEnv('doorsev', qdrantUrl), CACHE_TTL_SECONDS: '300', VECTOR_TIMEOUT_MS: '30000',
    GRAPH_BACKEND: 'neo4j', NEO4J_URI: inject('neo4jUri'), GRAPH_TIMEOUT_MS: '30000', ENTITY_VECTORS: 'true', GRAPHRAG_MEANING_FLOOR: '0.5'
  }
  let pair: TwoReplicas
  let a: TestApp
  let b: TestApp
  let monitor: Redis
  const locksTaken: string[] = []

  beforeAll(async () => {
    pair = await startTwoReplicas(env)
    ;({ a, b } = pair)
    monitor = await new Redis(inject('redisUrl')).monitor()
    monitor.on('monitor', (_time: string, args: string[]) => {
      const key = args[0]?.toLowerCase() === 'eval' && args[1]?.includes("'NX'") ? args[3] : undefined
      if (key?.startsWith('recall:write-lock:')) locksTaken.push(key.slice('recall:write-lock:'.length))
    })
  }, 300_000)
  afterAll(async () => {
    monitor?.disconnect()
    await pair?.close()
  })

  async function graphrag(t: TestApp, namespace: string, query: string, minGeneration?: number) {
    const r = await t.app.inject({
      method: 'POST', url: '/retrieve',
      payload: { mode: 'graphrag', namespace, query, top_k: 10, ...(minGeneration !== undefined ? { min_generation: minGeneration } : {}) }
    })
    expect(r.statusCode, r.body).toBe(200)
    const body = r.json() as { cached: boolean; recall_bundle: Array<{ id: string; metadata: { matched_by: string } }> }
    return { cached: body.cached, byMeaning: body.recall_bundle.filter((i) => i.metadata.matched_by === 'meaning').map((i) => i.id) }
  }

  it('after a graph write: the entities: lock, A\'s cached answer ended, B reads the names at the recorded generation', async () => {
    const namespace = `door-names-${randomBytes(3).toString('hex')}`
    // a first graph, its names embedded, and an answer A caches
    await a.app.inject({ method: 'POST', url: '/ingest/graph', payload: { namespace, entities: [{ id: 'leave', name: '年假' }] } })
    await a.app.services.writePath.entityNamesIdle()
    await graphrag(a, namespace, '住得比标准贵')
    const before = await graphrag(a, namespace, '住得比标准贵')
    expect(before.cached).toBe(true)
    expect(before.byMeaning).not.toContain('over')

    const mark = locksTaken.length
    const r = await a.app.inject({
      method: 'POST', url: '/ingest/graph',
      payload: { namespace, entities: [{ id: 'over', name: '住宿超标', description: '住宿费用超过差旅标准' }] }
    })
    expect(r.statusCode, r.body).toBe(200)
    const graphGeneration = (r.json() as { generation: number }).generation
    await a.app.services.writePath.entityNamesIdle()
    expect(await a.app.services.entityVectors!.namespace(namespace)).toEqual({ pending: 0, done: 2, failed: 0 })
    expect(locksTaken.slice(mark)).toEqual(expect.arrayContaining([`graph:${namespace}`, `entities:${namespace}`]))
    // the names' write recorded a generation after the graph write's
    const state = await a.app.services.readState('graphrag', namespace)
    expect(state.generation).toBeGreaterThan(graphGeneration)

    const after = await graphrag(a, namespace, '住得比标准贵')
    expect(after.cached, 'the entity-names write ended the cached answer').toBe(false)
    expect(after.byMeaning).toContain('over')
    expect((await graphrag(b, namespace, '住得比标准贵', state.generation)).byMeaning).toContain('over')
  }, 300_000)
})

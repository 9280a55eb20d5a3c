import { randomBytes } from 'node:crypto'
import { afterAll, describe, expect, inject, it } from 'vitest'
import { createRedisClient } from '../../src/providers/cache/redis.js'
import type { TestApp } from '../helpers/build.js'
import { runQdrantUrl, sharedQdrantEnv, useTwoReplicas } from '../helpers/two-replicas.js'

const qdrantUrl = runQdrantUrl('the change log bounds tests')

// The change log's two bounds set through the configuration, on two replicas over the run's Qdrant and Redis:
// a log that keeps 3 documents per namespace, and catch-ups that read at most 1 changed document by id.
describe.skipIf(!qdrantUrl)('CHANGE_LOG_MAX_DOCUMENTS=3 and CHANGE_LOG_MAX_CATCH_UP_DOCUMENTS=1', () => {
  // B catches up when a read finds a newer version (what these cases watch), not as A's writes land
  const env = { ...sharedQdrantEnv('clb', qdrantUrl), CHANGE_LOG_MAX_DOCUMENTS: '3', CHANGE_LOG_MAX_CATCH_UP_DOCUMENTS: '1', CATALOG_FOLLOW_WRITES: 'false' }
  const namespace = `clb-${randomBytes(3).toString('hex')}`
  let a: TestApp
  let b: TestApp
  useTwoReplicas(env, (pair) => ({ a, b } = pair))
  const redis = createRedisClient(inject('redisUrl'), { commandTimeoutMs: 1000 })
  redis.on('error', () => undefined)
  afterAll(() => redis.disconnect())

  const ingest = async (...ids: string[]) => {
    const documents = ids.map((id) => ({ id, text: `# ${id}\n\n文档 ${id} 的内容。` }))
    const r = await a.app.inject({ method: 'POST', url: '/ingest/documents', payload: { namespace, documents } })
    expect(r.statusCode, r.body).toBe(200)
  }
  const list = async (t: TestApp) =>
    (await t.app.inject({ method: 'GET', url: `/documents?namespace=${namespace}` })).json().documents.map((d: { id: string }) => d.id)
  const bCatchesUp = async () => {
    expect(await list(b)).toEqual(await list(a))
    return b.app.services.sharedCatalog!.lastCatchUp.get(namespace)
  }

  it('one changed document is read by id, two are a whole-namespace read, and the log keeps the last 3 documents', async () => {
    await ingest('d0')
    expect(await list(b)).toEqual(['d0']) // B's first read of the namespace: its position in the log from here on
    await ingest('d1')
    expect(await bCatchesUp()).toEqual({ kind: 'documents', documents: 1 })
    await ingest('d2', 'd3')
    expect(await bCatchesUp()).toEqual({ kind: 'namespace' }) // 2 changed documents > 1
    await ingest('d4')
    // d0 and d1 trimmed (the oldest of 5): B's position is after them, so the log still proves B misses only d4
    expect(await bCatchesUp()).toEqual({ kind: 'documents', documents: 1 })
    const members = await redis.zrange(`recall:generations:${namespace}:changes`, 0, -1)
    expect(members.filter((m) => !m.startsWith('~')).sort()).toEqual(['d2', 'd3', 'd4'])
    expect(await list(b)).toEqual(['d0', 'd1', 'd2', 'd3', 'd4'])
  })
})

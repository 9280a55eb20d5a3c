/**
 * Issue 45 on the run's Redis Cluster (test/setup/redis-cluster.ts: 3 masters, one replica each) and Qdrant, two
 * replicas (REPLICAS=2, REDIS_WAIT_REPLICAS unset: 1). A write takes its namespace's lock on the master of the
 * namespace's generations: `MONITOR` on that master sees the lock script run there on the tagged key, and `CLUSTER
 * KEYSLOT` gives the lock and the generations one slot. Then that master is killed (SIGKILL) while both replicas write,
 * its replica takes over, and the killed node is started again (it rejoins as the new master's replica): every write
 * answered 200 carries its generation, no two share one, and each is listed and found whole on both replicas.
 */
import { randomBytes } from 'node:crypto'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import type { DocumentInput } from '../../src/corpus/documents/input.js'
import { chunkDocument } from '../../src/corpus/documents/chunking.js'
import { buildTestApp, type TestApp } from '../helpers/build.js'
import { onNode, replicaInSync, REDIS_CLUSTER_SKIP, useSharedRedisCluster, type ClusterNode, type RedisClusterServer } from '../helpers/redis-cluster.js'
import { runQdrantUrl } from '../helpers/two-replicas.js'

const qdrantUrl = runQdrantUrl('writes through a Redis Cluster failover')
const shared = inject('redisCluster')
if (!shared) console.warn(`writes through a Redis Cluster failover: ${REDIS_CLUSTER_SKIP}`)
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const PATIENT = {
  VECTOR_TIMEOUT_MS: '30000', LEXICAL_TIMEOUT_MS: '30000', EMBEDDING_TIMEOUT_MS: '30000', MAX_EMBEDDING_WAIT_MS: '0',
  RATE_LIMIT_MAX: '0', DERIVED_GRAPH: 'false', MAX_IN_FLIGHT: '0', MAX_EMBEDDING_QUEUE: '0'
}

describe.skipIf(!qdrantUrl || !shared)('writes through a failover of the master holding a namespace\'s lock and records', () => {
  const namespace = `fw-${randomBytes(3).toString('hex')}`
  const generationsKey = `recall:generations:{${namespace}}`
  const lockKey = `recall:write-lock:documents:{${namespace}}`
  let cluster: RedisClusterServer
  let victim: ClusterNode | undefined
  let a: TestApp
  let b: TestApp

  beforeAll(async () => {
    cluster = useSharedRedisCluster(shared!)
    await cluster.waitHealthy(30_000, generationsKey)
    const env = {
      ...PATIENT, VECTOR_BACKEND: 'qdrant', QDRANT_URL: qdrantUrl, COLLECTION_PREFIX: `fw${randomBytes(3).toString('hex')}_`,
      REDIS_URL: cluster.url, REDIS_COMMAND_TIMEOUT_MS: '1000', REPLICAS: '2', MIN_GENERATION_WAIT_MS: '20000'
    }
    a = await buildTestApp(env)
    b = await buildTestApp(env)
  }, 300_000)
  afterAll(async () => {
    for (const t of [a, b]) await t?.close()
    // the cluster is the run's: the killed master comes back (also after a failure half-way) as a replica in sync
    if (victim?.stopped) await victim.restart()
    if (victim) {
      const deadline = Date.now() + 60_000
      while (!(await replicaInSync(victim.port)) && Date.now() < deadline) await sleep(100)
    }
    await cluster?.waitHealthy(30_000)
  }, 120_000)

  const docOf = (i: number): DocumentInput => ({
    id: `fw-${i}`, text: `# 记录 ${i}\n\n编号 fwtag${i} 的第一段，讨论差旅报销。\n\n## 第二节\n\n编号 fwtag${i} 的第二段，讨论咳嗽随访。`
  })

  it('the lock is taken on the master of the namespace\'s generations, in their slot', async () => {
    const master = await cluster.masterOf(generationsKey)
    const monitor = new Redis({ port: master.port, host: '127.0.0.1' })
    const seen: string[] = []
    const watching = await monitor.monitor()
    watching.on('monitor', (_time: string, args: string[]) => {
      // the lock's acquire script: EVAL <script> 1 <key> <token> <lease ms>
      if (args[0]?.toLowerCase() === 'eval' && args[1]?.includes("'NX'")) seen.push(args[3] ?? '')
    })
    const r = await a.app.inject({ method: 'POST', url: '/ingest/documents', payload: { namespace, documents: [docOf(-1)] } })
    expect(r.statusCode, r.body).toBe(200)
    expect(r.json().generation).toBeGreaterThan(0)
    await sleep(200)
    watching.disconnect()
    monitor.disconnect()
    expect(seen).toContain(lockKey)
    const [lockSlot, generationsSlot] = await onNode(master.port, async (node) => [await node.cluster('KEYSLOT', lockKey), await node.cluster('KEYSLOT', generationsKey)])
    expect(lockSlot).toBe(generationsSlot)
  })

  it('a failover of that master during writes: every acknowledged write has its own generation and is found on both replicas', async () => {
    const killed = await cluster.masterOf(generationsKey)
    victim = killed
    const acknowledged = new Map<string, number | undefined>()
    const startedAt = new Map<string, number>()
    const refused: string[] = []
    let sent = 0
    let stop = false
    const writeLoop = async (t: TestApp) => {
      while (!stop) {
        const doc = docOf(sent++)
        startedAt.set(doc.id, performance.now())
        const r = await t.app.inject({ method: 'POST', url: '/ingest/documents', payload: { namespace, documents: [doc] } })
        if (r.statusCode === 200) acknowledged.set(doc.id, r.json().generation as number | undefined)
        else refused.push(`${doc.id} ${r.statusCode} ${r.body.slice(0, 240)}`)
      }
    }
    const loops = [writeLoop(a), writeLoop(b)]
    await sleep(3_000)
    const before = acknowledged.size
    const killedAt = performance.now()
    await killed.stop('SIGKILL')
    await cluster.waitHealthy(60_000, generationsKey)
    const promotedMs = performance.now() - killedAt
    await sleep(2_000) // writes meet a master without a replica
    await killed.restart()
    const deadline = Date.now() + 60_000
    while (!(await replicaInSync(killed.port))) {
      if (Date.now() > deadline) throw new Error(`the killed master did not rejoin as a replica in sync within 60 s`)
      await sleep(100)
    }
    const backAt = performance.now()
    const backMs = backAt - killedAt
    // writes go on with a replica again: until one started after the return is acknowledged (a write under way at the
    // kill keeps trying to record itself until about then, so the loops may start their next one only now)
    const afterBack = () => [...acknowledged.keys()].filter((id) => startedAt.get(id)! > backAt).length
    const confirmedAgain = Date.now() + 60_000
    while (afterBack() === 0 && Date.now() < confirmedAgain) await sleep(100)
    stop = true
    await Promise.all(loops)
    console.log(`redis failover during writes: promoted after ${Math.round(promotedMs)} ms, old master a replica in sync after ${Math.round(backMs)} ms; ` +
      `${acknowledged.size} writes acknowledged (${before} before the kill, ${afterBack()} started after the return), ${refused.length} refused: ${refused.slice(0, 3).join('; ')}`)

    expect((await cluster.masterOf(generationsKey)).port).not.toBe(killed.port)
    expect(afterBack(), 'writes started and acknowledged once the old master is a replica again').toBeGreaterThan(0)
    const withoutGeneration = [...acknowledged].filter(([, g]) => g === undefined).map(([id]) => id)
    expect(withoutGeneration, 'acknowledged without a generation').toEqual([])
    const generations = [...acknowledged.values()] as number[]
    expect(new Set(generations).size, 'no two acknowledged writes share a generation').toBe(generations.length)
    for (const r of refused) expect(r).toMatch(/ 503 /)

    const last = Math.max(...generations)
    for (const t of [a, b]) {
      const list = await t.app.inject({ method: 'GET', url: `/documents?namespace=${namespace}&min_generation=${last}` })
      expect(list.statusCode, list.body).toBe(200)
      const listed = new Map((list.json().documents as Array<{ id: string; chunks: number }>).map((d) => [d.id, d.chunks]))
      for (const id of acknowledged.keys()) expect(listed.has(id), `${id} listed`).toBe(true)
      for (const [id, chunks] of listed) expect(chunks, id).toBe(chunkDocument(docOf(Number(id.slice(3)))).length)
      for (const id of acknowledged.keys()) {
        const r = await t.app.inject({ method: 'GET', url: `/retrieve?mode=hybrid&legs=lexical&top_k=10&q=${id.replace('fw-', 'fwtag')}&namespace=${namespace}&min_generation=${last}` })
        expect(r.statusCode, r.body).toBe(200)
        const found = (r.json().recall_bundle as Array<{ id: string }>).filter((x) => x.id.startsWith(`${id}#`)).length
        expect(found, `lexical leg for ${id}`).toBe(listed.get(id))
      }
    }
  }, 600_000)
})

/**
 * Two replicas (REPLICAS=2) over the run's Qdrant and the run's Redis Cluster (test/setup/redis-cluster.ts: 3 masters,
 * one replica each; the master killed here is started again, as a replica, before the file ends) against one embedded process (no Redis, no Qdrant): they answer the CMRC 2018 trial
 * questions alike, top 10 ids in order and scores (to one unit of their 6th decimal). Then the master holding the namespaces' keys is killed (SIGKILL) while both
 * replicas read and write: every read answers 200 with the top 10 it gave before, every acknowledged write is found
 * on both replicas once the cluster has failed over, and no document is half there.
 */
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, expect, inject, it } from 'vitest'
import { loadCmrc } from '../../bench/lib/cmrc.js'
import type { DocumentInput } from '../../src/corpus/documents/input.js'
import { chunkDocument } from '../../src/corpus/documents/chunking.js'
import { buildTestApp, type TestApp } from '../helpers/build.js'
import { replicaInSync, useSharedRedisCluster, type ClusterNode, type RedisClusterServer } from '../helpers/redis-cluster.js'
import { CMRC_TRIAL, describeWith } from '../helpers/reference-data.js'
import { runQdrantUrl } from '../helpers/two-replicas.js'

const qdrantUrl = runQdrantUrl('two replicas over a Redis Cluster')
const shared = inject('redisCluster')
const missing = shared ? undefined : 'SKIPPED: the run started no Redis Cluster of its own (test/setup/redis-cluster.ts said why at start-up)'
if (missing) console.warn(`two replicas over a Redis Cluster: ${missing}`)

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
// a machine shared with other jobs: reads must not time out into partial answers
const PATIENT = {
  VECTOR_TIMEOUT_MS: '30000', LEXICAL_TIMEOUT_MS: '30000', EMBEDDING_TIMEOUT_MS: '30000', MAX_EMBEDDING_WAIT_MS: '0',
  RATE_LIMIT_MAX: '0', DERIVED_GRAPH: 'false', MAX_IN_FLIGHT: '0', MAX_EMBEDDING_QUEUE: '0'
}

type Top = Array<{ id: string; score: number }>

async function top10(t: TestApp, namespace: string, query: string, minGeneration: number): Promise<{ status: number; top: Top; body: string }> {
  const r = await t.app.inject({ method: 'POST', url: '/retrieve', payload: { mode: 'hybrid', namespace, query, top_k: 10, min_generation: minGeneration } })
  const top = r.statusCode === 200 ? (r.json().recall_bundle as Top).map(({ id, score }) => ({ id, score })) : []
  return { status: r.statusCode, top, body: r.body }
}

/** Waits until the node on `port` is a replica that has caught up with its master once. */
async function waitInSync(port: number): Promise<void> {
  const deadline = Date.now() + 60_000
  while (!(await replicaInSync(port))) {
    if (Date.now() > deadline) throw new Error(`the node on ${port} did not rejoin as a replica in sync within 60 s`)
    await sleep(100)
  }
}

describeWith(CMRC_TRIAL).skipIf(!qdrantUrl || missing !== undefined)('two replicas over a Redis Cluster', () => {
  const namespace = `rc-${randomBytes(3).toString('hex')}`
  let cluster: RedisClusterServer
  let victim: ClusterNode | undefined
  let single: TestApp
  let a: TestApp
  let b: TestApp
  let generation = 0
  let cmrc: Awaited<ReturnType<typeof loadCmrc>>

  beforeAll(async () => {
    cluster = useSharedRedisCluster(shared!)
    await cluster.waitHealthy(30_000)
    cmrc = await loadCmrc()
    const env = {
      ...PATIENT, VECTOR_BACKEND: 'qdrant', QDRANT_URL: qdrantUrl, COLLECTION_PREFIX: `rc${randomBytes(3).toString('hex')}_`,
      REDIS_URL: cluster.url, REDIS_COMMAND_TIMEOUT_MS: '1000', REPLICAS: '2', MIN_GENERATION_WAIT_MS: '20000'
    }
    single = await buildTestApp(PATIENT)
    a = await buildTestApp(env)
    b = await buildTestApp(env)
  }, 300_000)
  afterAll(async () => {
    for (const t of [single, a, b]) await t?.close()
    // the cluster is the run's: the killed master comes back (also after a failure half-way) as a replica in sync
    if (victim?.stopped) await victim.restart()
    if (victim) await waitInSync(victim.port)
    await cluster?.waitHealthy(30_000)
  })

  it('answer every CMRC question as one embedded process does: top 10 ids and scores', async () => {
    for (let i = 0; i < cmrc.documents.length; i += 64) {
      const documents = cmrc.documents.slice(i, i + 64)
      for (const t of [single, a]) {
        const r = await t.app.inject({ method: 'POST', url: '/ingest/documents', payload: { namespace, documents } })
        expect(r.statusCode, r.body).toBe(200)
        if (t === a) generation = r.json().generation as number
      }
    }
    expect(generation).toBeGreaterThan(0)
    const differing: string[] = []
    let exact = 0
    let widest = 0
    // every question that has text (the trial set holds an empty one, which the API refuses)
    const questions = cmrc.queries.filter((q) => q.query.trim() !== '')
    for (const [n, { query }] of questions.entries()) {
      const expected = await top10(single, namespace, query, 0)
      expect(expected.status, expected.body).toBe(200)
      const replica = n % 2 === 0 ? a : b
      const got = await top10(replica, namespace, query, generation)
      expect(got.status, got.body).toBe(200)
      if (JSON.stringify(got.top) === JSON.stringify(expected.top)) {
        exact += 1
        continue
      }
      // The vector leg's cosine is Qdrant's float32 arithmetic there and JavaScript's here: a last-bit difference
      // moves a score rounded to 6 decimals (as answers give them) by one unit at most. Ids and order must be equal.
      const gap = Math.max(...got.top.map((item, i) => Math.abs(item.score - (expected.top[i]?.score ?? Number.NaN))))
      if (got.top.map((x) => x.id).join() !== expected.top.map((x) => x.id).join() || !(gap <= 1.5e-6)) {
        differing.push(`${query}: ${JSON.stringify(got.top)} vs ${JSON.stringify(expected.top)}`)
      }
      widest = Math.max(widest, gap)
    }
    console.log(`CMRC on two replicas over a Redis Cluster: ${questions.length} questions, ${exact} with the embedded process's top 10 ` +
      `to the last digit, ${differing.length} otherwise than by a rounding unit; widest score gap ${widest}`)
    expect(differing.slice(0, 3)).toEqual([])
  }, 1_800_000)

  it('a Redis master killed during reads and writes: every read 200 with the same top 10, every acknowledged write found, none half', async () => {
    // the writes go to a namespace whose keys live on the same master as the read namespace's: the one killed
    const killed = await cluster.masterOf(`recall:generations:{${namespace}}`)
    victim = killed
    let writes = ''
    for (let i = 0; !writes; i++) if ((await cluster.masterOf(`recall:generations:{w${i}-${namespace}}`)).port === killed.port) writes = `w${i}-${namespace}`
    const questions = cmrc.queries.slice(0, 8).map((q) => q.query)
    const before = new Map<string, Top>()
    for (const q of questions) before.set(q, (await top10(a, namespace, q, generation)).top)

    const reads: Array<{ replica: string; query: string; status: number; same: boolean; body: string; ms: number; at: number }> = []
    const acknowledged = new Map<string, number>()
    const refused: string[] = []
    const docOf = (i: number): DocumentInput => ({
      id: `fo-${i}`, text: `# 记录 ${i}\n\n编号 fotag${i} 的第一段，讨论差旅报销。\n\n## 第二节\n\n编号 fotag${i} 的第二段，讨论咳嗽随访。`
    })
    let stop = false
    // A asks with the generation of the CMRC writes (it waits while the versions cannot be read), B without (it then
    // answers uncached at once)
    const readLoop = async (t: TestApp, name: string, minGeneration: number) => {
      for (let n = 0; !stop; n++) {
        const query = questions[n % questions.length]!
        const started = performance.now()
        const r = await top10(t, namespace, query, minGeneration)
        const ms = performance.now() - started
        reads.push({ replica: name, query, status: r.status, same: JSON.stringify(r.top) === JSON.stringify(before.get(query)), body: r.status === 200 ? '' : r.body, ms, at: started })
      }
    }
    let sent = 0
    const writeLoop = async (t: TestApp) => {
      while (!stop) {
        const doc = docOf(sent++)
        const r = await t.app.inject({ method: 'POST', url: '/ingest/documents', payload: { namespace: writes, documents: [doc] } })
        if (r.statusCode === 200) acknowledged.set(doc.id, (r.json().generation as number | undefined) ?? 0)
        else refused.push(`${doc.id} ${r.statusCode} ${r.body.slice(0, 200)}`)
      }
    }
    const loops = [readLoop(a, 'a', generation), readLoop(b, 'b', 0), writeLoop(a), writeLoop(b)]
    await sleep(3_000)
    const killedAt = performance.now()
    await killed.stop('SIGKILL')
    // healthy again once a replica of the killed master serves its slots
    await cluster.waitHealthy(60_000, `recall:generations:{${namespace}}`)
    const promotedMs = performance.now() - killedAt
    await sleep(3_000) // reads and writes go on over the promoted replica
    stop = true
    await Promise.all(loops)
    const after = reads.filter((r) => r.at + r.ms > killedAt)
    console.log(`redis failover: promoted after ${Math.round(promotedMs)} ms; ${reads.length} reads, ${after.length} ending after the kill ` +
      `(slowest ${Math.round(Math.max(...after.map((r) => r.ms)))} ms); ${acknowledged.size} writes acknowledged, ${refused.length} refused: ${refused.slice(0, 2).join('; ')}`)

    expect((await cluster.masterOf(`recall:generations:{${namespace}}`)).port).not.toBe(killed.port)
    expect(after.filter((r) => r.replica === 'a').length).toBeGreaterThan(2)
    expect(after.filter((r) => r.replica === 'b').length).toBeGreaterThan(2)
    expect(reads.filter((r) => r.status !== 200).slice(0, 3)).toEqual([])
    expect(reads.filter((r) => !r.same).map((r) => `${r.replica} ${r.query}`).slice(0, 3)).toEqual([])
    expect(acknowledged.size).toBeGreaterThan(0)

    // every acknowledged write on both replicas, each document whole (both chunks) or absent
    const last = Math.max(0, ...acknowledged.values())
    for (const t of [a, b]) {
      const list = await t.app.inject({ method: 'GET', url: `/documents?namespace=${writes}&min_generation=${last}` })
      expect(list.statusCode, list.body).toBe(200)
      const listed = new Map((list.json().documents as Array<{ id: string; chunks: number }>).map((d) => [d.id, d.chunks]))
      for (const id of acknowledged.keys()) expect(listed.has(id), `${id} listed`).toBe(true)
      for (const [id, chunks] of listed) expect(chunks, id).toBe(chunkDocument(docOf(Number(id.slice(3)))).length)
      for (const id of acknowledged.keys()) {
        const r = await t.app.inject({ method: 'GET', url: `/retrieve?mode=hybrid&legs=lexical&top_k=10&q=${id.replace('fo-', 'fotag')}&namespace=${writes}` })
        const found = (r.json().recall_bundle as Array<{ id: string }>).filter((x) => x.id.startsWith(`${id}#`)).length
        expect(found, `lexical leg for ${id}`).toBe(listed.get(id))
      }
    }
  }, 600_000)
})

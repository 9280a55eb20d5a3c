/**
 * Two replicas (REPLICAS=2) over the run's Qdrant and a Redis master its Sentinels name (`redis+sentinel://`,
 * docs/deployment.md#redis): a master, one replica and three Sentinels of this file's own (real `redis-server` and
 * `redis-server --sentinel` processes). The master is killed (SIGKILL) while both replicas read and write, the
 * Sentinels promote the replica, and the old master is started again (it comes back empty and the Sentinels make it
 * a replica of the new one). Every read answers 200 with the top 10 it gave before; every acknowledged write is
 * found on both replicas, whole; and no generation was handed to two acknowledged writes.
 */
import { randomBytes } from 'node:crypto'
import { spawnSync } from 'node:child_process'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { DocumentInput } from '../../src/corpus/documents/input.js'
import { chunkDocument } from '../../src/corpus/documents/chunking.js'
import { buildTestApp, type TestApp } from '../helpers/build.js'
import { startSentinelSet, type SentinelSet } from '../helpers/redis-sentinel.js'
import { runQdrantUrl } from '../helpers/two-replicas.js'

const qdrantUrl = runQdrantUrl('two replicas over Redis Sentinel')
const missing = spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).error
  ? 'SKIPPED: needs redis-server (Debian: apt-get install -y redis-server) to start a master, a replica and three Sentinels' : undefined
if (missing) console.warn(`two replicas over Redis Sentinel: ${missing}`)

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

const READ_DOCUMENTS: DocumentInput[] = [
  { id: 'travel', text: '# 差旅\n\n差旅住宿标准每晚六百元，超出部分自理。\n\n## 报销\n\n报销需在出差结束后十五天内提交。' },
  { id: 'cough', text: '# 咳嗽\n\n咳嗽三周以上要做胸片。\n\n## 随访\n\n复查血常规，咳嗽加重再就医。' },
  { id: 'oncall', text: '# 值班\n\n夜间告警由二线值班处理。\n\n## 交接\n\n交接班时核对未关闭的告警。' },
  { id: 'fever', text: '# 发热\n\n发热先测体温，超过三十九度就医。' }
]
const QUESTIONS = ['住宿标准是多少', '咳嗽多久要做胸片', '夜间告警谁处理', '发热怎么办', '报销期限']

describe.skipIf(!qdrantUrl || missing !== undefined)('two replicas over Redis Sentinel (a master, one replica, three Sentinels)', () => {
  const namespace = `rs-${randomBytes(3).toString('hex')}`
  const writes = `${namespace}-w`
  let set: SentinelSet
  let a: TestApp
  let b: TestApp
  let generation = 0

  beforeAll(async () => {
    set = await startSentinelSet({ replicas: 1, sentinels: 3, downAfterMs: 1_000 })
    const env = {
      ...PATIENT, VECTOR_BACKEND: 'qdrant', QDRANT_URL: qdrantUrl, COLLECTION_PREFIX: `rs${randomBytes(3).toString('hex')}_`,
      REDIS_URL: set.url, REDIS_COMMAND_TIMEOUT_MS: '1000', REPLICAS: '2', MIN_GENERATION_WAIT_MS: '20000'
    }
    a = await buildTestApp(env)
    b = await buildTestApp(env)
    const r = await a.app.inject({ method: 'POST', url: '/ingest/documents', payload: { namespace, documents: READ_DOCUMENTS } })
    expect(r.statusCode, r.body).toBe(200)
    generation = r.json().generation as number
    expect(generation).toBeGreaterThan(0)
  }, 300_000)
  afterAll(async () => {
    for (const t of [a, b]) await t?.close()
    await set?.stop()
  })

  it('a master killed during reads and writes: every read 200 with the same top 10, every acknowledged write found, whole, no generation twice', async () => {
    const before = new Map<string, Top>()
    for (const q of QUESTIONS) before.set(q, (await top10(a, namespace, q, generation)).top)
    const oldMaster = set.servers[0]!
    expect(await set.masterPort()).toBe(oldMaster.port)

    const reads: Array<{ replica: string; status: number; same: boolean; body: string }> = []
    const acknowledged = new Map<string, { generation: number | undefined; at: number }>()
    const refused: string[] = []
    const docOf = (i: number): DocumentInput => ({
      id: `sw-${i}`, text: `# 记录 ${i}\n\n编号 swtag${i} 的第一段，讨论差旅报销。\n\n## 第二节\n\n编号 swtag${i} 的第二段，讨论咳嗽随访。`
    })
    let stop = false
    const readLoop = async (t: TestApp, name: string, minGeneration: number) => {
      for (let n = 0; !stop; n++) {
        const query = QUESTIONS[n % QUESTIONS.length]!
        const r = await top10(t, namespace, query, minGeneration)
        reads.push({ replica: name, status: r.status, same: JSON.stringify(r.top) === JSON.stringify(before.get(query)), body: r.status === 200 ? '' : r.body.slice(0, 200) })
      }
    }
    let sent = 0
    const writeLoop = async (t: TestApp) => {
      while (!stop) {
        const doc = docOf(sent++)
        const at = performance.now()
        const r = await t.app.inject({ method: 'POST', url: '/ingest/documents', payload: { namespace: writes, documents: [doc] } })
        if (r.statusCode === 200) acknowledged.set(doc.id, { generation: r.json().generation as number | undefined, at })
        else refused.push(`${doc.id} ${r.statusCode} ${r.body.slice(0, 160)}`)
        if (r.statusCode !== 200) await sleep(100)
      }
    }
    const loops = [readLoop(a, 'a', generation), readLoop(b, 'b', 0), writeLoop(a), writeLoop(b)]
    await sleep(2_000)
    const killedAt = performance.now()
    await oldMaster.stop('SIGKILL')
    const deadline = Date.now() + 60_000
    while (await set.masterPort().catch(() => oldMaster.port) === oldMaster.port) {
      if (Date.now() > deadline) throw new Error('the Sentinels promoted no replica within 60 s')
      await sleep(100)
    }
    const promotedMs = performance.now() - killedAt
    await sleep(2_000) // reads and writes go on over the promoted replica (which has no replica of its own now)
    await oldMaster.restart()
    const rejoined = async () => {
      const probe = new Redis({ port: oldMaster.port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0 })
      probe.on('error', () => undefined)
      try {
        await probe.connect()
        const info = await probe.info('replication')
        return info.includes('role:slave') && info.includes('master_link_status:up')
      } finally {
        probe.disconnect()
      }
    }
    while (!(await rejoined().catch(() => false))) {
      if (Date.now() > deadline) throw new Error('the old master did not come back as a replica in sync within 60 s')
      await sleep(100)
    }
    const backAt = performance.now()
    // writes are confirmed by a replica again: wait for one started after the return (a write under way at the kill
    // keeps trying to record itself until then, REDIS_RECORD_RETRY_MS, so the loops may start their next one only now)
    const confirmedAgain = Date.now() + 60_000
    while (![...acknowledged.values()].some((w) => w.at > backAt) && Date.now() < confirmedAgain) await sleep(100)
    stop = true
    await Promise.all(loops)
    const afterBack = [...acknowledged.values()].filter((w) => w.at > backAt).length
    console.log(`redis sentinel failover: promoted after ${Math.round(promotedMs)} ms, the old master a replica again ` +
      `${Math.round(backAt - killedAt)} ms after the kill; ${reads.length} reads; ${acknowledged.size} writes acknowledged ` +
      `(${afterBack} after it came back), ${refused.length} refused: ${refused.slice(0, 2).join('; ')}`)

    expect(reads.filter((r) => r.status !== 200).map((r) => `${r.replica} ${r.status} ${r.body}`).slice(0, 3)).toEqual([])
    expect(reads.filter((r) => !r.same).length).toBe(0)
    expect(acknowledged.size).toBeGreaterThan(0)
    expect(afterBack).toBeGreaterThan(0)
    // no generation handed out twice among acknowledged writes: each write's record was confirmed by a replica
    const generations = [...acknowledged.values()].flatMap((w) => w.generation === undefined ? [] : [w.generation])
    expect(new Set(generations).size).toBe(generations.length)

    // a write answered without its generation (its record stayed unconfirmed) is recorded again in the background:
    // one more write through each replica, now confirmed, comes after all of them
    let last = Math.max(0, ...generations)
    for (const [i, t] of [a, b].entries()) {
      const doc = docOf(10_000 + i)
      const r = await t.app.inject({ method: 'POST', url: '/ingest/documents', payload: { namespace: writes, documents: [doc] } })
      expect(r.statusCode, r.body).toBe(200)
      expect(r.json().generation).toBeGreaterThan(last)
      last = r.json().generation as number
      acknowledged.set(doc.id, { generation: last, at: performance.now() })
    }
    for (const t of [a, b]) {
      const list = await t.app.inject({ method: 'GET', url: `/documents?namespace=${writes}&min_generation=${last}` })
      expect(list.statusCode, list.body).toBe(200)
      const listed = new Map((list.json().documents as Array<{ id: string; chunks: number }>).map((d) => [d.id, d.chunks]))
      for (const id of acknowledged.keys()) expect(listed.has(id), `${id} listed`).toBe(true)
      for (const [id, chunks] of listed) expect(chunks, id).toBe(chunkDocument(docOf(Number(id.slice(3)))).length)
      for (const id of acknowledged.keys()) {
        const r = await t.app.inject({ method: 'GET', url: `/retrieve?mode=hybrid&legs=lexical&top_k=10&q=${id.replace('sw-', 'swtag')}&namespace=${writes}` })
        const found = (r.json().recall_bundle as Array<{ id: string }>).filter((x) => x.id.startsWith(`${id}#`)).length
        expect(found, `lexical leg for ${id}`).toBe(listed.get(id))
      }
    }
  }, 600_000)
})

/**
 * Two recall replicas over a real 3-node Qdrant cluster (collections of 3 shards, each in 2 replicas; the run's
 * Redis, one node), against one embedded process over the same CMRC paragraphs (docs/deployment.md):
 *
 * 1. every CMRC question of those paragraphs gets the embedded process's top 10 (ids, scores, each leg's rank and
 *    score) from both replicas;
 * 2. one Qdrant node (not the one recall's QDRANT_URL names) is killed with SIGKILL while both replicas read and
 *    write: every read answers 200 with the top 10 it had before; once the node is back, every write acknowledged
 *    before, during or after the kill is found, each point in every replica of its shard, and no document is held
 *    in part.
 */
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, expect, inject, it } from 'vitest'
import { loadCmrc, type LabelledQuery } from '../../bench/lib/cmrc.js'
import { chunkDocument } from '../../src/corpus/documents/chunking.js'
import type { DocumentInput } from '../../src/corpus/documents/input.js'
import { QDRANT_CLUSTER_SKIP_LINE, useSharedQdrantCluster, type QdrantCluster } from '../helpers/qdrant-cluster.js'
import { CMRC_TRIAL, describeWith } from '../helpers/reference-data.js'
import { buildTestApp, type TestApp } from '../helpers/build.js'

// the run's cluster (test/setup/qdrant-cluster.ts): the node killed here is started again before the file ends
const shared = inject('qdrantCluster')
const runnable = shared !== null
if (!runnable) console.warn(`qdrant-cluster: ${QDRANT_CLUSTER_SKIP_LINE}`)

/** CMRC paragraphs ingested (their questions asked): enough for a few hundred questions, little embedding on a busy machine. */
const PARAGRAPHS = 32
const CMRC_NS = 'cmrc'
const WRITES_NS = 'writes'

type Item = { id: string; score: number; metadata: unknown }
type Leg = { name: string; status: string }

/** A hybrid retrieve: its status, its top 10 (ids, scores, metadata), and each leg that did not answer `ok` (in `body`). */
async function hybrid(t: TestApp, query: string): Promise<{ status: number; items: Item[]; body: string }> {
  const r = await t.app.inject({ method: 'POST', url: '/retrieve', payload: { mode: 'hybrid', namespace: CMRC_NS, query, top_k: 10 } })
  if (r.statusCode !== 200) return { status: r.statusCode, items: [], body: r.body }
  const answer = r.json() as { recall_bundle: Item[]; legs: Leg[] }
  const items = answer.recall_bundle.map(({ id, score, metadata }) => ({ id, score, metadata }))
  return { status: 200, items, body: JSON.stringify(answer.legs.filter((l) => l.status !== 'ok')) }
}

/** Decimals of a number as the response writes it. */
const decimals = (x: number) => (String(x).split('.')[1] ?? '').length

/**
 * Where two top 10s differ (none: the same answer): ids, ranks, strings and integers exactly; other numbers within
 * one unit of the last decimal the response keeps (at most 1e-4). Qdrant computes cosine in float32 with its own
 * summation order, the embedded store with its own, so a dense score (4 decimals in a leg, 6 in the fused score) may
 * round to the neighbouring last digit.
 */
function differences(got: unknown, want: unknown, path = ''): string[] {
  if (typeof got === 'number' && typeof want === 'number') {
    if (Number.isInteger(want) && Number.isInteger(got)) return got === want ? [] : [`${path}: ${got} vs ${want}`]
    const unit = Math.min(1e-4, 10 ** -Math.max(decimals(got), decimals(want)))
    return Math.abs(got - want) <= unit * 1.001 ? [] : [`${path}: ${got} vs ${want}`]
  }
  if (Array.isArray(got) && Array.isArray(want)) {
    if (got.length !== want.length) return [`${path}: ${got.length} items vs ${want.length}`]
    return got.flatMap((g, i) => differences(g, want[i], `${path}[${i}]`))
  }
  if (got && want && typeof got === 'object' && typeof want === 'object') {
    const keys = [...new Set([...Object.keys(got), ...Object.keys(want)])]
    return keys.flatMap((k) => differences((got as Record<string, unknown>)[k], (want as Record<string, unknown>)[k], `${path}.${k}`))
  }
  return got === want ? [] : [`${path}: ${JSON.stringify(got)} vs ${JSON.stringify(want)}`]
}

async function ingest(t: TestApp, namespace: string, documents: readonly DocumentInput[]): Promise<number> {
  const r = await t.app.inject({ method: 'POST', url: '/ingest/documents', payload: { namespace, documents } })
  return r.statusCode
}

/** A document of several paragraphs with a word of its own (`code`), so that a lexical search finds it alone. */
function writtenDocument(n: number, code: string): DocumentInput {
  const paragraphs = Array.from({ length: 3 }, (_, p) =>
    `## 第${p + 1}节\n\n记录${n}的第${p + 1}部分：${code} 编号 ${n}-${p}。${'集群节点故障期间写入的文本。'.repeat(30)}`)
  return { id: `w-${n}`, source: `writes/${n}.md`, text: `# 写入 ${n}\n\n${paragraphs.join('\n\n')}` }
}

describeWith(CMRC_TRIAL).skipIf(!runnable)('two recall replicas over a 3-node Qdrant cluster (3 shards, replication factor 2)', () => {
  let cluster: QdrantCluster
  let a: TestApp
  let b: TestApp
  let embedded: TestApp
  let queries: LabelledQuery[] = []
  const prefix = `qc${randomBytes(3).toString('hex')}_`
  const common = {
    // a machine shared with other jobs: reads must not time out into partial answers
    VECTOR_TIMEOUT_MS: '30000', LEXICAL_TIMEOUT_MS: '30000', EMBEDDING_TIMEOUT_MS: '30000', MAX_EMBEDDING_WAIT_MS: '0',
    CACHE_TTL_SECONDS: '0', DERIVED_GRAPH: 'false'
  }

  beforeAll(async () => {
    cluster = useSharedQdrantCluster(shared!)
    const replicaEnv = {
      ...common, VECTOR_BACKEND: 'qdrant', QDRANT_URL: cluster.url, COLLECTION_PREFIX: prefix,
      QDRANT_SHARD_NUMBER: '3', QDRANT_REPLICATION_FACTOR: '2', QDRANT_WRITE_CONSISTENCY_FACTOR: '1', QDRANT_READ_CONSISTENCY: '1',
      REDIS_URL: inject('redisUrl'), REDIS_COMMAND_TIMEOUT_MS: '1000', REPLICAS: '2', MIN_GENERATION_WAIT_MS: '10000',
      // every lexical search ranks on Qdrant (no copy in the process), so that the reads cross the cluster
      LEXICAL_LOCAL_COPY: 'false'
    }
    a = await buildTestApp(replicaEnv)
    b = await buildTestApp(replicaEnv)
    embedded = await buildTestApp(common)
    const cmrc = await loadCmrc()
    const documents = cmrc.documents.slice(0, PARAGRAPHS)
    const ids = new Set(documents.map((d) => d.id))
    queries = cmrc.queries.filter((q) => q.relevant_ids.some((id) => ids.has(id)))
    // the same requests to both, so that each text is embedded in the same batch (its vector depends on it)
    for (let i = 0; i < documents.length; i += 16) {
      const batch = documents.slice(i, i + 16)
      expect(await ingest(a, CMRC_NS, batch)).toBe(200)
      expect(await ingest(embedded, CMRC_NS, batch)).toBe(200)
    }
  }, 600_000)
  afterAll(async () => {
    await a?.close()
    await b?.close()
    await embedded?.close()
    // the cluster is the run's: the node is back (also after a failure half-way) and this file's collections are gone
    const victim = cluster?.nodes[2]
    if (victim && !victim.running) await victim.restart()
    if (cluster) await dropCollections(cluster.url, prefix)
  })

  it('creates the collections with 3 shards in 2 replicas each', async () => {
    const info = await (await fetch(`${cluster.url}/collections/${prefix}chunks`)).json() as { result: { config: { params: Record<string, unknown> } } }
    expect(info.result.config.params).toMatchObject({ shard_number: 3, replication_factor: 2, write_consistency_factor: 1 })
  })

  it('answers every question of the ingested CMRC paragraphs as one embedded process does, from either replica', async () => {
    expect(queries.length).toBeGreaterThan(100)
    const differing: string[] = []
    for (const q of queries) {
      const [onA, onB, reference] = await Promise.all([hybrid(a, q.query), hybrid(b, q.query), hybrid(embedded, q.query)])
      expect(reference.status, reference.body).toBe(200)
      expect(reference.items.length).toBe(10)
      // the two replicas over the cluster: exactly the same answer
      expect(JSON.stringify(onB.items)).toBe(JSON.stringify(onA.items))
      for (const [name, got] of [['A', onA], ['B', onB]] as const) {
        expect(got.status, got.body).toBe(200)
        expect(got.body).toBe('[]')
        const found = differences(got.items, reference.items)
        if (found.length > 0) differing.push(`${name} ${q.query}: ${found.slice(0, 3).join('; ')}`)
      }
    }
    expect(differing.slice(0, 3)).toEqual([])
  }, 600_000)

  it('loses no read and no acknowledged write when a node is killed during reads and writes', async () => {
    const asked = queries.slice(0, 40)
    const before = new Map<string, string>()
    for (const q of asked) before.set(q.query, JSON.stringify((await hybrid(a, q.query)).items))

    const victim = cluster.nodes[2]!
    let phase: 'before' | 'during' | 'after' = 'before'
    const acknowledged: { doc: DocumentInput; code: string; phase: string }[] = []
    const refused: { doc: DocumentInput; status: number }[] = []
    const readFailures: string[] = []
    let reads = 0
    let stop = false
    let n = 0
    const writer = async (t: TestApp) => {
      while (!stop) {
        const code = `ZX${randomBytes(4).toString('hex').toUpperCase()}`
        const doc = writtenDocument(n++, code)
        const at = phase
        const status = await ingest(t, WRITES_NS, [doc])
        if (status === 200) acknowledged.push({ doc, code, phase: at })
        else refused.push({ doc, status })
      }
    }
    const reader = async (t: TestApp, name: string) => {
      for (let i = 0; !stop; i++) {
        const q = asked[i % asked.length]!
        const got = await hybrid(t, q.query)
        reads += 1
        if (got.status !== 200) readFailures.push(`${name} ${phase}: ${got.status} ${got.body.slice(0, 300)}`)
        else if (got.body !== '[]') readFailures.push(`${name} ${phase}: a leg did not answer: ${got.body.slice(0, 300)}`)
        else if (JSON.stringify(got.items) !== before.get(q.query)) readFailures.push(`${name} ${phase}: another top 10 for ${q.query}`)
      }
    }
    const load = Promise.all([writer(a), writer(b), reader(a, 'A'), reader(b, 'B')])
    const until = async (count: () => number, atLeast: number) => {
      while (count() < atLeast) await new Promise((r) => setTimeout(r, 100))
    }
    await until(() => acknowledged.length, 3)
    phase = 'during'
    await victim.stop('SIGKILL')
    const readsAtKill = reads
    const writesAtKill = acknowledged.length
    await until(() => Math.min(reads - readsAtKill, (acknowledged.length - writesAtKill) * 10), 60)
    phase = 'after'
    await victim.restart()
    const readsAtRestart = reads
    const writesAtRestart = acknowledged.length
    await until(() => Math.min(reads - readsAtRestart, (acknowledged.length - writesAtRestart) * 10), 30)
    stop = true
    await load

    expect(readFailures.slice(0, 5)).toEqual([])
    expect(refused.map((r) => `${r.doc.id}: ${r.status}`)).toEqual([])
    for (const p of ['before', 'during', 'after']) expect(acknowledged.some((w) => w.phase === p), `a write acknowledged ${p} the kill`).toBe(true)

    // once the node is back and its replicas have caught up (no transfer under way, every replica active)
    await waitForActiveReplicas(cluster.url, `${prefix}chunks`)
    const problems: string[] = []
    for (const w of acknowledged) {
      const expected = chunkDocument(w.doc).map((c) => c.id).sort()
      // `all`: a point is returned only when every replica of its shard holds it
      const held = await chunkIds(cluster.url, `${prefix}chunks`, w.doc.id, 'all')
      if (JSON.stringify(held) !== JSON.stringify(expected)) problems.push(`${w.doc.id} (${w.phase}): ${held.length} of ${expected.length} chunks in every replica`)
      for (const t of [a, b]) {
        const r = await t.app.inject({ method: 'POST', url: '/retrieve', payload: { mode: 'hybrid', legs: ['lexical'], namespace: WRITES_NS, query: w.code, top_k: 3 } })
        const top = (r.json() as { recall_bundle?: { metadata?: { doc_id?: string } }[] }).recall_bundle?.[0]?.metadata?.doc_id
        if (r.statusCode !== 200 || top !== w.doc.id) problems.push(`${w.doc.id}: a search for ${w.code} answered ${r.statusCode} with ${String(top)} first`)
      }
    }
    expect(problems.slice(0, 5)).toEqual([])
    // and nothing half-applied: every document in the namespace is whole (one read of each replica set per document)
    const all = await allDocIds(cluster.url, `${prefix}chunks`)
    const whole = new Set(acknowledged.map((w) => w.doc.id))
    expect([...all].filter((id) => !whole.has(id))).toEqual([])
    console.log(`qdrant-cluster: ${reads} reads, ${acknowledged.length} writes acknowledged ` +
      `(${['before', 'during', 'after'].map((p) => `${acknowledged.filter((w) => w.phase === p).length} ${p}`).join(', ')}) around a SIGKILL of one node`)
  }, 600_000)
})

/** Drops every collection whose name starts with `prefix`. */
async function dropCollections(base: string, prefix: string): Promise<void> {
  const listed = await fetch(`${base}/collections`).then((r) => r.json()) as { result: { collections: { name: string }[] } }
  for (const { name } of listed.result.collections) {
    if (name.startsWith(prefix)) await fetch(`${base}/collections/${name}`, { method: 'DELETE' })
  }
}

async function post(url: string, body: unknown): Promise<unknown> {
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  if (!r.ok) throw new Error(`${url}: ${r.status} ${await r.text()}`)
  return ((await r.json()) as { result: unknown }).result
}

/** The chunk ids (our ids) of a document in namespace `writes`, read with `consistency`. */
async function chunkIds(base: string, collection: string, docId: string, consistency: string): Promise<string[]> {
  const result = await post(`${base}/collections/${collection}/points/scroll?consistency=${consistency}`, {
    limit: 1000, with_payload: ['id'], with_vector: false,
    filter: { must: [{ key: 'namespace', match: { value: WRITES_NS } }, { key: 'doc_id', match: { value: docId } }] }
  }) as { points: { payload: { id: string } }[] }
  return result.points.map((p) => p.payload.id).sort()
}

async function allDocIds(base: string, collection: string): Promise<Set<string>> {
  const result = await post(`${base}/collections/${collection}/points/scroll?consistency=all`, {
    limit: 10_000, with_payload: ['doc_id'], with_vector: false, filter: { must: [{ key: 'namespace', match: { value: WRITES_NS } }] }
  }) as { points: { payload: { doc_id: string } }[] }
  return new Set(result.points.map((p) => p.payload.doc_id))
}

/** Waits until every replica of every shard of the collection is active and no shard transfer is under way. */
async function waitForActiveReplicas(base: string, collection: string): Promise<void> {
  const deadline = Date.now() + 120_000
  let last = ''
  while (Date.now() < deadline) {
    const info = await fetch(`${base}/collections/${collection}/cluster`).then((r) => r.json()).catch(() => undefined) as
      { result?: { local_shards: { state: string }[]; remote_shards: { state: string }[]; shard_transfers: unknown[] } } | undefined
    const r = info?.result
    last = JSON.stringify(r)
    if (r && r.shard_transfers.length === 0 && [...r.local_shards, ...r.remote_shards].every((s) => s.state === 'Active') &&
      r.local_shards.length + r.remote_shards.length === 6) return
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
  throw new Error(`the replicas of ${collection} did not all become active: ${last}`)
}

/**
 * recall on a 3-node Qdrant cluster (3 shards, 2 replicas each) beside one Qdrant node, same data, same run:
 * hybrid p50/p99 and throughput over HTTP, and write → findable (the ingest call's time, then the time from its
 * answer until a search finds the document); then on the cluster while one node is down (SIGKILL) and once it is
 * back. Writes bench/results/qdrant-cluster.json.
 *
 *   npx tsx bench/qdrant-cluster.ts [--docs 2000] [--seconds 15]      (make bench-qdrant-cluster)
 *
 * What the figures include:
 * - Vectors, of passages and queries alike, come from a deterministic stand-in (a unit vector seeded by the text's
 *   hash): the store's cost does not depend on the values, and the one ONNX session would otherwise be the queue
 *   being measured. The corpus is synthetic documents made of CMRC sentences, written through the write path.
 * - `LEXICAL_LOCAL_COPY=false`: both legs run on Qdrant at every query (with the default local copy the lexical leg
 *   is answered in process once proven current, and only the vector leg crosses the cluster).
 * - The client (4 concurrent requests, closed loop) runs in the service's process; every node, the service and the
 *   client share this machine's cores with whatever else runs on it: the load average is recorded.
 * - The node killed is not the one QDRANT_URL names (recall talks to one address: docs/deployment.md).
 */
import { execFileSync } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { loadConfig } from '../src/config.js'
import type { DocumentInput } from '../src/corpus/documents.js'
import { buildApp } from '../src/http/app.js'
import { openServices } from '../src/services.js'
import { createRuntime } from '../src/runtime.js'
import { startQdrantCluster, type QdrantCluster } from '../test/helpers/qdrant-cluster.js'
import { startQdrant } from '../test/helpers/qdrant-server.js'
import { loadCmrc } from './lib/cmrc.js'
import { standInEmbedder, syntheticDocuments } from './lib/synthetic.js'

const { values } = parseArgs({ options: { docs: { type: 'string', default: '2000' }, seconds: { type: 'string', default: '15' } } })
const DOCS = Number(values.docs)
const SECONDS = Number(values.seconds)
const CONCURRENCY = 4
const WRITES = 5

const pct = (xs: readonly number[], p: number) => {
  if (xs.length === 0) return null
  const s = [...xs].sort((a, b) => a - b)
  return Math.round(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! * 100) / 100
}
const r2 = (x: number) => Math.round(x * 100) / 100
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const load = () => loadavg().map(r2)

const embedder = standInEmbedder

/** Hybrid queries from CONCURRENCY clients for `seconds`: latencies of the 200s, throughput, other statuses. */
async function queryLoad(url: string, questions: readonly string[], seconds: number) {
  const latencies: number[] = []
  const statuses: Record<string, number> = {}
  let next = 0
  const end = performance.now() + seconds * 1000
  const client = async () => {
    while (performance.now() < end) {
      const query = questions[next++ % questions.length]!
      const start = performance.now()
      const r = await fetch(`${url}/retrieve`, {
        method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ mode: 'hybrid', query, top_k: 10 })
      }).catch(() => undefined)
      await r?.arrayBuffer()
      const status = String(r?.status ?? 'error')
      if (status === '200') latencies.push(performance.now() - start)
      else statuses[status] = (statuses[status] ?? 0) + 1
    }
  }
  const begun = performance.now()
  await Promise.all(Array.from({ length: CONCURRENCY }, client))
  const elapsed = (performance.now() - begun) / 1000
  return { requests: latencies.length, per_second: r2(latencies.length / elapsed), p50_ms: pct(latencies, 50), p99_ms: pct(latencies, 99), failed: statuses }
}

/**
 * WRITES times: ingest one document with a word of its own, then search for that word (the lexical leg: the point
 * carries both legs, so the word found is the point written) until the document comes first.
 */
async function writeToFindable(url: string, tag: string) {
  const ack: number[] = []
  const findable: number[] = []
  const failed: string[] = []
  for (let i = 0; i < WRITES; i++) {
    const code = `QC${tag}${i}X${Date.now().toString(36).toUpperCase()}`
    const id = `probe-${tag}-${i}`
    const started = performance.now()
    const r = await fetch(`${url}/ingest/documents`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ documents: [{ id, text: `# 探针 ${i}\n\n${code} 是这条记录独有的编号。写入后多久能被检索到。` }] })
    })
    await r.arrayBuffer()
    const acked = performance.now()
    if (r.status !== 200) { failed.push(`${id}: ${r.status}`); continue }
    ack.push(acked - started)
    for (;;) {
      const s = await fetch(`${url}/retrieve`, {
        method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ mode: 'hybrid', legs: ['lexical'], query: code, top_k: 1 })
      })
      const body = await s.json() as { recall_bundle?: { metadata?: { doc_id?: string } }[] }
      if (s.status === 200 && body.recall_bundle?.[0]?.metadata?.doc_id === id) break
      if (performance.now() - acked > 30_000) { failed.push(`${id}: not found within 30 s`); break }
    }
    findable.push(performance.now() - acked)
  }
  return { writes: WRITES, ack_ms_p50: pct(ack, 50), ack_ms_max: pct(ack, 100), findable_after_ack_ms_p50: pct(findable, 50), findable_after_ack_ms_max: pct(findable, 100), failed }
}

/** Bytes under each storage folder (what one node keeps on disk), in MiB. */
function storageMiB(dirs: readonly string[]): number[] {
  return dirs.map((d) => Math.round(Number(execFileSync('du', ['-sb', d], { encoding: 'utf8' }).split('\t')[0]) / 2 ** 20 * 10) / 10)
}

async function waitActive(base: string, collection: string): Promise<number> {
  const started = performance.now()
  for (;;) {
    const info = await fetch(`${base}/collections/${collection}/cluster`).then((r) => r.json()).catch(() => undefined) as
      { result?: { local_shards: { state: string }[]; remote_shards: { state: string }[]; shard_transfers: unknown[] } } | undefined
    const r = info?.result
    if (r && r.shard_transfers.length === 0 && [...r.local_shards, ...r.remote_shards].every((s) => s.state === 'Active')) return performance.now() - started
    await sleep(200)
  }
}

async function main(): Promise<void> {
  const { documents, queries } = await loadCmrc()
  const corpus: DocumentInput[] = syntheticDocuments(documents.map((d) => d.text), DOCS)
  // Two trial questions are empty (TRIAL_776_QUERY_4, TRIAL_20_QUERY_0): the service answers them 400.
  const questions = queries.map((q) => q.query).filter((q) => q.trim() !== '')
  const single = await startQdrant()
  let cluster: QdrantCluster | undefined
  const results: Record<string, unknown> = {
    machine: { cpus: cpus().length, load_average_at_start: load() }, documents: DOCS, seconds: SECONDS, concurrency: CONCURRENCY
  }
  try {
    cluster = await startQdrantCluster(3)
    const targets = [
      { name: 'one node', url: single.url, env: {} },
      { name: '3 nodes, 3 shards x 2 replicas', url: cluster.url, env: { QDRANT_SHARD_NUMBER: '3', QDRANT_REPLICATION_FACTOR: '2' } }
    ]
    const rows: Record<string, unknown>[] = []
    for (const target of targets) {
      const dataDir = await mkdtemp(join(tmpdir(), 'recall-bench-qc-'))
      const config = loadConfig({
        DATA_DIR: dataDir, DEMO_DATA: 'false', LOG_LEVEL: 'silent', RATE_LIMIT_MAX: '0', CACHE_TTL_SECONDS: '0', EMBEDDING_CACHE_TTL_SECONDS: '0',
        VECTOR_BACKEND: 'qdrant', QDRANT_URL: target.url, COLLECTION_PREFIX: 'bench_', LEXICAL_LOCAL_COPY: 'false', DERIVED_GRAPH: 'false',
        VECTOR_TIMEOUT_MS: '30000', LEXICAL_TIMEOUT_MS: '30000', MAX_EVENT_LOOP_DELAY_MS: '0', ...target.env
      })
      const services = await openServices(config, { providers: (base) => ({ ...base, embedder }) })
      const app = await buildApp(createRuntime(services), { logger: false })
      const url = await app.listen({ port: 0, host: '127.0.0.1' })
      try {
        console.error(`${target.name}: loading ${DOCS} documents`)
        const loadStart = performance.now()
        for (let i = 0; i < corpus.length; i += 100) {
          await services.writePath.write('default', { kind: 'documents', op: 'upsert', documents: corpus.slice(i, i + 100) })
        }
        const loadSeconds = r2((performance.now() - loadStart) / 1000)
        const chunks = await services.vectors.count('bench_chunks', 'default')
        await queryLoad(url, questions, 3) // warm-up
        const row: Record<string, unknown> = { target: target.name, chunks, load_seconds: loadSeconds }
        row.load_average_before = load()
        row.hybrid = await queryLoad(url, questions, SECONDS)
        row.write_to_findable = await writeToFindable(url, 'up')
        if (target.url === cluster.url) {
          row.storage_mib_per_node = storageMiB(cluster.nodes.map((n) => n.dir))
          console.error(`${target.name}: one node killed`)
          await cluster.nodes[2]!.stop('SIGKILL')
          row.node_down = { load_average: load(), hybrid: await queryLoad(url, questions, SECONDS), write_to_findable: await writeToFindable(url, 'down') }
          await cluster.nodes[2]!.restart()
          const recoveryMs = await waitActive(cluster.url, 'bench_chunks')
          row.node_back = {
            replicas_active_after_restart_ms: Math.round(recoveryMs), load_average: load(),
            hybrid: await queryLoad(url, questions, SECONDS), write_to_findable: await writeToFindable(url, 'back')
          }
        } else {
          row.storage_mib_per_node = storageMiB([single.dir])
        }
        row.load_average_after = load()
        rows.push(row)
        console.error(JSON.stringify(row))
      } finally {
        await app.close()
        await rm(dataDir, { recursive: true, force: true })
      }
    }
    results.rows = rows
    results.load_average_at_end = load()
    await writeFile('bench/results/qdrant-cluster.json', `${JSON.stringify(results, null, 2)}\n`)
    console.error('wrote bench/results/qdrant-cluster.json')
  } finally {
    await cluster?.close()
    await single.stop('SIGTERM', true)
  }
}

await main()

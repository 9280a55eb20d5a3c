/**
 * Embedded vector store benchmark: search latency (p50/p99) at 1k/10k/50k random unit vectors of 512 dimensions,
 * and write throughput (fsync per write). Run with `npx tsx bench/vector-store.ts`; writes
 * bench/results/vector-store.json. Not a test: figures depend on the machine and on what else runs on it.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, loadavg, totalmem } from 'node:os'
import { join } from 'node:path'
import { EmbeddedVectorStore } from '../src/providers/vector-store/embedded.js'
import type { VectorRecord } from '../src/providers/vector-store/port.js'

const DIMS = 512
const SIZES = [1_000, 10_000, 50_000]
const QUERIES = 300
const WARMUP = 30
const LIMIT = 50 // the hybrid leg's default window
const WRITE_BATCH = 20 // about one document's chunks per write
const WORK_DIR = join('bench', '.work', 'vector-store')

let seed = 42
/** Deterministic uniform in [-1, 1) (a linear congruential generator), so runs are comparable. */
function random(): number {
  seed = (Math.imul(seed, 1_664_525) + 1_013_904_223) >>> 0
  return seed / 2 ** 31 - 1
}

function randomUnit(): Float32Array {
  const v = new Float32Array(DIMS)
  let norm = 0
  for (let i = 0; i < DIMS; i++) {
    v[i] = random()
    norm += v[i]! * v[i]!
  }
  const scale = 1 / Math.sqrt(norm)
  for (let i = 0; i < DIMS; i++) v[i] = v[i]! * scale
  return v
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}

function round(n: number, digits = 3): number {
  return Number(n.toFixed(digits))
}

async function main(): Promise<void> {
  const started = new Date().toISOString()
  const loadBefore = loadavg()
  const search: Record<string, unknown>[] = []
  const writes: Record<string, unknown>[] = []

  for (const size of SIZES) {
    rmSync(WORK_DIR, { recursive: true, force: true })
    mkdirSync(WORK_DIR, { recursive: true })
    const store = new EmbeddedVectorStore({ dir: WORK_DIR })
    await store.ensureCollection('bench', DIMS)

    const writeStarted = performance.now()
    for (let doc = 0; doc * WRITE_BATCH < size; doc++) {
      const upsert: VectorRecord[] = []
      for (let j = 0; j < WRITE_BATCH && doc * WRITE_BATCH + j < size; j++) {
        upsert.push({ id: `doc${doc}#${j}`, vector: randomUnit(), payload: { doc_id: `doc${doc}`, text: `chunk ${j}` } })
      }
      await store.write('bench', 'default', { deleteDocIds: [`doc${doc}`], upsert })
    }
    const writeMs = performance.now() - writeStarted
    await store.close()
    // reopening replays the snapshot and the log tail; that is the embedded store's start-up cost
    const reopenStarted = performance.now()
    const reopened = new EmbeddedVectorStore({ dir: WORK_DIR })
    if ((await reopened.count('bench', 'default')) !== size) throw new Error('reopened store lost records')
    const reopenMs = performance.now() - reopenStarted
    writes.push({
      records: size,
      records_per_write: WRITE_BATCH,
      total_ms: round(writeMs, 1),
      records_per_s: Math.round((size / writeMs) * 1000),
      writes_per_s: Math.round((size / WRITE_BATCH / writeMs) * 1000),
      reopen_ms: round(reopenMs, 1)
    })

    const queries = Array.from({ length: QUERIES + WARMUP }, randomUnit)
    const times: number[] = []
    for (const [i, q] of queries.entries()) {
      const t = performance.now()
      const hits = await reopened.search('bench', 'default', q, LIMIT)
      const elapsed = performance.now() - t
      if (hits.length !== Math.min(LIMIT, size)) throw new Error(`search returned ${hits.length} hits`)
      if (i >= WARMUP) times.push(elapsed)
    }
    times.sort((a, b) => a - b)
    search.push({
      vectors: size,
      dims: DIMS,
      limit: LIMIT,
      queries: QUERIES,
      p50_ms: round(percentile(times, 50)),
      p99_ms: round(percentile(times, 99)),
      mean_ms: round(times.reduce((a, b) => a + b, 0) / times.length)
    })
    await reopened.close()
    console.log(`${size}: search p50 ${percentile(times, 50).toFixed(2)} ms, p99 ${percentile(times, 99).toFixed(2)} ms; ` +
      `write ${Math.round((size / writeMs) * 1000)} records/s; reopen ${reopenMs.toFixed(0)} ms`)
  }
  rmSync(WORK_DIR, { recursive: true, force: true })

  const result = {
    benchmark: 'embedded vector store',
    started,
    machine: {
      cpus: cpus().length,
      cpu_model: cpus()[0]?.model ?? 'unknown',
      memory_gb: round(totalmem() / 2 ** 30, 1),
      node: process.version,
      load_average_before: loadBefore.map((x) => round(x, 2)),
      load_average_after: loadavg().map((x) => round(x, 2)),
      note: 'shared machine: other engineers ran tests at the same time, so these figures are noisy upper bounds'
    },
    search,
    writes: {
      note: 'each write is one log record with fsync (fdatasync) before it resolves; compaction runs as the log outgrows the snapshot',
      runs: writes
    }
  }
  mkdirSync(join('bench', 'results'), { recursive: true })
  writeFileSync(join('bench', 'results', 'vector-store.json'), `${JSON.stringify(result, null, 2)}\n`)
}

await main()

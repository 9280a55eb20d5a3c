/**
 * How long a write to the embedded vector store waits for the store's compaction (issue 44 item 2): N chunk records
 * (stand-in unit vectors of 512 dimensions from a seeded generator, payloads of about 700 bytes of JSON like a chunk's)
 * written into one collection of one namespace in writes of 400 (50 documents of 8 chunks, each write deleting its
 * documents first, as the write path does), into a store of this tree and, with `--base DIR`, one of another tree beside
 * it, each in a process of its own, write by write in alternating order. Only the vector store runs: no model, no other
 * store.
 *
 *   npx tsx bench/vector-compaction-pause.ts [--chunks 50000] [--base DIR] [--precision int8|float32] [--out FILE]
 *
 * Prints JSON: per tree, each write's own wall time (p50, p99, max, and the five longest with the chunk count before
 * them) and the main thread's CPU time while it was under way (what a compaction run on the event loop meanwhile took
 * included; a loaded machine inflates the wall time, not this), the longest event-loop delay its process saw (`perf_hooks.monitorEventLoopDelay`, 10 ms resolution), the main
 * thread's CPU time from one write's answer to the next (`process.threadCpuUsage`: a compaction's work between the writes
 * included), the compactions seen (the snapshot file's size changed after a write), the time `close()` took (it waits
 * for a compaction under way), and the process's CPU time in all. Times are inflated on a loaded machine; the load
 * average is reported at the start and the end.
 */
import { fork } from 'node:child_process'
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { seededRandom } from '../src/evaluation/statistics.js'
import { loadTree, type Tree } from './lib/tree.js'

const { values: args } = parseArgs({
  options: {
    chunks: { type: 'string', default: '50000' }, base: { type: 'string' }, precision: { type: 'string', default: 'int8' },
    out: { type: 'string' }, worker: { type: 'string' }
  }
})
const DIMS = 512
const CHUNKS_PER_DOC = 8
const DOCS_PER_WRITE = 50
const PER_WRITE = DOCS_PER_WRITE * CHUNKS_PER_DOC
const COLLECTION = 'recall_chunks'
const chunks = Number(args.chunks)
const writes = Math.ceil(chunks / PER_WRITE)
const round = (x: number, digits = 1) => Math.round(x * 10 ** digits) / 10 ** digits
/** The q-quantile of `xs` by the nearest rank. */
const quantile = (xs: readonly number[], q: number) => [...xs].sort((a, b) => a - b)[Math.max(0, Math.ceil(q * xs.length) - 1)]!

const TEXT = '检索服务把文档切成段落，每个段落带着它的上下文标题和元数据写入向量库。'.repeat(6)

function writeOf(w: number): { deleteDocIds: string[]; upsert: { id: string; vector: Float32Array; payload: Record<string, unknown> }[] } {
  // seeded, so both trees are written the same records
  const next = seededRandom(w + 1)
  const docIds = Array.from({ length: DOCS_PER_WRITE }, (_, d) => `doc-${w * DOCS_PER_WRITE + d}`)
  const upsert = docIds.flatMap((docId) => Array.from({ length: CHUNKS_PER_DOC }, (_, j) => ({
    id: `${docId}#${j}`,
    vector: Float32Array.from({ length: DIMS }, () => next() * 2 - 1),
    payload: { doc_id: docId, text: `${docId} 第${j}段 ${TEXT}`, metadata: { source: 'bench', chunk_index: j } }
  })))
  return { deleteDocIds: docIds, upsert }
}

if (args.worker) {
  const tree = loadTree('tree', args.worker)
  const dir = await mkdtemp(join(tmpdir(), 'recall-vcompact-'))
  const { EmbeddedVectorStore } = await tree.module('src/providers/vector-store/embedded.ts')
  const store = new EmbeddedVectorStore({ dir, precision: args.precision })
  await store.ensureCollection(COLLECTION, DIMS)
  const snap = join(dir, `${COLLECTION}.snap`)
  const delay = monitorEventLoopDelay({ resolution: 10 })
  delay.enable()
  let threadCpu = process.threadCpuUsage()
  let snapBytes = (await stat(snap)).size
  process.on('message', async (w: number) => {
    if (w < 0) {
      const t0 = performance.now()
      await store.close()
      const closeMs = performance.now() - t0
      const cpu = process.cpuUsage()
      process.send!({ close_ms: closeMs, event_loop_max_ms: delay.max / 1e6, process_cpu_ms: (cpu.user + cpu.system) / 1000, snapshot_bytes: (await stat(snap)).size }, () => {
        void rm(dir, { recursive: true, force: true }).then(() => process.exit(0))
      })
      return
    }
    const change = writeOf(w)
    const t0 = performance.now()
    const cpu0 = process.threadCpuUsage()
    await store.write(COLLECTION, 'default', change)
    const ms = performance.now() - t0
    const writeCpu = process.threadCpuUsage(cpu0)
    const eventLoopMaxMs = delay.max / 1e6
    delay.reset()
    const mainCpu = process.threadCpuUsage(threadCpu)
    threadCpu = process.threadCpuUsage()
    const now = (await stat(snap)).size
    const compacted = now !== snapBytes
    snapBytes = now
    process.send!({ ms, write_cpu_ms: (writeCpu.user + writeCpu.system) / 1000, event_loop_max_ms: eventLoopMaxMs, main_cpu_ms: (mainCpu.user + mainCpu.system) / 1000, compacted, snapshot_bytes: now })
  })
  process.send!('ready')
} else {
  const trees: Tree[] = [loadTree('this', '.'), ...(args.base ? [loadTree('base', args.base)] : [])]
  const sides = await Promise.all(trees.map(async (tree) => {
    const child = fork(fileURLToPath(import.meta.url), [...process.argv.slice(2), '--worker', tree.dir], { execArgv: ['--import', 'tsx', '--max-old-space-size=2048'] })
    await new Promise((ready) => child.once('message', ready))
    return { tree, child, writes: [] as { ms: number; write_cpu_ms: number; before: number; compacted: boolean; main_cpu_ms: number; event_loop_max_ms: number; snapshot_bytes: number }[], final: {} as Record<string, number> }
  }))
  type Side = (typeof sides)[number]
  const ask = <T>(side: Side, message: number) => new Promise<T>((done) => {
    side.child.once('message', (reply: T) => done(reply))
    side.child.send(message)
  })
  const startedAt = loadavg().map((x) => round(x))
  const t0 = Date.now()
  for (let w = 0; w < writes; w++) {
    for (const side of w % 2 === 0 ? sides : [...sides].reverse()) {
      const reply = await ask<Side['writes'][number]>(side, w)
      side.writes.push({ ...reply, before: w * PER_WRITE })
    }
  }
  for (const side of sides) {
    const exited = new Promise((exit) => side.child.once('exit', exit))
    side.final = await ask<Record<string, number>>(side, -1)
    await exited
  }
  const summary = (side: Side) => {
    const ms = side.writes.map((x) => x.ms)
    const cpu = side.writes.map((x) => x.main_cpu_ms)
    const own = side.writes.map((x) => x.write_cpu_ms)
    return {
      dir: side.tree.dir, commit: side.tree.commit,
      write_ms: { p50: round(quantile(ms, 0.5)), p99: round(quantile(ms, 0.99)), max: round(Math.max(...ms)) },
      write_main_thread_cpu_ms: { p50: round(quantile(own, 0.5)), p99: round(quantile(own, 0.99)), max: round(Math.max(...own)) },
      longest_writes: [...side.writes].sort((a, b) => b.ms - a.ms).slice(0, 5).map((x) => ({ ms: round(x.ms), cpu_ms: round(x.write_cpu_ms), chunks_before: x.before, snapshot_bytes_after: x.snapshot_bytes })),
      main_thread_cpu_ms_between_answers: { p50: round(quantile(cpu, 0.5)), p99: round(quantile(cpu, 0.99)), max: round(Math.max(...cpu)) },
      event_loop_max_ms: round(Math.max(...side.writes.map((x) => x.event_loop_max_ms), side.final['event_loop_max_ms'] ?? 0)),
      compactions_seen: side.writes.filter((x) => x.compacted).length,
      close_ms: round(side.final['close_ms']!), process_cpu_ms: round(side.final['process_cpu_ms']!), final_snapshot_bytes: side.final['snapshot_bytes']
    }
  }
  const report = {
    generated_by: 'bench/vector-compaction-pause.ts', at: new Date().toISOString(), argv: process.argv.slice(2), chunks: writes * PER_WRITE, writes,
    chunks_per_write: PER_WRITE, dims: DIMS, precision: args.precision, wall_s: round((Date.now() - t0) / 1000),
    load_average_at_start: startedAt, load_average_at_end: loadavg().map((x) => round(x)),
    trees: Object.fromEntries(sides.map((s) => [s.tree.name, summary(s)])),
    ...(sides.length === 2 ? { this_over_base_max_write: round(summary(sides[0]!).write_ms.max / summary(sides[1]!).write_ms.max, 3) } : {})
  }
  const text = JSON.stringify(report, null, 2)
  console.log(text)
  if (args.out) await writeFile(args.out, `${text}\n`)
}

// CPU of this process (every thread) per query embedding, alone and at N concurrent callers, for several layouts of the
// embedding pool's session threads, rounds interleaved: how much dearer an embedding gets under concurrency, per layout,
// without HTTP (issue 43 item 4: the 16-client overhead of two sessions each with its own weights on two cores).
//
//   CMRC_PATH=… tsx bench/session-layout-cpu.ts [--layouts 2x1,2x1-shared,1x2,1x2-nospin] [--callers 16] [--queries 600] [--rounds 4]
//                                              [--out bench/results/session-layout-cpu.json]
//
// A layout `SxT` is S session threads of T ONNX Runtime intra-op threads each, behind the service's run queue
// (pipelining on, as EMBEDDING_POOL=threads builds it); `-nospin` turns ONNX Runtime's spinning off. Each round runs every
// layout at 1 caller and at N callers over the same questions (with the query instruction), the layouts' order alternating.
import { readFileSync, writeFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import type { OnnxSessionOptions } from '../src/providers/embedder/onnx-session.js'
import { RunQueue } from '../src/providers/embedder/run-queue.js'
import { sharedWeightsModel } from '../src/providers/embedder/shared-weights.js'
import { SessionThread } from '../src/providers/embedder/session-thread-client.js'
import { BGE_ZH_QUERY_INSTRUCTION } from '../src/providers/embedder/vectors.js'
import { loadCmrc } from './lib/cmrc.js'

const { values } = parseArgs({
  options: {
    layouts: { type: 'string', default: '2x1,1x2,1x2-nospin' },
    callers: { type: 'string', default: '16' },
    queries: { type: 'string', default: '600' },
    rounds: { type: 'string', default: '4' },
    out: { type: 'string', default: 'bench/results/session-layout-cpu.json' }
  }
})
const CALLERS = Number(values.callers)
const QUERIES = Number(values.queries)
const { queries } = await loadCmrc()
const texts = queries.map((q) => BGE_ZH_QUERY_INSTRUCTION + q.query)

/** This process's resident anonymous and file-backed memory, MiB (/proc/self/status). */
function resident(): { anon: number; file: number } {
  const status = readFileSync('/proc/self/status', 'utf8')
  const kb = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0)
  return { anon: kb('RssAnon') / 1024, file: kb('RssFile') / 1024 }
}

// What a layout's sessions add once loaded and run once each: anonymous memory is each session's own (its packed
// weights with copies), file-backed is the mapped data file with -shared (one copy in the page cache however many map it).
interface Layout { name: string; threads: SessionThread[]; queue: RunQueue; loaded_mib: { anon: number; file: number } }
const layouts: Layout[] = []
for (const name of values.layouts.split(',')) {
  const match = /^(\d+)x(\d+)(-nospin)?(-shared)?$/.exec(name)
  if (match === null) throw new Error(`--layouts takes SxT with -nospin and/or -shared, got ${name}`)
  const layout: OnnxSessionOptions = {
    folder: resolve('models', 'bge-small-zh-v1.5'), maxLength: 512, dimensions: 512, threads: Number(match[2]),
    ...(match[3] === undefined ? {} : { spinning: false })
  }
  const options = match[4] === undefined ? layout : { ...layout, modelFile: await sharedWeightsModel(layout, resolve('bench/.work/shared-weights')) }
  const before = resident()
  const threads = Array.from({ length: Number(match[1]) }, () => new SessionThread(options))
  await Promise.all(threads.map((t) => t.start()))
  for (const thread of threads) await thread.run([texts[0]!])
  const after = resident()
  const loaded = { anon: Number((after.anon - before.anon).toFixed(1)), file: Number((after.file - before.file).toFixed(1)) }
  console.log(`${name}: its sessions added ${loaded.anon} MiB anonymous, ${loaded.file} MiB file-backed resident memory`)
  layouts.push({ name, threads, queue: new RunQueue(threads, undefined, { pipeline: true }), loaded_mib: loaded })
}

interface Round { callers: number; cpu_ms_per_query: number; queries_per_s: number; load: number }

async function round(queue: RunQueue, callers: number, count: number, start: number): Promise<Round> {
  let next = 0
  const cpu = process.cpuUsage()
  const began = performance.now()
  await Promise.all(Array.from({ length: callers }, async () => {
    while (next < count) {
      const i = next++
      await queue.submit([texts[(start + i) % texts.length]!], undefined, true)
    }
  }))
  const seconds = (performance.now() - began) / 1000
  const used = process.cpuUsage(cpu)
  return { callers, cpu_ms_per_query: (used.user + used.system) / 1000 / count, queries_per_s: count / seconds, load: loadavg()[0]! }
}

// Warm-up: each layout once at N callers, not counted.
for (const layout of layouts) await round(layout.queue, CALLERS, 100, 0)
const results: Record<string, Array<{ alone: Round; concurrent: Round }>> = Object.fromEntries(layouts.map((l) => [l.name, []]))
for (let r = 0; r < Number(values.rounds); r++) {
  const order = r % 2 === 0 ? layouts : [...layouts].reverse()
  for (const layout of order) {
    const start = (r + 1) * QUERIES
    // Alone on half the questions (a lone caller's round is slower), then the same questions' start at N callers.
    const alone = await round(layout.queue, 1, Math.ceil(QUERIES / 2), start)
    const concurrent = await round(layout.queue, CALLERS, QUERIES, start)
    results[layout.name]!.push({ alone, concurrent })
    console.log(`round ${r + 1} ${layout.name.padEnd(10)} CPU a query alone ${alone.cpu_ms_per_query.toFixed(3)} ms, at ${CALLERS} ${concurrent.cpu_ms_per_query.toFixed(3)} ms (${(concurrent.cpu_ms_per_query / alone.cpu_ms_per_query).toFixed(3)}x), ${concurrent.queries_per_s.toFixed(1)}/s (load ${concurrent.load.toFixed(1)})`)
  }
}
await Promise.all(layouts.flatMap((l) => l.threads.map((t) => t.dispose())))

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}
const r3 = (x: number): number => Number(x.toFixed(3))
const summary = Object.fromEntries(Object.entries(results).map(([name, rs]) => {
  const growth = rs.map((x) => x.concurrent.cpu_ms_per_query / x.alone.cpu_ms_per_query)
  return [name, {
    loaded_mib: layouts.find((l) => l.name === name)!.loaded_mib,
    cpu_ms_alone_median: r3(median(rs.map((x) => x.alone.cpu_ms_per_query))),
    cpu_ms_concurrent_median: r3(median(rs.map((x) => x.concurrent.cpu_ms_per_query))),
    cpu_ms_concurrent_min_max: [r3(Math.min(...rs.map((x) => x.concurrent.cpu_ms_per_query))), r3(Math.max(...rs.map((x) => x.concurrent.cpu_ms_per_query)))],
    concurrent_over_alone_median: r3(median(growth)),
    concurrent_over_alone_min_max: [r3(Math.min(...growth)), r3(Math.max(...growth))],
    queries_per_s_concurrent_median: Number(median(rs.map((x) => x.concurrent.queries_per_s)).toFixed(1))
  }]
}))
const out = { bench: 'session-layout-cpu', date: new Date().toISOString(), callers: CALLERS, queries_per_round: QUERIES, rounds: Number(values.rounds), summary, rounds_detail: results }
writeFileSync(values.out, JSON.stringify(out, null, 2) + '\n')
console.log(JSON.stringify(summary, null, 2))

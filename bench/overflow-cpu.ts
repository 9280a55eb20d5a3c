// CPU of this process (every thread) per query embedding at N concurrent callers, two session threads with and
// without a session in this thread taking the queries they have no room for (RunQueue `overflow`), rounds
// interleaved on the same sessions: the embedding side of issue 43 item 4, without HTTP.
//
//   CMRC_PATH=… tsx bench/overflow-cpu.ts [--callers 16] [--queries 800] [--rounds 4] [--out bench/results/overflow-cpu.json]
import { writeFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { loadOnnxSession, type OnnxSessionOptions } from '../src/providers/embedder/onnx-session.js'
import { RunQueue } from '../src/providers/embedder/run-queue.js'
import { SessionThread } from '../src/providers/embedder/session-thread-client.js'
import { BGE_ZH_QUERY_INSTRUCTION } from '../src/providers/embedder/vectors.js'
import { loadCmrc } from './lib/cmrc.js'

const { values } = parseArgs({
  options: {
    callers: { type: 'string', default: '16' },
    queries: { type: 'string', default: '800' },
    rounds: { type: 'string', default: '4' },
    out: { type: 'string', default: 'bench/results/overflow-cpu.json' }
  }
})
const CALLERS = Number(values.callers)
const QUERIES = Number(values.queries)
const options: OnnxSessionOptions = { folder: resolve('models', 'bge-small-zh-v1.5'), maxLength: 512, dimensions: 512, threads: 1 }
const { queries } = await loadCmrc()
const texts = queries.map((q) => BGE_ZH_QUERY_INSTRUCTION + q.query)
const threads = [new SessionThread(options), new SessionThread(options)]
await Promise.all(threads.map((t) => t.start()))
const here = await loadOnnxSession(options)
const arms = {
  'two session threads': new RunQueue(threads, undefined, { pipeline: true }),
  'two session threads + this thread': new RunQueue(threads, undefined, { pipeline: true, overflow: here })
}

async function round(queue: RunQueue, start: number): Promise<{ cpu_ms_per_query: number; queries_per_s: number; load: number }> {
  let next = 0
  const cpu = process.cpuUsage()
  const began = performance.now()
  await Promise.all(Array.from({ length: CALLERS }, async () => {
    while (next < QUERIES) {
      const i = next++
      await queue.submit([texts[(start + i) % texts.length]!], undefined, true)
    }
  }))
  const seconds = (performance.now() - began) / 1000
  const used = process.cpuUsage(cpu)
  return { cpu_ms_per_query: (used.user + used.system) / 1000 / QUERIES, queries_per_s: QUERIES / seconds, load: loadavg()[0]! }
}

// Warm-up: each arm once, not counted.
for (const queue of Object.values(arms)) await round(queue, 0)
const results: Record<string, Array<Awaited<ReturnType<typeof round>>>> = Object.fromEntries(Object.keys(arms).map((k) => [k, []]))
for (let r = 0; r < Number(values.rounds); r++) {
  const order = r % 2 === 0 ? Object.entries(arms) : Object.entries(arms).reverse()
  for (const [name, queue] of order) {
    const got = await round(queue, (r + 1) * QUERIES)
    results[name]!.push(got)
    console.log(`round ${r + 1} ${name.padEnd(34)} CPU ${got.cpu_ms_per_query.toFixed(3)} ms a query, ${got.queries_per_s.toFixed(1)}/s (load ${got.load.toFixed(1)})`)
  }
}
await Promise.all([...threads.map((t) => t.dispose()), here.dispose()])

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const summary = Object.fromEntries(Object.entries(results).map(([name, rs]) => [name, {
  cpu_ms_per_query_median: Number(median(rs.map((r) => r.cpu_ms_per_query)).toFixed(3)),
  queries_per_s_median: Number(median(rs.map((r) => r.queries_per_s)).toFixed(1))
}]))
const [a, b] = Object.values(summary)
const out = {
  bench: 'overflow-cpu', date: new Date().toISOString(), callers: CALLERS, queries_per_round: QUERIES, rounds: Number(values.rounds),
  summary, cpu_ratio_with_over_without: Number((b!.cpu_ms_per_query_median / a!.cpu_ms_per_query_median).toFixed(3)),
  rounds_detail: results
}
writeFileSync(values.out, JSON.stringify(out, null, 2) + '\n')
console.log(JSON.stringify({ summary, cpu_ratio_with_over_without: out.cpu_ratio_with_over_without }))

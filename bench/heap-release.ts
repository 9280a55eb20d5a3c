/**
 * The heap release's pause and what it gives back, against the live heap and against what V8 reports before it
 * (issue 44 items 1–3; src/memory/heap-release.ts). Each measurement is a process of its own: it builds a live heap of
 * `--live-mib` of chunk-like records (strings, small objects, arrays), lets `--churn-mib` of temporaries go so that a
 * regular full collection leaves their pages in V8's page pool (as an ingest does), goes quiet, reads what V8 and the
 * kernel report, then gives the pool back one `--ways` way and reports the pause and the resident bytes given back:
 *
 *   - `last-resort`: gc({type: 'major', execution: 'async', flavor: 'last-resort'}), what the service did (at least two
 *     atomic full collections that reduce memory, then the pool released);
 *   - `last-resort-no-compact`: the same with V8's `--no-compact` set for its length (marks and sweeps, moves nothing);
 *   - `reducer`: V8's memory reducer, made to run by `--memory-saver-mode` set at the quiet time (its collections are
 *     incremental: marking runs beside the loop, the pause is the finalisation), waited for up to 20 s;
 *   - `major`: one regular full collection (the control: it keeps the pool).
 *
 * Pause: the main thread's collections in the window (sum and longest, from `gc` performance entries) and the longest
 * lateness of a 5 ms timer (what a read would have waited). Rounds go through the ways in turn (interleaved), so that
 * a loaded machine weighs on each alike.
 *
 *   nice -n 19 npx tsx bench/heap-release.ts --live-mib 200,700 --churn-mib 400 --rounds 2 --out bench/results/heap-release-ways.json
 */
import { execFileSync } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import { loadavg } from 'node:os'
import { PerformanceObserver } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { getHeapSpaceStatistics, getHeapStatistics, setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { predictedGain, readHeap } from '../src/memory/heap-release.js'

const MiB = 2 ** 20
const mib = (bytes: number) => Math.round((bytes / MiB) * 10) / 10
const WAYS = ['last-resort', 'last-resort-no-compact', 'reducer', 'major'] as const
type Way = (typeof WAYS)[number]

const { values } = parseArgs({
  options: {
    'live-mib': { type: 'string', default: '200,700' },
    'churn-mib': { type: 'string', default: '400' },
    ways: { type: 'string', default: WAYS.join(',') },
    rounds: { type: 'string', default: '2' },
    'max-old-space-mib': { type: 'string', default: '2048' },
    out: { type: 'string', default: 'bench/results/heap-release-ways.json' },
    child: { type: 'string' }
  }
})

/** What V8 and the kernel report, the figures a policy could read before paying a release. */
function reading() {
  const h = getHeapStatistics()
  const m = process.memoryUsage()
  const spaces = getHeapSpaceStatistics()
  const large = spaces.filter((s) => s.space_name.includes('lo_space')).reduce((a, s) => a + s.space_size, 0)
  const paged = spaces.filter((s) => !s.space_name.includes('lo_space'))
  return {
    rss: m.rss, heap_total: h.total_heap_size, heap_physical: h.total_physical_size, heap_used: h.used_heap_size,
    external: m.external, array_buffers: m.arrayBuffers, malloced: h.malloced_memory,
    paged_committed: h.total_heap_size - large,
    paged_unused: paged.reduce((a, s) => a + s.space_size - s.space_used_size, 0)
  }
}

async function child(spec: string): Promise<void> {
  const [way, liveText, churnText] = spec.split(':') as [Way, string, string]
  const gcs: Array<{ kind: number; ms: number; at: number }> = []
  // the highest paged committed heap seen after any collection: pages above the committed heap now are pooled or given back
  let highWater = 0
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) gcs.push({ kind: (e as unknown as { detail: { kind: number } }).detail.kind, ms: e.duration, at: e.startTime })
    highWater = Math.max(highWater, reading().paged_committed)
  }).observe({ entryTypes: ['gc'] })
  setFlagsFromString('--expose-gc')
  const gc = runInNewContext('gc') as (o?: object) => Promise<void>
  setFlagsFromString('--no-expose-gc')
  const empty = reading()

  // a record ~ one chunk's heap parts: an id, a text, a few numbers, a small array (~1 KiB)
  const live: unknown[] = []
  const target = Number(liveText) * MiB
  let i = 0
  while (reading().heap_used - empty.heap_used < target) {
    for (let k = 0; k < 2000; k++, i++) live.push({ id: `doc-${i}#${i % 7}`, text: `段落${i} `.repeat(60 + (i % 40)), n: [i, i * 2, i % 13], meta: { at: i, ok: true } })
  }
  let temporaries: unknown[] | undefined = []
  const churn = Number(churnText) * MiB
  const before = reading().heap_used
  while (reading().heap_used - before < churn) {
    const block: unknown[] = []
    for (let k = 0; k < 5000; k++) block.push({ x: k, y: `t${k}`, z: [k] })
    temporaries.push(block)
  }
  temporaries = undefined
  await gc({ type: 'major', execution: 'async' })
  await new Promise((resolve) => setTimeout(resolve, 1000))
  highWater = Math.max(highWater, reading().paged_committed)
  // the service's prediction (src/memory/heap-release.ts): V8 pages mapped beyond the main heap's committed ones, plus their unused part
  const service = await readHeap()
  const quiet = reading()

  let maxLate = 0
  let last = performance.now()
  const probe = setInterval(() => {
    const now = performance.now()
    maxLate = Math.max(maxLate, now - last - 5)
    last = now
  }, 5)
  gcs.length = 0
  const started = performance.now()
  if (way === 'last-resort' || way === 'last-resort-no-compact') {
    if (way === 'last-resort-no-compact') setFlagsFromString('--no-compact')
    await gc({ type: 'major', execution: 'async', flavor: 'last-resort' })
    if (way === 'last-resort-no-compact') setFlagsFromString('--compact')
  } else if (way === 'major') {
    await gc({ type: 'major', execution: 'async' })
  } else {
    setFlagsFromString('--memory-saver-mode')
    const until = performance.now() + 20_000
    // the reducer runs up to two collections about a second apart: done once one ran and none followed for 2 s
    const settled = () => gcs.some((g) => g.kind === 4) && performance.now() - Math.max(...gcs.map((g) => g.at + g.ms)) > 2000
    while (performance.now() < until && !settled()) await new Promise((resolve) => setTimeout(resolve, 250))
    setFlagsFromString('--no-memory-saver-mode')
  }
  const callMs = performance.now() - started
  await new Promise((resolve) => setTimeout(resolve, 500))
  clearInterval(probe)
  const after = reading()
  const main = gcs.filter((g) => g.at >= started - 1)
  const inMiB = (r: ReturnType<typeof reading>) => Object.fromEntries(Object.entries(r).map(([k, v]) => [`${k}_mib`, mib(v)]))
  console.log(JSON.stringify({
    way, live_mib: Number(liveText), churn_mib: Number(churnText), records: live.length,
    empty: inMiB(empty), quiet: inMiB(quiet), after: inMiB(after), high_water_paged_mib: mib(highWater),
    predicted: {
      pool_by_high_water_mib: mib(highWater - quiet.paged_committed),
      rss_over_v8_mib: mib(quiet.rss - quiet.heap_physical - quiet.external - (empty.rss - empty.heap_physical - empty.external)),
      paged_unused_mib: mib(quiet.paged_unused),
      service_mib: mib(predictedGain(service)),
      v8_pages_over_committed_mib: mib((service.v8Pages ?? 0) - service.pagedCommitted)
    },
    gain_mib: mib(quiet.rss - after.rss),
    call_ms: Math.round(callMs),
    full_collections: main.filter((g) => g.kind === 4).length,
    pause_sum_ms: Math.round(main.reduce((a, g) => a + g.ms, 0)),
    pause_max_ms: Math.round(Math.max(0, ...main.map((g) => g.ms))),
    loop_max_late_ms: Math.round(maxLate)
  }))
}

async function main(): Promise<void> {
  const lives = values['live-mib'].split(',').map(Number)
  const ways = values.ways.split(',') as Way[]
  const rounds = Number(values.rounds)
  const self = fileURLToPath(import.meta.url)
  const results: unknown[] = []
  const loads: number[][] = [loadavg()]
  for (const live of lives) {
    for (let r = 0; r < rounds; r++) {
      for (const way of ways) {
        const flags = [`--max-old-space-size=${values['max-old-space-mib']}`, '--heap-growing-percent=50', '--import', 'tsx']
        const line = execFileSync(process.execPath, [...flags, self, '--child', `${way}:${live}:${values['churn-mib']}`], { encoding: 'utf8', timeout: 600_000 })
        const result = { round: r, load_1m: Math.round(loadavg()[0]! * 10) / 10, ...JSON.parse(line.trim().split('\n').at(-1)!) as object }
        console.error(JSON.stringify(result))
        results.push(result)
      }
    }
    loads.push(loadavg())
  }
  await writeFile(values.out, `${JSON.stringify({
    generated_by: 'bench/heap-release.ts', at: new Date().toISOString(), node: process.version,
    command: `npx tsx bench/heap-release.ts ${process.argv.slice(2).join(' ')}`,
    child_flags: `--max-old-space-size=${values['max-old-space-mib']} --heap-growing-percent=50 (the service's --heap-growing-percent)`,
    load_average: loads.map((l) => l.map((x) => Math.round(x * 10) / 10)),
    note: 'shared 2-core machine at nice 19 beside the lead\'s 1M-chunk benchmark: compare the ways within a round, not the milliseconds across runs',
    results
  }, null, 2)}\n`)
}

if (values.child) await child(values.child)
else await main()

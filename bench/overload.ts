// Overload benchmark (`make overload`): does the service shed only past real overload?
//
//   tsx bench/overload.ts [--duration 60] [--capacity-duration 30] [--out bench/results/overload.json]
//
// Starts recall on the embedded default with the demo world (scripts/load/processes.ts; from dist/ when
// built, so build first), then, each query unique so no cache answers (hybrid, both legs):
//   1. capacity: 64 clients in a closed loop; the 200s per second are what the machine can serve (C);
//   2. 4x: an open loop offering 4C requests per second, whatever the answers: the service must answer
//      what it can within bounded latency, refuse the rest with 503, and keep its memory flat;
//   3. 0.5x: an open loop offering C/2: nothing may be refused;
//   4. with `stress-ng --cpu 2` beside it (two CPU-bound processes): its capacity then (S), 0.5x of C
//      again, and 0.5x of S: nothing may be refused below what it can serve.
// Latency is counted per status by the client, and read from the service's own histogram (server side);
// resident memory of the service is sampled each second from /proc.
// The load generator runs in this process, on the same cores as the service: at 4x it takes CPU too.
import { spawn, type ChildProcess } from 'node:child_process'
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs'
import { Agent, request } from 'node:http'
import { loadavg } from 'node:os'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { dirname } from 'node:path'
import { parseArgs } from 'node:util'
import { startService, type Service } from '../scripts/load/processes.js'
import { DEFAULT_QUERIES } from '../scripts/load/queries.js'

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '60' },
    'capacity-duration': { type: 'string', default: '30' },
    out: { type: 'string', default: 'bench/results/overload.json' }
  }
})
const DURATION_S = Number(values.duration)
const CAPACITY_S = Number(values['capacity-duration'])

const agent = new Agent({ keepAlive: true, maxSockets: 4096 })
let counter = 0

interface Outcome {
  status: number
  ms: number
  /** A 503's reason, its figures replaced by N. */
  reason?: string
  /** A 200 with a leg that did not answer (timeout or error): answered, but from fewer legs. */
  degraded?: boolean
}

/** One GET of a unique hybrid question; status 0 is a client-side error. */
function ask(base: URL): Promise<Outcome> {
  const q = `${DEFAULT_QUERIES[counter % DEFAULT_QUERIES.length]} ${counter++}`
  const path = `/retrieve?${new URLSearchParams({ mode: 'hybrid', q, top_k: '10' }).toString()}`
  const started = performance.now()
  return new Promise((resolve) => {
    const req = request({ agent, host: base.hostname, port: base.port, path, method: 'GET' }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => {
        const ms = performance.now() - started
        const status = res.statusCode ?? 0
        const body = Buffer.concat(chunks).toString('utf8')
        if (status === 503) {
          const message = (JSON.parse(body) as { message?: string }).message ?? ''
          resolve({ status, ms, reason: message.replace(/\d+/g, 'N') })
        } else if (status === 200) {
          const legs = (JSON.parse(body) as { legs: { status: string }[] }).legs
          resolve({ status, ms, degraded: legs.some((l) => l.status === 'timeout' || l.status === 'error') })
        } else {
          resolve({ status, ms })
        }
      })
    })
    req.on('error', () => resolve({ status: 0, ms: performance.now() - started }))
    req.end()
  })
}

function rssBytes(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:'))
  return Number(line?.replace(/\D+/g, '') ?? 0) * 1024
}

const pct = (sorted: number[], p: number) => (sorted.length === 0 ? null : Math.round(sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]! * 10) / 10)

/** The service's own view: request durations of GET /retrieve by status, from its Prometheus histogram. */
async function serverHistogram(base: URL): Promise<Map<string, Map<number, number>>> {
  const text = await (await fetch(new URL('/metrics', base))).text()
  const out = new Map<string, Map<number, number>>()
  for (const m of text.matchAll(/^recall_request_duration_seconds_bucket\{([^}]*)\} (\d+)/gm)) {
    const labels = m[1]!
    if (!labels.includes('route="/retrieve"')) continue
    const status = /status="(\d+)"/.exec(labels)![1]!
    const le = /le="([^"]+)"/.exec(labels)![1]!
    const buckets = out.get(status) ?? new Map<number, number>()
    buckets.set(le === '+Inf' ? Infinity : Number(le), (buckets.get(le === '+Inf' ? Infinity : Number(le)) ?? 0) + Number(m[2]))
    out.set(status, buckets)
  }
  return out
}

/** Upper bucket bounds (seconds) under which 50 % and 99 % of a phase's requests of each status finished, server side. */
function serverPercentiles(before: Map<string, Map<number, number>>, after: Map<string, Map<number, number>>) {
  const result: Record<string, { p50_le_s: number | null; p99_le_s: number | null; count: number }> = {}
  for (const [status, buckets] of after) {
    const bounds = [...buckets.keys()].sort((a, b) => a - b)
    const counts = bounds.map((b) => buckets.get(b)! - (before.get(status)?.get(b) ?? 0))
    const total = counts.at(-1) ?? 0
    if (total === 0) continue
    const le = (p: number) => { const i = counts.findIndex((c) => c >= p * total); return i < 0 || !Number.isFinite(bounds[i]!) ? null : bounds[i]! }
    result[status] = { p50_le_s: le(0.5), p99_le_s: le(0.99), count: total }
  }
  return result
}

function summarise(name: string, offeredPerS: number | null, seconds: number, outcomes: Outcome[], rss: number[]) {
  const byStatus: Record<string, number> = {}
  for (const o of outcomes) byStatus[o.status] = (byStatus[o.status] ?? 0) + 1
  const latency = (status: number) => {
    const ms = outcomes.filter((o) => o.status === status).map((o) => o.ms).sort((a, b) => a - b)
    return ms.length === 0 ? null : { p50: pct(ms, 0.5), p90: pct(ms, 0.9), p99: pct(ms, 0.99), max: pct(ms, 1) }
  }
  const reasons: Record<string, number> = {}
  for (const o of outcomes) if (o.reason) reasons[o.reason] = (reasons[o.reason] ?? 0) + 1
  const third = Math.max(1, Math.floor(rss.length / 3))
  const mean = (xs: number[]) => Math.round(xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length) / 2 ** 20)
  return {
    name,
    offered_per_s: offeredPerS,
    seconds,
    requests: outcomes.length,
    answered_200_per_s: Math.round(((byStatus['200'] ?? 0) / seconds) * 10) / 10,
    by_status: byStatus,
    degraded_200: outcomes.filter((o) => o.degraded).length,
    refused_share: Math.round(((byStatus['503'] ?? 0) / Math.max(1, outcomes.length)) * 1000) / 1000,
    latency_ms_200: latency(200),
    latency_ms_503: latency(503),
    refusal_reasons: reasons,
    rss_mib: { first_third_mean: mean(rss.slice(0, third)), last_third_mean: mean(rss.slice(-third)), max: Math.round(Math.max(...rss) / 2 ** 20) }
  }
}

/**
 * Runs one phase: samples the service's resident memory each second, reads its own latency histogram
 * before and after, and watches this process's event loop (a late client inflates the latencies it sees).
 */
async function phase(name: string, offered: number | null, seconds: number, service: Service, work: () => Promise<Outcome[]>) {
  const base = new URL(service.url)
  const before = await serverHistogram(base)
  const lag = monitorEventLoopDelay({ resolution: 10 })
  lag.enable()
  const rss: number[] = [rssBytes(service.pid)]
  const timer = setInterval(() => rss.push(rssBytes(service.pid)), 1000)
  let outcomes: Outcome[]
  try {
    outcomes = await work()
  } finally {
    clearInterval(timer)
    lag.disable()
  }
  const summary = {
    ...summarise(name, offered, seconds, outcomes, rss),
    server_side_duration: serverPercentiles(before, await serverHistogram(base)),
    client_event_loop_delay_ms: { p99: Math.round(lag.percentile(99) / 1e6), max: Math.round(lag.max / 1e6) }
  }
  console.log(JSON.stringify(summary))
  return summary
}

async function closedLoop(base: URL, clients: number, seconds: number): Promise<Outcome[]> {
  const until = performance.now() + seconds * 1000
  const outcomes: Outcome[] = []
  await Promise.all(Array.from({ length: clients }, async () => {
    while (performance.now() < until) outcomes.push(await ask(base))
  }))
  return outcomes
}

/** Offers `rate` requests per second for `seconds`, never waiting for answers (an open loop). */
async function openLoop(base: URL, rate: number, seconds: number): Promise<Outcome[]> {
  const started = performance.now()
  const pending: Promise<Outcome>[] = []
  let sent = 0
  while (performance.now() - started < seconds * 1000) {
    const due = Math.floor(((performance.now() - started) / 1000) * rate)
    for (; sent < due; sent++) pending.push(ask(base))
    await new Promise((r) => setTimeout(r, 5))
  }
  return Promise.all(pending)
}

async function main(): Promise<void> {
  const load = { start: loadavg().map((x) => Math.round(x * 100) / 100) }
  // No caches: every question is unique anyway, and a filling LRU would hide whether a queue grows.
  const service: Service = await startService({ CACHE_TTL_SECONDS: '0', EMBEDDING_CACHE_TTL_SECONDS: '0' })
  const base = new URL(service.url)
  const phases = []
  try {
    // Warm-up: the first questions load code paths and fill the embedding session's buffers.
    await closedLoop(base, 8, 5)

    const capacity = await phase('capacity: 64 clients, closed loop', null, CAPACITY_S, service, () => closedLoop(base, 64, CAPACITY_S))
    phases.push(capacity)
    const c = capacity.answered_200_per_s

    for (const [name, factor] of [['4x capacity, open loop', 4], ['0.5x capacity, open loop', 0.5]] as const) {
      phases.push(await phase(name, Math.round(c * factor), DURATION_S, service, () => openLoop(base, c * factor, DURATION_S)))
    }

    // Two CPU-bound processes beside it: first what it can serve then, then half of what it could serve
    // without them (the case), then half of what it can serve with them.
    const stress: ChildProcess = spawn('stress-ng', ['--cpu', '2', '--timeout', `${CAPACITY_S + 2 * DURATION_S + 30}s`], { stdio: 'ignore' })
    try {
      await new Promise((r) => setTimeout(r, 2000))
      const stressed = await phase('capacity beside stress-ng --cpu 2: 64 clients, closed loop', null, CAPACITY_S, service, () => closedLoop(base, 64, CAPACITY_S))
      phases.push(stressed)
      phases.push(await phase('0.5x capacity, open loop, stress-ng --cpu 2 beside it', Math.round(c * 0.5), DURATION_S, service,
        () => openLoop(base, c * 0.5, DURATION_S)))
      const s = stressed.answered_200_per_s
      phases.push(await phase('0.5x capacity beside stress-ng, open loop, stress-ng --cpu 2 beside it', Math.round(s * 0.5), DURATION_S, service,
        () => openLoop(base, s * 0.5, DURATION_S)))
    } finally {
      stress.kill('SIGTERM')
    }
  } finally {
    await service.stop()
    agent.destroy()
  }
  const result = {
    generated_by: 'bench/overload.ts',
    started_at: new Date().toISOString(),
    workload: 'GET /retrieve?mode=hybrid with a unique question each, caches off, embedded default, demo world, default overload limits',
    node: process.version,
    load_average_1_5_15: { start: load.start, end: loadavg().map((x) => Math.round(x * 100) / 100) },
    note: 'The machine has 2 cores; the load generator runs on them beside the service. Other engineers used the machine during the run (see the load averages).',
    phases
  }
  mkdirSync(dirname(values.out), { recursive: true })
  writeFileSync(values.out, `${JSON.stringify(result, null, 2)}\n`)
  console.log(`wrote ${values.out}`)
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})

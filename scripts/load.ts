// Load test with autocannon (`make load`): each retrieval mode for a fixed time at a fixed number of
// connections. Without --unique the queries rotate and, after a first pass that fills the response
// cache, every request is a cache hit; each mode's run is then followed, side by side, by a bare
// Fastify route serving the very bytes the cached path answered, in the same rotation. A last run
// serves an ASCII body of the same mean size.
//
//   tsx scripts/load.ts [--url http://127.0.0.1:3000] [--duration 10] [--connections 10]
//                       [--modes hybrid,graphrag,episodic] [--queries FILE.jsonl] [--unique]
//                       [--pin true|false] [--out bench/results/load.json]
//
// Without --url the script starts the service itself on the embedded default with the demo world
// (fresh DATA_DIR, RATE_LIMIT_MAX=0, default LOG_LEVEL, logs to a file) and stops it afterwards.
// --unique appends a request counter to every query, so the response cache never answers.
// --pin (default: on when there are two cores and `taskset`) gives the cached and bare runs one
// core for the client and one for the server, so neither steals the other's CPU mid-run.
// RECALL_API_KEY is sent as a Bearer key when set.
import { fork } from 'node:child_process'
import { once } from 'node:events'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { canPin, cpuMs, pin, startService, unpin, type Service } from './load/processes.js'
import { DEFAULT_QUERIES } from './load/queries.js'

interface Histogram {
  average: number
  p50: number
  p90: number
  p99: number
  max: number
  total: number
}

interface AutocannonResult {
  latency: Histogram
  requests: Histogram
  throughput: Histogram
  errors: number
  timeouts: number
  non2xx: number
  '2xx': number
}

interface AutocannonRequest {
  method: 'GET'
  path: string
  setupRequest?: (request: { path: string }) => { path: string }
}

type Autocannon = (options: {
  url: string
  connections: number
  duration: number
  headers?: Record<string, string>
  requests?: AutocannonRequest[]
}) => Promise<AutocannonResult>

// autocannon ships no type declarations; the shape used here is declared above.
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon

interface Run {
  name: string
  mode: string | null
  path: string
  requests_per_s: number
  latency_ms: { p50: number; p90: number; p99: number; mean: number; max: number }
  total_requests: number
  responses_2xx: number
  non_2xx: number
  errors: number
  timeouts: number
  bytes_per_s: number
  /** User plus system CPU of the serving process per request, when it is a process this script started. */
  server_cpu_us_per_request: number | null
}

function readQueries(file: string | undefined): string[] {
  if (file === undefined) return DEFAULT_QUERIES
  const queries = readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => (JSON.parse(line) as { query: string }).query)
  if (queries.length === 0) throw new Error(`${file} holds no {"query": …} lines`)
  return queries
}

function retrievePath(mode: string, query: string): string {
  return `/retrieve?${new URLSearchParams({ mode, q: query, top_k: '10' }).toString()}`
}

const round = (n: number, digits = 0): number => Math.round(n * 10 ** digits) / 10 ** digits

/** Runs autocannon after two discarded seconds of warm-up (JIT, connections), timing the server's CPU. */
async function measure(
  name: string, mode: string | null, url: string, requests: AutocannonRequest[],
  options: { duration: number; connections: number; headers: Record<string, string>; serverPid?: number }
): Promise<Run> {
  await autocannon({ url, connections: Math.min(4, options.connections), duration: 2, headers: options.headers, requests })
  const cpuBefore = cpuMs(options.serverPid)
  const result = await autocannon({ url, connections: options.connections, duration: options.duration, headers: options.headers, requests })
  const cpuAfter = cpuMs(options.serverPid)
  const cpu = cpuBefore === undefined || cpuAfter === undefined || result.requests.total === 0
    ? null
    : round(((cpuAfter - cpuBefore) * 1000) / result.requests.total, 1)
  return {
    name,
    mode,
    path: requests[0]?.path.split('?')[0] ?? '',
    requests_per_s: result.requests.average,
    latency_ms: { p50: result.latency.p50, p90: result.latency.p90, p99: result.latency.p99, mean: result.latency.average, max: result.latency.max },
    total_requests: result.requests.total,
    responses_2xx: result['2xx'],
    non_2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    bytes_per_s: result.throughput.average,
    server_cpu_us_per_request: cpu
  }
}

/** Fetches every query once to fill the cache, then again; returns the bodies of the second round. */
async function cachedBodies(baseUrl: string, mode: string, queries: string[], headers: Record<string, string>): Promise<Buffer[]> {
  const bodies: Buffer[] = []
  for (const pass of [1, 2]) {
    bodies.length = 0
    for (const query of queries) {
      const response = await fetch(baseUrl + retrievePath(mode, query), { headers })
      const body = Buffer.from(await response.arrayBuffer())
      if (!response.ok) throw new Error(`${mode}: GET /retrieve answered ${response.status}: ${body.toString().slice(0, 300)}`)
      if (pass === 2 && response.headers.get('x-cache') !== 'hit') {
        throw new Error(`${mode}: "${query}" is not answered from the cache on the second request (is RESPONSE_CACHE_TTL_SECONDS 0?)`)
      }
      bodies.push(body)
    }
  }
  return bodies
}

interface Bare {
  url: string
  pid: number
  stop(): void
}

/** Starts the bare route in its own process (as the service is), serving `bodies` and an ASCII body. */
async function startBare(bodies: Buffer[], asciiBytes: number): Promise<Bare> {
  const child = fork(fileURLToPath(new URL('./load/bare-server.ts', import.meta.url)), [], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc']
  })
  child.send({ bodies: bodies.map((b) => b.toString('base64')), asciiBytes })
  const [message] = (await once(child, 'message')) as [{ ready: string }]
  return { url: message.ready, pid: child.pid as number, stop: () => child.kill('SIGTERM') }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      url: { type: 'string' },
      duration: { type: 'string', default: '10' },
      connections: { type: 'string', default: '10' },
      modes: { type: 'string', default: 'hybrid,graphrag,episodic' },
      queries: { type: 'string' },
      unique: { type: 'boolean', default: false },
      pin: { type: 'string' },
      out: { type: 'string', default: 'bench/results/load.json' }
    }
  })
  const duration = Number(values.duration)
  const connections = Number(values.connections)
  const modes = values.modes.split(',').map((m) => m.trim()).filter((m) => m !== '')
  const queries = readQueries(values.queries)
  const headers: Record<string, string> = {}
  if (process.env.RECALL_API_KEY) headers.authorization = `Bearer ${process.env.RECALL_API_KEY}`

  let service: Service | undefined
  if (values.url === undefined) {
    console.error('load: starting the service on the embedded default with the demo world…')
    service = await startService()
  }
  const baseUrl = (values.url ?? service?.url ?? '').replace(/\/$/, '')
  const pinning = !values.unique && service !== undefined && (values.pin === undefined ? canPin() : values.pin === 'true')
  const options = { duration, connections, headers, ...(service ? { serverPid: service.pid } : {}) }

  const runs: Run[] = []
  const comparisons: Record<string, unknown>[] = []
  const served: Buffer[] = []
  let bare: Bare | undefined
  try {
    for (const mode of modes) {
      if (values.unique) {
        let counter = 0
        const requests: AutocannonRequest[] = [{
          method: 'GET',
          path: retrievePath(mode, queries[0] ?? ''),
          setupRequest: (request) => {
            counter += 1
            return { ...request, path: retrievePath(mode, `${queries[counter % queries.length] ?? ''} ${counter}`) }
          }
        }]
        console.error(`load: ${mode}, uncached, ${duration} s at ${connections} connections…`)
        runs.push(await measure(`retrieve-${mode}-uncached`, mode, baseUrl, requests, options))
        continue
      }
      const bodies = await cachedBodies(baseUrl, mode, queries, headers)
      served.push(...bodies)
      // A fixed rotation of prebuilt paths: the client does the same work per request on both sides.
      const requests = queries.map((query): AutocannonRequest => ({ method: 'GET', path: retrievePath(mode, query) }))
      bare?.stop()
      bare = await startBare(bodies, 0)
      if (pinning) {
        pin(process.pid, 0)
        pin(service!.pid, 1)
        pin(bare.pid, 1)
      }
      console.error(`load: ${mode}, from the cache, ${duration} s at ${connections} connections…`)
      const cached = await measure(`retrieve-${mode}-cached`, mode, baseUrl, requests, options)
      console.error(`load: bare Fastify route serving the same ${bodies.length} bodies…`)
      const bareRequests = bodies.map((_, i): AutocannonRequest => ({ method: 'GET', path: `/bare/${i}` }))
      const sameBytes = await measure(`bare-fastify-same-bytes-${mode}`, null, bare.url, bareRequests, { ...options, serverPid: bare.pid })
      runs.push(cached, sameBytes)
      comparisons.push({
        mode,
        mean_body_bytes: round(bodies.reduce((sum, b) => sum + b.length, 0) / bodies.length),
        cached_requests_per_s: cached.requests_per_s,
        bare_same_bytes_requests_per_s: sameBytes.requests_per_s,
        ratio: round(cached.requests_per_s / sameBytes.requests_per_s, 3)
      })
    }

    if (served.length > 0) {
      const asciiBytes = round(served.reduce((sum, b) => sum + b.length, 0) / served.length)
      bare?.stop()
      bare = await startBare([], asciiBytes)
      if (pinning) pin(bare.pid, 1)
      console.error(`load: bare Fastify route serving ${asciiBytes} bytes of ASCII…`)
      const ascii = await measure(`bare-fastify-ascii-${asciiBytes}B`, null, bare.url, [{ method: 'GET', path: '/ascii' }], { ...options, serverPid: bare.pid })
      runs.push(ascii)
      for (const c of comparisons) {
        c.bare_ascii_requests_per_s = ascii.requests_per_s
        c.ratio_to_ascii = round((c.cached_requests_per_s as number) / ascii.requests_per_s, 3)
      }
    }
  } finally {
    bare?.stop()
    if (pinning) unpin(process.pid)
    await service?.stop()
  }

  const report = {
    generated_by: 'scripts/load.ts',
    started_at: new Date().toISOString(),
    base_url: values.url ?? 'service started by the script (embedded default, demo world, RATE_LIMIT_MAX=0)',
    duration_s: duration,
    connections,
    unique_queries: values.unique,
    queries: queries.length,
    pinned: pinning ? 'client on CPU 0; service and bare route on CPU 1' : false,
    node: process.version,
    runs,
    ...(comparisons.length > 0 ? { cached_vs_bare: comparisons } : {})
  }
  mkdirSync(dirname(values.out), { recursive: true })
  writeFileSync(values.out, `${JSON.stringify(report, null, 2)}\n`)
  for (const run of runs) {
    const cpu = run.server_cpu_us_per_request === null ? '' : `  server ${run.server_cpu_us_per_request} µs CPU/req`
    console.log(`${run.name.padEnd(34)} ${run.requests_per_s.toFixed(0).padStart(7)} req/s  p50 ${run.latency_ms.p50} ms  p99 ${run.latency_ms.p99} ms  non-2xx ${run.non_2xx}  errors ${run.errors}${cpu}`)
  }
  for (const c of comparisons) {
    console.log(`${String(c.mode).padEnd(9)} cached / bare same bytes ${c.ratio}${c.ratio_to_ascii === undefined ? '' : `, cached / bare ASCII ${c.ratio_to_ascii}`}`)
  }
  console.log(`written: ${values.out}`)
}

main().catch((error: unknown) => {
  console.error('load:', error instanceof Error ? error.message : error)
  process.exit(1)
})

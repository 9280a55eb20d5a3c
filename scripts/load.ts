// Load test with autocannon (`make load`): each retrieval mode for a fixed time at a fixed number of
// connections, then a bare Fastify route returning a payload of the same size, side by side.
//
//   tsx scripts/load.ts [--url http://127.0.0.1:3000] [--duration 10] [--connections 10]
//                       [--modes hybrid,graphrag,episodic] [--queries FILE.jsonl] [--unique]
//                       [--payload-bytes N] [--out bench/results/load.json]
//
// --unique appends a request counter to every query, so the response cache never answers;
// without it the queries rotate and, after the first round, mostly measure cache hits.
// RECALL_URL and RECALL_API_KEY are read when --url is not given / reads need a key.
import { fork } from 'node:child_process'
import { once } from 'node:events'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import Fastify from 'fastify'

interface Histogram {
  average: number
  mean: number
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
  duration: number
}

interface AutocannonRequest {
  method: 'GET'
  path: string
  setupRequest?: (request: { path: string }, context: Record<string, unknown>) => { path: string }
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

const DEFAULT_QUERIES = [
  '咳嗽三周以上要做什么检查',
  'API 流式返回改造的变更边界',
  '报销差旅费需要哪些材料',
  '新员工入职第一周安排',
  '线上故障复盘流程',
  '季度预算如何审批',
  '鉴权中间件能不能改',
  '会议纪要里提到的发布时间'
]

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
}

function summarise(name: string, mode: string | null, path: string, result: AutocannonResult): Run {
  return {
    name,
    mode,
    path,
    requests_per_s: result.requests.average,
    latency_ms: {
      p50: result.latency.p50,
      p90: result.latency.p90,
      p99: result.latency.p99,
      mean: result.latency.average,
      max: result.latency.max
    },
    total_requests: result.requests.total,
    responses_2xx: result['2xx'],
    non_2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    bytes_per_s: result.throughput.average
  }
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

/** Two seconds of load, discarded, so JIT compilation and connection setup do not count. */
async function warmUp(url: string, path: string, headers: Record<string, string>): Promise<void> {
  await autocannon({ url, connections: 2, duration: 2, headers, requests: [{ method: 'GET', path }] })
}

/** The child process behind `--serve-bare N`: Fastify answering GET /bare with N bytes of JSON. */
async function serveBare(payloadBytes: number): Promise<void> {
  const app = Fastify({ logger: false })
  const payload = JSON.stringify({ data: 'x'.repeat(Math.max(0, payloadBytes - 11)) })
  app.get('/bare', async (_request, reply) => reply.type('application/json').send(payload))
  const url = await app.listen({ port: 0, host: '127.0.0.1' })
  process.send?.(url)
  process.once('SIGTERM', () => void app.close().then(() => process.exit(0)))
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
      'payload-bytes': { type: 'string' },
      out: { type: 'string', default: 'bench/results/load.json' },
      'serve-bare': { type: 'string' }
    }
  })
  if (values['serve-bare'] !== undefined) return serveBare(Number(values['serve-bare']))
  const baseUrl = (values.url ?? process.env.RECALL_URL ?? 'http://127.0.0.1:3000').replace(/\/$/, '')
  const duration = Number(values.duration)
  const connections = Number(values.connections)
  const modes = values.modes.split(',').map((m) => m.trim()).filter((m) => m !== '')
  const queries = readQueries(values.queries)
  const headers: Record<string, string> = {}
  if (process.env.RECALL_API_KEY) headers.authorization = `Bearer ${process.env.RECALL_API_KEY}`

  const runs: Run[] = []
  const bodyBytes: number[] = []
  for (const mode of modes) {
    // One request first: fail fast on a wrong URL or mode, and learn the response size.
    const probe = await fetch(baseUrl + retrievePath(mode, queries[0] ?? ''), { headers })
    const probeBody = await probe.arrayBuffer()
    if (!probe.ok) throw new Error(`${mode}: GET /retrieve answered ${probe.status}: ${Buffer.from(probeBody).toString().slice(0, 300)}`)
    bodyBytes.push(probeBody.byteLength)

    let counter = 0
    const requests: AutocannonRequest[] = [{
      method: 'GET',
      path: retrievePath(mode, queries[0] ?? ''),
      setupRequest: (request) => {
        const query = queries[counter % queries.length] ?? ''
        counter += 1
        return { ...request, path: retrievePath(mode, values.unique ? `${query} ${counter}` : query) }
      }
    }]
    console.error(`load: ${mode} for ${duration} s at ${connections} connections…`)
    await warmUp(baseUrl, retrievePath(mode, queries[0] ?? ''), headers)
    const result = await autocannon({ url: baseUrl, connections, duration, headers, requests })
    runs.push(summarise(`retrieve-${mode}`, mode, '/retrieve', result))
  }

  // The same work minus retrieval: Fastify serving a constant payload of the size the modes answered.
  const payloadBytes = values['payload-bytes'] !== undefined
    ? Number(values['payload-bytes'])
    : Math.round(bodyBytes.reduce((sum, n) => sum + n, 0) / Math.max(1, bodyBytes.length)) || 4096
  // In a child process, as the service is: sharing this process would make it compete with autocannon.
  const bare = fork(fileURLToPath(import.meta.url), ['--serve-bare', String(payloadBytes)], { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] })
  try {
    const [bareUrl] = (await once(bare, 'message')) as [string]
    console.error(`load: bare Fastify route with a ${payloadBytes}-byte payload…`)
    await warmUp(bareUrl, '/bare', {})
    const result = await autocannon({ url: bareUrl, connections, duration, requests: [{ method: 'GET', path: '/bare' }] })
    runs.push(summarise(`bare-fastify-${payloadBytes}B`, null, '/bare', result))
  } finally {
    bare.kill('SIGTERM')
  }

  const report = {
    generated_by: 'scripts/load.ts',
    started_at: new Date().toISOString(),
    base_url: baseUrl,
    duration_s: duration,
    connections,
    unique_queries: values.unique,
    payload_bytes: payloadBytes,
    node: process.version,
    runs
  }
  mkdirSync(dirname(values.out), { recursive: true })
  writeFileSync(values.out, `${JSON.stringify(report, null, 2)}\n`)
  for (const run of runs) {
    console.log(
      `${run.name.padEnd(24)} ${run.requests_per_s.toFixed(0).padStart(7)} req/s  p50 ${run.latency_ms.p50} ms  p99 ${run.latency_ms.p99} ms  non-2xx ${run.non_2xx}  errors ${run.errors}`
    )
  }
  console.log(`written: ${values.out}`)
}

main().catch((error: unknown) => {
  console.error('load:', error instanceof Error ? error.message : error)
  process.exit(1)
})

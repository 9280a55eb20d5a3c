// Concurrency benchmark (`make bench-concurrency`): how close do concurrent requests come to the machine's CPU bound?
//
//   tsx bench/concurrency.ts [--base ../wt-pool-base] [--base-rev 0c64329] [--base-node PATH] [--seconds 8] [--repeats 1] [--clients 1,4,16,64]
//                            [--paths hybrid,vector,lexical] [--variants sessions=1+threads=2+spin=false,pool=processes+sessions=3,here=true] [--no-compare]
//                            [--out bench/results/concurrency.json]
//
// Starts two servers from source on the embedded default, response and embedding caches off, the overload guard's
// queue and wait limits off (a 503 would count as a cheap answer): this checkout, and the previous main from a git
// worktree at `--base` (made at `--base-rev` with node_modules and models linked when it is missing). Both ingest
// the CMRC 2018 trial paragraphs (../shared/data, or CMRC_PATH; the bench stops without them), then for each path
// (hybrid: both legs, vector: `legs=vector`, lexical: `legs=lexical`) and each client count, each build in turn
// (order alternated cell by cell) serves a closed loop of the CMRC questions for `--seconds`. Per cell: answers/s,
// p50/p99, and the CPU time per answer of the server with every process under it (/proc/<pid>/stat: the embedding
// pool's session processes count) and of this load client (process.cpuUsage; it shares the cores). The bound of a
// build and path is cores ÷ (server + client CPU per answer at 1 client); the ratio is answers/s ÷ bound.
// With compare on (default), the top-10 ids and scores of every question (hybrid) are compared between the builds.
// `--python new,reuse` drives every cell a second (third) time with bench/load_client.py, a plain Python client of
// that many threads (a connection per request, or one kept per thread) reading the CPU of the server tree and its own
// from /proc, the two clients' order alternating. CMRC_PATH picks the corpus (e.g. CMRC 2018 dev, 848 paragraphs).
// `--no-base` measures this checkout (and its variants) alone. `--base-node` runs the base's server on another Node (issue 43: the Node 20 build beside this one on Node 24).
// Each server tree's resident and proportional memory (VmRSS and Pss summed over it) is read after the ingest and
// after the load. `--variants` adds this checkout with other EMBEDDING_SESSIONS / EMBEDDING_THREADS / EMBEDDING_SPINNING / EMBEDDING_POOL / EMBEDDING_QUERIES_HERE / EMBEDDING_WEIGHTS settings.
// `--repeats N` runs every cell N times, round after round (each round every path, client count and arm, the arms' order
// alternating from cell to cell and round to round), so the 1-client cell the bound is made from is measured as often as
// the many-client cell, and in the same round: each ratio is made per round and reported as median and min–max over the
// rounds (bench/lib/repeats.ts), beside CPU per answer at 1 client ÷ at N, the load-robust form of the same ratio.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { Agent, request } from 'node:http'
import { availableParallelism, loadavg, tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { freePort } from '../scripts/lib/free-port.js'
import { loadCmrc } from './lib/cmrc.js'
import { spreadByPooledLength, summariseArms } from './lib/repeats.js'
import { CMRC_TRIAL } from './lib/reference-data.js'

const { values } = parseArgs({
  options: {
    base: { type: 'string', default: '../wt-pool-base' },
    'base-rev': { type: 'string', default: '0c64329' },
    'base-node': { type: 'string' },
    seconds: { type: 'string', default: '8' },
    repeats: { type: 'string', default: '1' },
    clients: { type: 'string', default: '1,4,16,64' },
    paths: { type: 'string', default: 'hybrid,vector,lexical' },
    variants: { type: 'string', default: '' },
    'no-compare': { type: 'boolean', default: false },
    python: { type: 'string', default: '' },
    'no-base': { type: 'boolean', default: false },
    out: { type: 'string', default: 'bench/results/concurrency.json' }
  }
})
const SECONDS = Number(values.seconds)
const REPEATS = Number(values.repeats)
if (!Number.isInteger(REPEATS) || REPEATS < 1) throw new Error(`--repeats takes a whole number ≥ 1, got ${values.repeats}`)
const CLIENTS = values.clients.split(',').map(Number)
const PATHS = values.paths.split(',') as Path[]
const CORES = availableParallelism()
type Path = 'hybrid' | 'vector' | 'lexical'
const LEGS: Record<Path, string | undefined> = { hybrid: undefined, vector: 'vector', lexical: 'lexical' }

if (!CMRC_TRIAL.available) {
  console.error(`bench-concurrency needs the CMRC questions: ${CMRC_TRIAL.missing}`)
  process.exit(1)
}

// ---- the builds --------------------------------------------------------------------------------------------------

interface Build {
  name: string
  dir: string
  env: Record<string, string>
  /** The Node binary that runs its server (default: the one running this bench). */
  node?: string
}

function ensureBase(dir: string, rev: string): void {
  if (existsSync(join(dir, 'src/http/server.ts'))) return
  console.log(`making the previous main at ${dir} (git worktree, ${rev})`)
  execFileSync('git', ['worktree', 'add', '--detach', dir, rev], { stdio: 'inherit' })
  for (const link of ['node_modules', 'models']) symlinkSync(resolve(link), join(dir, link))
}

const VARIANT_KEYS: Record<string, string> = { sessions: 'EMBEDDING_SESSIONS', threads: 'EMBEDDING_THREADS', spin: 'EMBEDDING_SPINNING', pool: 'EMBEDDING_POOL', here: 'EMBEDDING_QUERIES_HERE', weights: 'EMBEDDING_WEIGHTS' }
const baseDir = resolve(values.base)
if (!values['no-base']) ensureBase(baseDir, values['base-rev'])
// A base exported with `git archive` (no .git of its own) is named by --base-rev.
const baseCommit = values['no-base'] ? '' : existsSync(join(baseDir, '.git')) ? execFileSync('git', ['-C', baseDir, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim() : values['base-rev']
const thisCommit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim()
const builds: Build[] = [
  ...(values['no-base'] ? [] : [{
    name: `previous main (${baseCommit})${values['base-node'] ? ` on ${execFileSync(values['base-node'], ['--version'], { encoding: 'utf8' }).trim()}` : ''}`,
    dir: baseDir, env: {}, ...(values['base-node'] ? { node: resolve(values['base-node']) } : {})
  }]),
  { name: `this (${thisCommit})`, dir: resolve('.'), env: {} },
  ...values.variants.split(',').filter(Boolean).map((variant) => {
    const env: Record<string, string> = {}
    for (const setting of variant.split('+')) {
      const [key, value] = setting.split('=')
      const name = key === undefined ? undefined : VARIANT_KEYS[key]
      if (name === undefined || value === undefined) throw new Error(`--variants takes sessions=N, threads=N, spin=true|false, pool=threads|processes, here=true|false and weights=shared|copies joined by +, got ${variant}`)
      env[name] = value
    }
    return { name: `this, ${Object.entries(env).map(([k, v]) => `${k}=${v}`).join(' ')}`, dir: resolve('.'), env }
  })
]

// ---- servers and their CPU time ----------------------------------------------------------------------------------

interface Server {
  build: Build
  url: URL
  pid: number
  child: ChildProcess
  dataDir: string
}

/** utime + stime of one process in ms (USER_HZ = 100), or 0 when it is gone. */
function processCpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100
  } catch {
    return 0
  }
}

/** The process and every process under it (the embedding pool's sessions), by walking /proc's parent ids. */
function processTree(root: number): number[] {
  const parents = new Map<number, number[]>()
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const ppid = Number(readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]!.split(' ')[1])
      parents.set(ppid, [...(parents.get(ppid) ?? []), Number(entry)])
    } catch { /* gone */ }
  }
  const tree = [root]
  for (let i = 0; i < tree.length; i++) tree.push(...(parents.get(tree[i]!) ?? []))
  return tree
}

const treeCpuMs = (pids: readonly number[]): number => pids.reduce((sum, pid) => sum + processCpuMs(pid), 0)

/** A field of /proc/<pid>/status or smaps_rollup, in kB, or 0 when the process is gone. */
function procKb(pid: number, file: 'status' | 'smaps_rollup', field: string): number {
  try {
    const line = readFileSync(`/proc/${pid}/${file}`, 'utf8').split('\n').find((l) => l.startsWith(`${field}:`))
    return Number(line?.split(/\s+/)[1] ?? 0)
  } catch {
    return 0
  }
}

/**
 * Memory of a server and every process under it, in MiB: resident (VmRSS, pages shared between the processes counted
 * in each) and proportional (Pss, a shared page split between the processes sharing it: what the tree costs the machine).
 */
function treeMemoryMib(root: number): { processes: number; rss_mib: number; pss_mib: number } {
  const pids = processTree(root)
  const sum = (f: (pid: number) => number): number => round(pids.reduce((total, pid) => total + f(pid), 0) / 1024, 1)
  return { processes: pids.length, rss_mib: sum((pid) => procKb(pid, 'status', 'VmRSS')), pss_mib: sum((pid) => procKb(pid, 'smaps_rollup', 'Pss')) }
}

async function startServer(build: Build): Promise<Server> {
  const dataDir = mkdtempSync(join(tmpdir(), 'recall-concurrency-'))
  const port = await freePort()
  const log = openSync(join(dataDir, 'service.log'), 'a')
  const child = spawn(build.node ?? process.execPath, ['--import', 'tsx', 'src/http/server.ts'], {
    cwd: build.dir,
    env: {
      ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, DEMO_DATA: 'false', LOG_LEVEL: 'warn',
      CACHE_TTL_SECONDS: '0', EMBEDDING_CACHE_TTL_SECONDS: '0', RATE_LIMIT_MAX: '0',
      MAX_EMBEDDING_QUEUE: '0', MAX_EMBEDDING_WAIT_MS: '0', MAX_IN_FLIGHT: '0', MAX_EVENT_LOOP_DELAY_MS: '0',
      ...build.env
    },
    stdio: ['ignore', log, log]
  })
  const url = new URL(`http://127.0.0.1:${port}`)
  const deadline = Date.now() + 300_000
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${build.name} exited with ${child.exitCode}; see ${join(dataDir, 'service.log')}`)
    try {
      if ((await fetch(new URL('/readyz', url))).ok) break
    } catch { /* not listening yet */ }
    if (Date.now() > deadline) throw new Error(`${build.name} was not ready within 300 s`)
    await new Promise((r) => setTimeout(r, 250))
  }
  return { build, url, pid: child.pid!, child, dataDir }
}

async function stopServer(server: Server): Promise<void> {
  if (server.child.exitCode === null && server.child.signalCode === null) {
    const exited = new Promise((r) => server.child.once('exit', r))
    server.child.kill('SIGTERM')
    const timer = setTimeout(() => server.child.kill('SIGKILL'), 15_000)
    await exited
    clearTimeout(timer)
  }
  rmSync(server.dataDir, { recursive: true, force: true })
}

// ---- the load ----------------------------------------------------------------------------------------------------

const agent = new Agent({ keepAlive: true, maxSockets: 1024 })

function get(url: URL, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolvePromise) => {
    const req = request({ agent, host: url.hostname, port: url.port, path, method: 'GET' }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => resolvePromise({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }))
    })
    req.on('error', () => resolvePromise({ status: 0, body: '' }))
    req.end()
  })
}

const retrievePath = (path: Path, q: string): string => {
  const params = new URLSearchParams({ mode: 'hybrid', q, top_k: '10' })
  const legs = LEGS[path]
  if (legs !== undefined) params.set('legs', legs)
  return `/retrieve?${params.toString()}`
}

interface Cell {
  build: string
  /** `node`: this bench's own client (keep-alive agent, in this process); `python-new` / `python-reuse`: bench/load_client.py. */
  client: string
  path: Path
  clients: number
  /** Which round of `--repeats` (0 on). */
  repeat: number
  answers: number
  errors: number
  answers_per_s: number
  p50_ms: number
  p99_ms: number
  server_cpu_ms_per_answer: number
  client_cpu_ms_per_answer: number
  load_average: [number, number, number]
  ratio_to_bound?: number
}

const quantile = (sorted: readonly number[], q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN
const round = (x: number, digits = 2): number => Number(x.toFixed(digits))

async function runCell(server: Server, path: Path, clients: number, repeat: number, questions: readonly string[]): Promise<Cell> {
  let next = Math.floor(Math.random() * questions.length)
  const loop = async (until: number, latencies: number[] | undefined, counts: { errors: number }): Promise<void> => {
    while (performance.now() < until) {
      const q = questions[next++ % questions.length]!
      const started = performance.now()
      const { status } = await get(server.url, retrievePath(path, q))
      if (status !== 200) counts.errors++
      else latencies?.push(performance.now() - started)
    }
  }
  // Warm-up: a second of the same load, not counted.
  await Promise.all(Array.from({ length: clients }, () => loop(performance.now() + 1000, undefined, { errors: 0 })))
  const pids = processTree(server.pid)
  const latencies: number[] = []
  const counts = { errors: 0 }
  const serverBefore = treeCpuMs(pids)
  const clientBefore = process.cpuUsage()
  const started = performance.now()
  await Promise.all(Array.from({ length: clients }, () => loop(started + SECONDS * 1000, latencies, counts)))
  const elapsed = (performance.now() - started) / 1000
  const client = process.cpuUsage(clientBefore)
  const serverMs = treeCpuMs(pids) - serverBefore
  latencies.sort((a, b) => a - b)
  const answers = latencies.length
  return {
    build: server.build.name, client: 'node', path, clients, repeat, answers, errors: counts.errors,
    answers_per_s: round(answers / elapsed, 1),
    p50_ms: round(quantile(latencies, 0.5)),
    p99_ms: round(quantile(latencies, 0.99)),
    server_cpu_ms_per_answer: round(serverMs / answers),
    client_cpu_ms_per_answer: round((client.user + client.system) / 1000 / answers),
    load_average: loadavg().map((x) => round(x)) as [number, number, number]
  }
}

/** The same cell driven by the plain Python client (bench/load_client.py), which reads both CPU times from /proc itself. */
function runPythonCell(server: Server, path: Path, clients: number, repeat: number, connection: string, questionsFile: string): Cell {
  const args = ['bench/load_client.py', '--url', server.url.href, '--server-pid', String(server.pid), '--questions', questionsFile,
    '--threads', String(clients), '--seconds', String(SECONDS), '--connection', connection, ...(LEGS[path] ? ['--legs', LEGS[path]] : [])]
  const r = JSON.parse(execFileSync('python3', args, { encoding: 'utf8', timeout: (SECONDS + 120) * 1000 })) as Omit<Cell, 'build' | 'client' | 'path' | 'clients' | 'repeat'>
  return { ...r, build: server.build.name, client: `python-${connection}`, path, clients, repeat }
}

// ---- the run -----------------------------------------------------------------------------------------------------

const { documents, queries } = await loadCmrc()
const questions = queries.map((q) => q.query.trim()).filter((q) => q.length > 0)
const PYTHON = values.python.split(',').filter(Boolean)
for (const c of PYTHON) if (c !== 'new' && c !== 'reuse') throw new Error(`--python takes new and/or reuse, got ${c}`)
const questionsFile = join(mkdtempSync(join(tmpdir(), 'recall-questions-')), 'questions.json')
writeFileSync(questionsFile, JSON.stringify(questions))
console.log(`${documents.length} CMRC paragraphs (${CMRC_TRIAL.path}), ${questions.length} questions; ${CORES} cores; load average ${loadavg().map((x) => x.toFixed(2)).join(' ')}`)

const servers: Server[] = []
const memory: Record<string, { after_ingest: ReturnType<typeof treeMemoryMib>; after_load?: ReturnType<typeof treeMemoryMib> }> = {}
try {
  for (const build of builds) {
    const server = await startServer(build)
    servers.push(server)
    for (let i = 0; i < documents.length; i += 32) {
      const body = { namespace: 'default', documents: documents.slice(i, i + 32).map((d) => ({ id: d.id, text: d.text })) }
      const r = await fetch(new URL('/ingest/documents', server.url), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
      if (!r.ok) throw new Error(`${build.name}: ingest answered ${r.status}: ${await r.text()}`)
    }
    memory[build.name] = { after_ingest: treeMemoryMib(server.pid) }
    console.log(`${build.name}: pid ${server.pid}, ${processTree(server.pid).length - 1} processes under it, ${documents.length} paragraphs ingested, ${JSON.stringify(memory[build.name])}`)
  }

  const answersDiffer: Record<string, unknown> = {}
  if (!values['no-compare']) {
    // Every answer unchanged: top-10 ids and scores of every question against the previous main's.
    const [base, ...others] = servers
    for (const other of others) {
      let ids = 0
      let scores = 0
      let maxScoreDiff = 0
      for (const q of questions) {
        const [a, b] = await Promise.all([base!, other].map(async (s) => {
          let r = await get(s.url, retrievePath('hybrid', q))
          // A kept-alive socket the server closed while the other build ingested fails once (status 0): ask again.
          if (r.status === 0) r = await get(s.url, retrievePath('hybrid', q))
          if (r.status !== 200) throw new Error(`${s.build.name} answered ${r.status} to ${q}: ${r.body.slice(0, 300)}`)
          return (JSON.parse(r.body) as { recall_bundle: Array<{ id: string; score: number }> }).recall_bundle
        }))
        if (a!.map((i) => i.id).join() !== b!.map((i) => i.id).join()) ids++
        const diff = Math.max(0, ...a!.map((item, k) => Math.abs(item.score - (b![k]?.score ?? Number.POSITIVE_INFINITY))))
        if (diff > 0) scores++
        maxScoreDiff = Math.max(maxScoreDiff, diff)
      }
      answersDiffer[other.build.name] = { questions: questions.length, top10_ids_differ: ids, scores_differ: scores, max_score_difference: maxScoreDiff }
      console.log(`answers of ${other.build.name} vs ${base!.build.name}: ${ids} of ${questions.length} top-10 id lists differ, ${scores} score lists differ (max ${maxScoreDiff})`)
    }
  }

  const cells: Cell[] = []
  let flip = false
  for (let repeat = 0; repeat < REPEATS; repeat++) {
    // With an even number of cells a round, every round would start as the last did: flip once more between rounds.
    if (repeat > 0 && (PATHS.length * CLIENTS.length) % 2 === 0) flip = !flip
    for (const path of PATHS) {
      for (const clients of CLIENTS) {
        const order = flip ? [...servers].reverse() : servers
        flip = !flip
        for (const server of order) {
          // With --python, this bench's client and the Python client take turns on the same server, their order alternating too.
          const tools = [async () => runCell(server, path, clients, repeat, questions), ...PYTHON.map((c) => async () => runPythonCell(server, path, clients, repeat, c, questionsFile))]
          for (const tool of flip ? [...tools].reverse() : tools) {
            const cell = await tool()
            cells.push(cell)
            console.log(`${REPEATS > 1 ? `round ${repeat + 1} ` : ''}${path.padEnd(7)} ${String(clients).padStart(2)} clients  ${cell.build.padEnd(32)} ${cell.client.padEnd(12)} ${String(cell.answers_per_s).padStart(7)}/s  p50 ${cell.p50_ms} ms  p99 ${cell.p99_ms} ms  CPU/answer ${cell.server_cpu_ms_per_answer} + ${cell.client_cpu_ms_per_answer} ms${cell.errors ? `  ${cell.errors} errors` : ''}  (load ${cell.load_average.join(' ')})`)
          }
        }
      }
    }
  }

  for (const server of servers) memory[server.build.name]!.after_load = treeMemoryMib(server.pid)
  console.log(`memory (MiB, the server and every process under it): ${JSON.stringify(memory)}`)

  // The bound of a build and path: cores ÷ (server + client CPU per answer at 1 client), of the same round.
  for (const cell of cells) {
    const one = cells.find((c) => c.build === cell.build && c.client === cell.client && c.path === cell.path && c.clients === 1 && c.repeat === cell.repeat)
    if (one === undefined) continue
    const bound = CORES / ((one.server_cpu_ms_per_answer + one.client_cpu_ms_per_answer) / 1000)
    cell.ratio_to_bound = round(cell.answers_per_s / bound)
  }
  const arms = summariseArms(cells, CORES)
  const range = (s: { median: number; min: number; max: number } | undefined): string => (s === undefined ? '–' : `${s.median.toFixed(2)} [${s.min.toFixed(2)}–${s.max.toFixed(2)}]`)
  console.log(`\nmedian [min–max] over ${REPEATS} round(s): answers/s, CPU ms an answer (server + client), ÷ bound, CPU alone ÷ CPU here`)
  for (const arm of arms) {
    console.log(`${arm.path.padEnd(7)} ${String(arm.clients).padStart(2)} ${arm.client.padEnd(12)} ${arm.build.padEnd(32)} ${range(arm.answers_per_s)}/s  ${range(arm.cpu_ms_per_answer)} ms  ${range(arm.ratio_to_bound)}  ${range(arm.cpu_alone_over_here)}`)
  }

  const out = {
    bench: 'concurrency',
    date: new Date().toISOString(),
    machine: { cores: CORES, note: 'shared with other sessions: see each cell\'s load_average; a quiet rerun is needed for the figures to hold' },
    corpus: `CMRC 2018 (${CMRC_TRIAL.path}): ${documents.length} paragraphs, ${questions.length} questions (closed loop, cycling from a random start)`,
    settings: { seconds_per_cell: SECONDS, repeats: REPEATS, warm_up_seconds: 1, caches: 'off (CACHE_TTL_SECONDS=0, EMBEDDING_CACHE_TTL_SECONDS=0)', overload_limits: 'off (queue, wait, in-flight, event loop)', top_k: 10 },
    builds: builds.map((b) => ({ name: b.name, dir: b.dir, env: b.env })),
    bound_definition: 'cores ÷ (server CPU per answer, every process under it, + load client CPU per answer) at 1 client, per build, client, path and round',
    answers_compared_with_previous_main: answersDiffer,
    memory,
    arms,
    ...(REPEATS >= 2 ? { cpu_spread_by_pooled_seconds: spreadByPooledLength(cells, SECONDS) } : {}),
    cells
  }
  mkdirSync(dirname(values.out), { recursive: true })
  writeFileSync(values.out, JSON.stringify(out, null, 2) + '\n')
  console.log(`wrote ${values.out}`)
} finally {
  await Promise.all(servers.map(stopServer))
  agent.destroy()
}

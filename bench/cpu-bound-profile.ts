// Where the server's CPU per answer goes at 1 client and at 16 (issue 43 item 4): one server per client count, started
// with `node --cpu-prof` on a data folder another run of it ingested (so the profile holds start-up and load, not the
// ingest), driven by bench/load_client.py (the team's plain client); per thread of the server (/proc/<pid>/task, by
// thread name) and per profiled thread (main and each embedding worker: self time by package or folder, GC, native),
// the CPU milliseconds per answer inside the load window.
//
//   CMRC_PATH=cmrc2018_dev.json npx tsx bench/cpu-bound-profile.ts [--clients 1,16] [--seconds 8] [--legs ''|vector]
//                                                                  [--connection reuse|new] [--out bench/results/cpu-bound-profile.json]
import { execFileSync, spawn } from 'node:child_process'
import { mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { freePort } from '../scripts/lib/free-port.js'
import { loadCmrc } from './lib/cmrc.js'
import { CMRC_TRIAL } from './lib/reference-data.js'

const { values } = parseArgs({
  options: {
    clients: { type: 'string', default: '1,16' }, seconds: { type: 'string', default: '8' }, legs: { type: 'string', default: '' },
    connection: { type: 'string', default: 'reuse' }, out: { type: 'string', default: 'bench/results/cpu-bound-profile.json' }
  }
})
if (!CMRC_TRIAL.available) throw new Error(CMRC_TRIAL.missing)

const ENV = {
  HOST: '127.0.0.1', DEMO_DATA: 'false', LOG_LEVEL: 'warn', CACHE_TTL_SECONDS: '0', EMBEDDING_CACHE_TTL_SECONDS: '0', RATE_LIMIT_MAX: '0',
  MAX_EMBEDDING_QUEUE: '0', MAX_EMBEDDING_WAIT_MS: '0', MAX_IN_FLIGHT: '0', MAX_EVENT_LOOP_DELAY_MS: '0'
}

async function startServer(dataDir: string, nodeArgs: string[]): Promise<{ url: URL; pid: number; stop: () => Promise<void> }> {
  const port = await freePort()
  const log = openSync(join(dataDir, 'service.log'), 'a')
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', 'src/http/server.ts'], { env: { ...process.env, ...ENV, PORT: String(port), DATA_DIR: dataDir }, stdio: ['ignore', log, log] })
  const url = new URL(`http://127.0.0.1:${port}`)
  for (const deadline = Date.now() + 300_000; ;) {
    if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode}; see ${dataDir}/service.log`)
    if (await fetch(new URL('/readyz', url)).then((r) => r.ok, () => false)) break
    if (Date.now() > deadline) throw new Error('the server was not ready within 300 s')
    await new Promise((r) => setTimeout(r, 250))
  }
  const stop = async (): Promise<void> => {
    const exited = new Promise((r) => child.once('exit', r))
    child.kill('SIGTERM')
    await exited
  }
  return { url, pid: child.pid!, stop }
}

/** CPU ms of every thread of a process, summed by thread name (/proc/<pid>/task/<tid>/stat, USER_HZ 100). */
function threadCpuMs(pid: number): Map<string, number> {
  const byName = new Map<string, number>()
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8')
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')).replace(/\d+$/, 'N')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      byName.set(name, (byName.get(name) ?? 0) + (Number(fields[11]) + Number(fields[12])) * 10)
    } catch { /* thread gone */ }
  }
  return byName
}

interface ProfileNode { id: number; callFrame: { functionName: string; url: string }; children?: number[] }
interface CpuProfile { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[]; startTime: number }

/** Where a sample's self time is put: GC, idle, native, a package under node_modules, node's own, or our top folder. */
function category(frame: ProfileNode['callFrame']): string {
  if (frame.url === '') return frame.functionName || '(native)'
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(frame.url)
  if (pkg) return pkg[1]!
  if (frame.url.startsWith('node:')) return 'node:internal'
  const ours = /\/(src\/[^/]+|adapters\/[^/]+|bench|scripts)\//.exec(frame.url)
  return ours ? ours[1]! : frame.url.split('/').slice(-2).join('/')
}

/** Self time per category of the samples inside [fromUs, toUs] (monotonic µs, the clock process.hrtime reads). */
function windowSelfMs(profile: CpuProfile, fromUs: number, toUs: number): Map<string, number> {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]))
  const out = new Map<string, number>()
  let at = profile.startTime
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0
    at += delta
    if (at < fromUs || at > toUs) return
    const key = category(nodes.get(id)!.callFrame)
    out.set(key, (out.get(key) ?? 0) + delta / 1000)
  })
  return out
}

const nowUs = (): number => Number(process.hrtime.bigint() / 1000n)
const round = (x: number): number => Math.round(x * 1000) / 1000
const perAnswer = (m: Map<string, number>, answers: number, min = 0.005): Record<string, number> =>
  Object.fromEntries([...m].map(([k, v]) => [k, round(v / answers)] as const).filter(([, v]) => v >= min).sort((a, b) => b[1] - a[1]))

const { documents, queries } = await loadCmrc()
const work = mkdtempSync(join(tmpdir(), 'recall-cpu-bound-'))
const questionsFile = join(work, 'questions.json')
writeFileSync(questionsFile, JSON.stringify(queries.map((q) => q.query.trim()).filter((q) => q.length > 0)))
const dataDir = join(work, 'data')
execFileSync('mkdir', ['-p', dataDir])
const results: Record<string, unknown>[] = []
try {
  {
    const server = await startServer(dataDir, [])
    for (let i = 0; i < documents.length; i += 32) {
      const body = { namespace: 'default', documents: documents.slice(i, i + 32).map((d) => ({ id: d.id, text: d.text })) }
      const r = await fetch(new URL('/ingest/documents', server.url), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
      if (!r.ok) throw new Error(`ingest answered ${r.status}: ${await r.text()}`)
    }
    await server.stop()
  }
  for (const clients of values.clients.split(',').map(Number)) {
    const profDir = join(work, `prof-${clients}`)
    const server = await startServer(dataDir, ['--cpu-prof', `--cpu-prof-dir=${profDir}`])
    const threadsBefore = threadCpuMs(server.pid)
    const fromUs = nowUs() + 1_000_000 // load_client.py measures after a 1 s warm-up
    const client = JSON.parse(execFileSync('python3', ['bench/load_client.py', '--url', server.url.href, '--server-pid', String(server.pid), '--questions', questionsFile,
      '--threads', String(clients), '--seconds', values.seconds, '--connection', values.connection, ...(values.legs ? ['--legs', values.legs] : [])], { encoding: 'utf8' })) as { answers: number; answers_per_s: number; server_cpu_ms_per_answer: number; client_cpu_ms_per_answer: number }
    const toUs = nowUs()
    const threadsAfter = threadCpuMs(server.pid)
    await server.stop()
    // the thread figures include the warm-up second: answers over it are counted at the measured rate
    const answersAll = client.answers_per_s * (toUs - fromUs + 1_000_000) / 1e6
    const threadDelta = new Map([...threadsAfter].map(([k, v]) => [k, v - (threadsBefore.get(k) ?? 0)]))
    const profiles = readdirSync(profDir).filter((f) => f.endsWith('.cpuprofile')).sort().map((f) => {
      const profile = JSON.parse(readFileSync(join(profDir, f), 'utf8')) as CpuProfile
      const self = windowSelfMs(profile, fromUs, toUs)
      self.delete('(idle)')
      const busy = [...self.values()].reduce((a, b) => a + b, 0)
      return { file: f, busy_ms_per_answer: round(busy / client.answers), self_ms_per_answer: perAnswer(self, client.answers) }
    }).filter((p) => p.busy_ms_per_answer > 0.01)
    const result = { clients, legs: values.legs || 'both', connection: values.connection, client, load_average: loadavg().map(round), threads_ms_per_answer: perAnswer(threadDelta, answersAll), profiles }
    results.push(result)
    console.log(JSON.stringify(result, null, 1))
  }
  writeFileSync(values.out, `${JSON.stringify({ generated_by: 'bench/cpu-bound-profile.ts', date: new Date().toISOString(), corpus: `${CMRC_TRIAL.path}: ${documents.length} paragraphs`, results }, null, 2)}\n`)
  console.log(`wrote ${values.out}`)
} finally {
  rmSync(work, { recursive: true, force: true })
}

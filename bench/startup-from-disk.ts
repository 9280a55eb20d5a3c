/**
 * Start-up from disk as a user sees it (issue 44, item 1): the server (`src/http/server.ts`, no demo world) started
 * on a copy of a kept DATA_DIR (`bench/memory.ts --keep DIR`), timed from spawn to `/readyz` answering 200, each
 * start-up step's own time (from its log line), then the first read of each mode one after another (hybrid,
 * graphrag, episodic: what the stores open on first use is in these), and a second read of each for comparison.
 * With `--base TREE` an earlier checkout is started the same way on a fresh copy of the same folder, the two arms
 * interleaved round by round (base first in odd rounds), so a loaded machine weighs on both alike.
 *
 *   npx tsx bench/startup-from-disk.ts --from DIR [--base TREE] [--rounds 2] [--fold-graph] [--fold-vectors] [--clean-stop-first] [--cpu-prof-dir DIR] [--out FILE]
 *
 * `--fold-graph` first folds the knowledge graph's log into its snapshot with each arm's own code (the files a fold
 * leaves: the arm's snapshot format, an empty log), so that each arm reads its own snapshot form. Without it both read the
 * folder as kept (the derived graph about half in its snapshot, half in records after it). `--fold-vectors` does the
 * same for every vector collection (each arm's own snapshot format: 2 from issue 44's columns, 1 before). The answers of the two arms'
 * first reads are compared without `took_ms`, `cached` and `generation`.
 *
 * Each arm copies `--from` into a folder of its own (the server may write: journals, folds) and removes it after.
 * `--clean-stop-first` starts each arm's server once on its copy and stops it with SIGTERM before the timed start, so
 * that the timed start reads what a clean stop of that arm leaves (from issue 44's catalog checkpoint: the catalog's
 * file); the first start's `/readyz` and its stop (with each part's time, from the server's log) are reported beside it.
 *
 * Each server is started as `scripts/start.sh` starts the service: glibc's `MALLOC_ARENA_MAX=2` and
 * `MALLOC_MMAP_THRESHOLD_=131072` (unless set), and the V8 heap flags the arm's own `src/memory/heap-flag.ts` prints for
 * its memory budget (none from a tree without it).
 *
 * `--cpu-prof-dir` profiles each server process (`node --cpu-prof`, written when it exits after SIGTERM);
 * `bench/cpu-profile-summary.ts` summarises one.
 */
import { spawn, execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises'
import { cpus, loadavg, tmpdir, totalmem } from 'node:os'
import { join, resolve } from 'node:path'
import { createInterface } from 'node:readline'
import { parseArgs } from 'node:util'
import { freePort } from '../scripts/lib/free-port.js'
import { foldGraphWith, foldVectorsWith } from './lib/fold-graph.js'
import { median } from './lib/median.js'

const { values } = parseArgs({
  options: {
    from: { type: 'string' },
    base: { type: 'string' },
    rounds: { type: 'string', default: '1' },
    'cpu-prof-dir': { type: 'string' },
    'fold-graph': { type: 'boolean', default: false },
    'fold-vectors': { type: 'boolean', default: false },
    'clean-stop-first': { type: 'boolean', default: false },
    out: { type: 'string', default: 'bench/results/startup-from-disk.json' },
    // how long one arm may take to be ready and answer, in seconds
    limit: { type: 'string', default: '1800' }
  }
})
if (!values.from) throw new Error('--from DIR: a DATA_DIR kept by bench/memory.ts --keep')
const limitMs = Number(values.limit) * 1000
const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d
const load = () => round(loadavg()[0]!, 1)
const log = (line: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`)

// one question per mode, about the corpus bench/memory.ts writes (CMRC passages)
const READS: Array<{ mode: string; init: (base: string) => [string, RequestInit] }> = [
  { mode: 'hybrid', init: (b) => [`${b}/retrieve?mode=hybrid&top_k=5&q=${encodeURIComponent('范廷颂是什么时候被任为主教的？')}`, {}] },
  { mode: 'graphrag', init: (b) => [`${b}/retrieve?mode=graphrag&top_k=5&q=${encodeURIComponent('范廷颂是什么时候被任为主教的？')}`, {}] },
  {
    mode: 'episodic',
    init: (b) => [`${b}/retrieve`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ mode: 'episodic', query: '范廷颂是什么时候被任为主教的？', top_k: 5 }) }]
  }
]

interface Arm { name: string; dir: string; commit: string }

/** Folds the arm's copy of the knowledge graph's log with the arm's own code (bench/lib/fold-graph.ts). */
async function foldGraph(arm: Arm, dataDir: string): Promise<number> {
  const started = performance.now()
  await foldGraphWith(arm.dir, dataDir, arm.name === 'base' ? Number(process.env['BASE_GRAPH_FORMAT'] ?? 1) : 2)
  return round((performance.now() - started) / 1000)
}

/** A body without what differs between any two runs. */
const stable = (body: unknown): string => JSON.stringify(body, (key, value: unknown) => (['took_ms', 'cached', 'generation'].includes(key) ? undefined : value))

/** User and system CPU seconds a process has used, every thread (Linux: /proc/PID/stat, in clock ticks of 1/100 s). */
function cpuSecondsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
  return round((Number(fields[11]) + Number(fields[12])) / 100, 2)
}

async function waitFor(url: string, started: number): Promise<number> {
  for (;;) {
    try {
      if ((await fetch(url)).ok) return performance.now() - started
    } catch { /* not listening yet */ }
    if (performance.now() - started > limitMs) throw new Error(`${url} did not answer within ${limitMs} ms`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

async function once(arm: Arm, roundNo: number): Promise<Record<string, unknown>> {
  const dataDir = await mkdtemp(join(tmpdir(), `recall-startup-disk-${arm.name}-`))
  const copyStarted = performance.now()
  execFileSync('cp', ['-a', `${resolve(values.from!)}/.`, dataDir])
  log(`${arm.name}: copied the data in ${round((performance.now() - copyStarted) / 1000)} s`)
  const foldSeconds = values['fold-graph'] ? await foldGraph(arm, dataDir) : undefined
  if (foldSeconds !== undefined) log(`${arm.name}: folded the knowledge graph's log in ${foldSeconds} s`)
  if (values['fold-vectors']) {
    const t = performance.now()
    await foldVectorsWith(arm.dir, dataDir)
    log(`${arm.name}: folded the vector collections' logs in ${round((performance.now() - t) / 1000)} s`)
  }
  const env = { ...startShEnv(), PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, DEMO_DATA: 'false', LOG_LEVEL: 'info', DERIVED_GRAPH: 'true', DERIVED_EPISODES: 'true' }
  const heapFlags = heapFlagsOf(arm.dir, env)
  log(`${arm.name}: started as scripts/start.sh starts it: ${[`MALLOC_ARENA_MAX=${env.MALLOC_ARENA_MAX}`, `MALLOC_MMAP_THRESHOLD_=${env.MALLOC_MMAP_THRESHOLD_}`, ...heapFlags].join(' ')}`)
  const serve = (port: number, profDir?: string) => spawn(process.execPath, [...heapFlags, ...(profDir ? ['--cpu-prof', '--cpu-prof-dir', profDir] : []), '--import', 'tsx', 'src/http/server.ts'], {
    cwd: arm.dir,
    env: { ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'inherit']
  })
  let firstStart: { readyz_seconds: number; stop_seconds: number; stop_parts_seconds: Record<string, number> } | undefined
  if (values['clean-stop-first']) {
    // a start and a clean stop first (what a service restarted after SIGTERM finds: whatever its own stop kept)
    const port = await freePort()
    const t = performance.now()
    const first = serve(port)
    // each part of the stop logs its time (services.ts, `close`)
    const stopParts: Record<string, number> = {}
    createInterface({ input: first.stdout! }).on('line', (line) => {
      try {
        const { stop, ms } = JSON.parse(line) as { stop?: string; ms?: number }
        if (stop !== undefined && typeof ms === 'number') stopParts[stop] = round(ms / 1000, 2)
      } catch { /* not a log line */ }
    })
    const exitedFirst = new Promise((r) => first.once('exit', r))
    const readyz = await waitFor(`http://127.0.0.1:${port}/readyz`, t)
    const stopping = performance.now()
    first.kill('SIGTERM')
    await exitedFirst
    firstStart = { readyz_seconds: round(readyz / 1000), stop_seconds: round((performance.now() - stopping) / 1000, 2), stop_parts_seconds: stopParts }
    log(`${arm.name}: first start ready in ${firstStart.readyz_seconds} s, stopped cleanly in ${firstStart.stop_seconds} s`)
  }
  const port = await freePort()
  const profDir = values['cpu-prof-dir'] ? resolve(values['cpu-prof-dir'], `${arm.name}-round${roundNo}`) : undefined
  if (profDir) await mkdir(profDir, { recursive: true })
  const loadAtStart = load()
  const started = performance.now()
  const child = serve(port, profDir)
  const steps: Record<string, number> = {}
  createInterface({ input: child.stdout! }).on('line', (line) => {
    try {
      const { step, ms } = JSON.parse(line) as { step?: string; ms?: number }
      if (step !== undefined && typeof ms === 'number') steps[step] = round(ms / 1000, 2)
    } catch { /* not a log line */ }
  })
  const exited = new Promise((r) => child.once('exit', r))
  try {
    const base = `http://127.0.0.1:${port}`
    const readyz = await waitFor(`${base}/readyz`, started)
    // the server's CPU (every thread) until it was ready: what a loaded machine changes least
    const cpuToReadyz = cpuSecondsOf(child.pid!)
    const report = await (await fetch(`${base}/readyz`)).json() as { startup: { steps: Array<{ name: string; detail: string }> } }
    const reads: Record<string, unknown> = {}
    const answers: Record<string, string> = {}
    for (const pass of ['first', 'second'] as const) {
      for (const { mode, init } of READS) {
        // a read that a store still loading fails (a 503: a leg's deadline passed) is sent again until it answers, as a
        // client that retries would; the refusals are counted
        const t = performance.now()
        const [url, options] = init(base)
        const refused: string[] = []
        let body: { recall_bundle?: unknown[]; message?: string }
        for (;;) {
          const response = await fetch(url, { ...options, signal: AbortSignal.timeout(limitMs) })
          body = await response.json() as typeof body
          if (response.ok) break
          if (response.status !== 503 || performance.now() - started > limitMs) throw new Error(`${arm.name} ${mode}: ${response.status} ${JSON.stringify(body)}`)
          refused.push(body.message ?? String(response.status))
          await new Promise((r) => setTimeout(r, 250))
        }
        const own = performance.now() - t
        if (pass === 'first') answers[mode] = stable(body)
        reads[`${pass}_${mode}`] = {
          seconds: round(own / 1000, 2), since_spawn_seconds: round((performance.now() - started) / 1000), items: body.recall_bundle?.length ?? 0,
          refused_503: refused.length, ...(refused.length > 0 ? { first_refusal: refused[0] } : {})
        }
      }
    }
    const result = {
      arm: arm.name, commit: arm.commit, round: roundNo, load_1m_at_start: loadAtStart, load_1m_at_end: load(),
      ...(foldSeconds === undefined ? {} : { graph_fold_seconds: foldSeconds }),
      vectors_folded: values['fold-vectors'],
      ...(firstStart ? { first_start_then_clean_stop: firstStart } : {}),
      readyz_seconds: round(readyz / 1000), cpu_seconds_to_readyz: cpuToReadyz, steps_seconds: steps,
      step_details: Object.fromEntries(report.startup.steps.map((s) => [s.name, s.detail])),
      reads
    }
    log(JSON.stringify(result))
    return { ...result, answers }
  } finally {
    child.kill('SIGTERM')
    await exited
    await rm(dataDir, { recursive: true, force: true })
  }
}

const commitOf = (dir: string) => execFileSync('git', ['-C', dir, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim()
const arms: Arm[] = [{ name: 'this', dir: resolve('.'), commit: commitOf('.') }]
if (values.base) arms.push({ name: 'base', dir: resolve(values.base), commit: commitOf(values.base) })
const loadAtStart = loadavg().map((x) => round(x))
const runs: Record<string, unknown>[] = []
for (let r = 1; r <= Number(values.rounds); r++) {
  // the base first in odd rounds, this tree first in even ones
  const order = r % 2 === 1 ? [...arms].reverse() : arms
  for (const arm of order) runs.push(await once(arm, r))
}

const ofArm = (name: string, pick: (run: any) => number) => median(runs.filter((run) => run['arm'] === name).map(pick))
const figures = (name: string) => ({
  readyz_seconds: ofArm(name, (r) => r.readyz_seconds),
  cpu_seconds_to_readyz: ofArm(name, (r) => r.cpu_seconds_to_readyz),
  ...Object.fromEntries(READS.map(({ mode }) => [`first_${mode}_seconds`, ofArm(name, (r) => r.reads[`first_${mode}`].seconds)])),
  all_modes_answered_since_spawn_seconds: ofArm(name, (r) => r.reads.first_episodic.since_spawn_seconds),
  first_reads_refused_503: ofArm(name, (r) => READS.reduce((n, { mode }) => n + r.reads[`first_${mode}`].refused_503, 0)),
  ...(values['clean-stop-first']
    ? { first_start_readyz_seconds: ofArm(name, (r) => r.first_start_then_clean_stop.readyz_seconds), clean_stop_seconds: ofArm(name, (r) => r.first_start_then_clean_stop.stop_seconds) }
    : {})
})
const summary: Record<string, unknown> = { this: figures('this') }
// every run's first answers against the first run's, mode by mode
const firstAnswers = runs[0]!['answers'] as Record<string, string>
summary['answers_identical_in_every_run'] = Object.fromEntries(READS.map(({ mode }) => [mode, runs.every((run) => (run['answers'] as Record<string, string>)[mode] === firstAnswers[mode])]))
for (const run of runs) delete run['answers']
if (values.base) {
  const base = figures('base')
  const mine = summary['this'] as Record<string, number>
  summary['base'] = base
  summary['this_over_base'] = Object.fromEntries(Object.entries(base).map(([k, v]) => [k, round(mine[k]! / v, 3)]))
}
const out = {
  generated_by: 'bench/startup-from-disk.ts', at: new Date().toISOString(),
  machine: { cpus: cpus().length, memory_gib: Math.round(totalmem() / 2 ** 30), node: process.version, note: 'shared machine: other helpers worked at the same time; every process at nice 19' },
  from: resolve(values.from), rounds: Number(values.rounds), load_average_at_start: loadAtStart, load_average_at_end: loadavg().map((x) => round(x)),
  method: `server from source (node --import tsx src/http/server.ts, DEMO_DATA=false, the real model) on a fresh copy of the folder; seconds from spawn to /readyz 200, then one read per mode in turn (hybrid, graphrag, episodic; a 503 sent again after 250 ms until it answers, the refusals counted), then again; medians per arm${values['clean-stop-first'] ? '; each timed start after a first start and a clean stop (SIGTERM) of the same arm on the same copy' : ''}`,
  summary, runs
}
await writeFile(values.out, `${JSON.stringify(out, null, 2)}\n`)
log(`wrote ${values.out}`)

/** glibc's two settings as `scripts/start.sh` gives them, unless the environment sets them. */
function startShEnv(): NodeJS.ProcessEnv & { MALLOC_ARENA_MAX: string; MALLOC_MMAP_THRESHOLD_: string } {
  return { ...process.env, MALLOC_ARENA_MAX: process.env['MALLOC_ARENA_MAX'] ?? '2', MALLOC_MMAP_THRESHOLD_: process.env['MALLOC_MMAP_THRESHOLD_'] ?? '131072' }
}

/** The heap flags the tree's `src/memory/heap-flag.ts` prints for this environment's budget (`scripts/start.sh`); none without it. */
function heapFlagsOf(tree: string, env: NodeJS.ProcessEnv): string[] {
  if (!existsSync(join(tree, 'src/memory/heap-flag.ts'))) return []
  const out = execFileSync(process.execPath, ['--import', 'tsx', 'src/memory/heap-flag.ts'], { cwd: tree, env, encoding: 'utf8' })
  return out.split(/\s+/).filter(Boolean)
}

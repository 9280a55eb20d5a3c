/**
 * The Node 20 build against the Node 24 build (issue 43, "nothing slower"): the hybrid, episodic, nrt, ingest-rate and
 * concurrency benches of two trees, each run by its own Node, side by side in one run. hybrid, episodic, nrt and
 * ingest-rate run in a child process per arm in the order base, this, this, base per round (drift on a busy machine
 * falls on both), each bench's own result file read after its run and put back as it was; concurrency starts both
 * servers itself and alternates them cell by cell (`bench/concurrency.ts --base … --base-node …`), once per round.
 * Writes bench/results/node-runtimes.json: every run's figures, the median per arm, and this ÷ base.
 *
 *   npx tsx bench/node-runtimes.ts [--rounds 2] [--benches hybrid,episodic,nrt,ingest-rate,concurrency]
 *                                  [--base .cache/node20-base] [--base-rev HEAD] [--base-node /usr/bin/node]
 *
 * `make bench-node-runtimes` is this with its defaults. The Node 20 build is `--base-rev` (default HEAD: this very
 * code, so only the runtime differs and both arms run the same bench harness) exported into `--base` with its own
 * node_modules installed from the same lockfile by the Node 20 npm (`npm ci --ignore-scripts` on `--base-node`;
 * it warns EBADENGINE there), remade when the commit differs. `--base-rev 57d67ec` (the last main on Node 20) runs
 * that tree's own benches instead, which do not all take the leg deadlines below. This tree runs on the Node
 * running this script (scripts/with-node.sh: the project's Node 24).
 */
import { execFile, execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync as writeFileNow } from 'node:fs'
import { readFile, rm, writeFile } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { delimiter, dirname, join, resolve } from 'node:path'
import { parseArgs, promisify } from 'node:util'
import { SHARED_DIR } from './lib/reference-data.js'
import { median } from './lib/median.js'

const { values } = parseArgs({
  options: {
    base: { type: 'string', default: '.cache/node20-base' }, 'base-rev': { type: 'string', default: 'HEAD' },
    'base-node': { type: 'string', default: '/usr/bin/node' }, rounds: { type: 'string', default: '2' },
    benches: { type: 'string', default: 'hybrid,episodic,nrt,ingest-rate,concurrency' }
  }
})

/**
 * Makes the Node 20 tree when it is missing or of another commit: the base revision's files (`git archive`), its
 * lockfile installed by the base Node's npm, `models/` linked. The commit is stamped in `.base-commit`.
 */
function ensureBase(dir: string, rev: string, node: string): void {
  const commit = execFileSync('git', ['rev-parse', '--short', rev], { encoding: 'utf8' }).trim()
  const stamp = join(dir, '.base-commit')
  if (existsSync(stamp) && readFileSync(stamp, 'utf8').trim() === commit && existsSync(join(dir, 'node_modules/.package-lock.json'))) return
  console.error(`making the Node 20 tree at ${dir} (${commit}, npm ci on ${node})`)
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  execFileSync('sh', ['-c', `git archive ${commit} | tar -x -C "${dir}"`], { stdio: 'inherit' })
  const env = { ...process.env, PATH: `${dirname(node)}${delimiter}${process.env.PATH ?? ''}`, ONNXRUNTIME_NODE_INSTALL_CUDA: 'skip' }
  execFileSync('npm', ['ci', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: dir, env, stdio: 'inherit' })
  symlinkSync(realpathSync('models'), join(dir, 'models'))
  writeFileNow(stamp, `${commit}\n`)
}
ensureBase(resolve(values.base), values['base-rev'], values['base-node'])

interface Arm { name: string; tree: string; node: string }
const arms = { base: { name: 'base', tree: resolve(values.base), node: resolve(values['base-node']) }, self: { name: 'this', tree: process.cwd(), node: process.execPath } }

/** What each bench is run with, the file it writes, and the figures taken from it (lower is better unless named *_per_s). */
interface Bench { args: string[]; file: string; figures: (r: any) => Record<string, number> }
const BENCHES: Record<string, Bench> = {
  hybrid: {
    args: ['--sizes', '1000', '--requests', '150', '--real', '1000'],
    file: 'bench/results/hybrid.json',
    figures: (r) => Object.fromEntries(r.results.flatMap((x: any) => [
      [`p50_ms_${x.chunks}_c1`, x.c1.total_ms.p50], [`p99_ms_${x.chunks}_c1`, x.c1.total_ms.p99],
      [`p50_ms_${x.chunks}_c16`, x.c16.total_ms.p50], [`rss_mib_${x.chunks}`, x.rss_mib_after_ingest]
    ]))
  },
  episodic: {
    args: ['--sizes', '1000', '--queries', '150', '--neo4j', 'false'],
    file: 'bench/results/episodic.json',
    figures: (r) => {
      const e = r.results.embedded_1000
      return {
        retrieve_p50_ms: e.retrieve_including_embedding.p50_ms, retrieve_p99_ms: e.retrieve_including_embedding.p99_ms,
        search_p50_ms: e.search_after_embedding.p50_ms, ingest_episodes_per_s: e.ingest.episodes_per_s
      }
    }
  },
  nrt: {
    args: ['--sizes', '10000', '--big', '0', '--seconds', '6', '--env', 'DERIVED_GRAPH=false,DERIVED_EPISODES=false'],
    file: 'bench/results/nrt.json',
    figures: (r) => {
      const x = r.results[0]
      return {
        bulk_load_chunks_per_s: x.bulk_load_chunks_per_s, ingest_call_ms_median_real_model: x.one_document_summary.ingest_call_ms_median_real_model,
        delete_call_ms_median: x.one_document_summary.delete_call_ms_median, idle_p50_ms: x.hybrid_idle.p50_ms, idle_p99_ms: x.hybrid_idle.p99_ms,
        during_writes_p50_ms: x.hybrid_during_writes_real_model.p50_ms, rss_mib: x.memory_mib.rss, start_up_s: x.start_up_from_saved_files.seconds
      }
    }
  },
  'ingest-rate': {
    args: ['--chunks', '600'],
    file: 'bench/results/ingest-rate.json',
    figures: (r) => ({ chunks_per_s: r.chunks_per_second })
  }
}

/** The benches measure latency: on a loaded machine a leg past its deadline would end the run, not measure it. */
const LATENCY_NOT_DEADLINES = { EMBEDDING_TIMEOUT_MS: '60000', VECTOR_TIMEOUT_MS: '60000', LEXICAL_TIMEOUT_MS: '60000', GRAPH_TIMEOUT_MS: '60000' }

/** Runs one bench in one arm's tree on its Node; returns its figures and leaves the tree's result file as it was. */
async function runBench(arm: Arm, name: string): Promise<{ figures: Record<string, number>; load: number[]; seconds: number }> {
  const bench = BENCHES[name]!
  const file = join(arm.tree, bench.file)
  const before = await readFile(file, 'utf8').catch(() => null)
  const started = performance.now()
  const load = loadavg().map((l) => Math.round(l * 100) / 100)
  try {
    await promisify(execFile)(arm.node, ['--import', 'tsx', `bench/${name}.ts`, ...bench.args], {
      cwd: arm.tree, timeout: 1_800_000, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, ...LATENCY_NOT_DEADLINES, LOG_LEVEL: 'silent', RECALL_SHARED_DIR: SHARED_DIR }
    })
    return { figures: bench.figures(JSON.parse(await readFile(file, 'utf8'))), load, seconds: Math.round((performance.now() - started) / 100) / 10 }
  } finally {
    if (before !== null) await writeFile(file, before)
  }
}

/** The concurrency bench's arguments: both servers in one run, cells alternating between them. */
const CONCURRENCY_ARGS = ['--no-compare', '--clients', '1,16', '--paths', 'hybrid,vector', '--seconds', '8']

/** One concurrency run of both arms (started from this tree): per arm answers/s, p50 and CPU per answer for each cell. */
async function runConcurrency(): Promise<{ arm: string; figures: Record<string, number>; load: number[]; seconds: number }[]> {
  const out = join(tmpdir(), `node-runtimes-concurrency-${process.pid}.json`)
  const started = performance.now()
  const load = loadavg().map((l) => Math.round(l * 100) / 100)
  await promisify(execFile)(process.execPath, ['--import', 'tsx', 'bench/concurrency.ts', '--base', arms.base.tree, '--base-rev', values['base-rev'],
    '--base-node', arms.base.node, ...CONCURRENCY_ARGS, '--out', out], { timeout: 3_600_000, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, RECALL_SHARED_DIR: SHARED_DIR } })
  const r = JSON.parse(await readFile(out, 'utf8')) as {
    cells: { build: string; path: string; clients: number; answers_per_s: number; p50_ms: number; server_cpu_ms_per_answer: number; client_cpu_ms_per_answer: number }[]
    memory: Record<string, { after_ingest: { rss_mib: number } }>
  }
  await rm(out, { force: true })
  const seconds = Math.round((performance.now() - started) / 100) / 10
  return (['base', 'this'] as const).map((arm) => {
    const mine = (build: string): boolean => (arm === 'base') === build.startsWith('previous main')
    const figures: Record<string, number> = {}
    for (const c of r.cells.filter((x) => mine(x.build))) {
      figures[`${c.path}_c${c.clients}_answers_per_s`] = c.answers_per_s
      figures[`${c.path}_c${c.clients}_p50_ms`] = c.p50_ms
      figures[`${c.path}_c${c.clients}_server_cpu_ms_per_answer`] = c.server_cpu_ms_per_answer
    }
    figures.rss_mib_after_ingest = Object.entries(r.memory).find(([build]) => mine(build))![1].after_ingest.rss_mib
    return { arm, figures, load, seconds }
  })
}

const round = (x: number) => Math.round(x * 1000) / 1000

async function main(): Promise<void> {
  const versions = {
    base: (await promisify(execFile)(arms.base.node, ['--version'])).stdout.trim(), this: process.version
  }
  const output: Record<string, unknown> = {
    generated_by: 'bench/node-runtimes.ts', date: new Date().toISOString(), machine: '2 cores, 24 GiB, shared with other helpers running tests',
    arms: { base: { tree: arms.base.tree, node: versions.base }, this: { tree: arms.self.tree, node: versions.this } },
    order: 'per round: base, this, this, base (concurrency: one run of both servers, cells alternating)', ratio: 'this ÷ base of the medians (a *_per_s figure is better higher, every other lower)',
    leg_deadlines: LATENCY_NOT_DEADLINES,
    // a run of some benches keeps the others' entries of an earlier run
    benches: await readFile('bench/results/node-runtimes.json', 'utf8').then((t) => (JSON.parse(t) as { benches: object }).benches, () => ({}))
  }
  for (const name of values.benches!.split(',')) {
    const runs: { arm: string; figures: Record<string, number>; load: number[]; seconds: number }[] = []
    for (let round = 0; round < Number(values.rounds); round++) {
      if (name === 'concurrency') {
        const both = await runConcurrency()
        console.error(`concurrency (${versions.base} and ${versions.this}): ${JSON.stringify(both)}`)
        runs.push(...both)
        continue
      }
      for (const arm of [arms.base, arms.self, arms.self, arms.base]) {
        const run = await runBench(arm, name)
        console.error(`${name} ${arm.name} (${arm === arms.base ? versions.base : versions.this}): ${JSON.stringify(run)}`)
        runs.push({ arm: arm.name, ...run })
      }
    }
    const keys = Object.keys(runs[0]!.figures)
    const med = (arm: string) => Object.fromEntries(keys.map((k) => [k, round(median(runs.filter((r) => r.arm === arm).map((r) => r.figures[k]!)))]))
    const base = med('base'); const self = med('this')
    ;(output.benches as Record<string, unknown>)[name] = {
      base_commit: readFileSync(join(arms.base.tree, '.base-commit'), 'utf8').trim(),
      args: name === 'concurrency' ? CONCURRENCY_ARGS : BENCHES[name]!.args, median_base: base, median_this: self,
      ratio_this_over_base: Object.fromEntries(keys.map((k) => [k, round(self[k]! / base[k]!)])), runs
    }
    await writeFile('bench/results/node-runtimes.json', `${JSON.stringify(output, null, 2)}\n`)
  }
  console.log(JSON.stringify(Object.fromEntries(Object.entries(output.benches as Record<string, { ratio_this_over_base: unknown }>).map(([k, v]) => [k, v.ratio_this_over_base]))))
}

main().catch((error: unknown) => { console.error(error); process.exit(1) })

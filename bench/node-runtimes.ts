/**
 * The Node 20 build against the Node 24 build (issue 43, "nothing slower"): the hybrid, episodic, nrt and ingest-rate
 * benches of two trees, each run by its own Node in a child process, in the order base, this, this, base per round
 * (drift on a busy machine falls on both), each bench's own result file read after its run and put back as it was.
 * Writes bench/results/node-runtimes.json: every run's figures, the median per arm, and this ÷ base.
 *
 *   npx tsx bench/node-runtimes.ts --base ../n20-base --base-node /usr/bin/node [--rounds 2] [--benches hybrid,episodic,nrt,ingest-rate]
 *
 * The concurrency bench compares two servers itself: `bench/concurrency.ts --base <the Node 20 tree> --base-node <Node 20>`.
 *
 * `--base` is a checkout of the Node 20 main with its own node_modules (installed by Node 20) and models linked;
 * this tree runs on the Node running this script (scripts/with-node.sh: the project's Node 24).
 */
import { execFile } from 'node:child_process'
import { readFile, writeFile } from 'node:fs/promises'
import { loadavg } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs, promisify } from 'node:util'
import { SHARED_DIR } from './lib/reference-data.js'

const { values } = parseArgs({
  options: {
    base: { type: 'string' }, 'base-node': { type: 'string' }, rounds: { type: 'string', default: '2' },
    benches: { type: 'string', default: 'hybrid,episodic,ingest-rate' }
  }
})
if (!values.base || !values['base-node']) throw new Error('--base DIR and --base-node PATH are required')

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

const median = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2 }
const round = (x: number) => Math.round(x * 1000) / 1000

async function main(): Promise<void> {
  const versions = {
    base: (await promisify(execFile)(arms.base.node, ['--version'])).stdout.trim(), this: process.version
  }
  const output: Record<string, unknown> = {
    generated_by: 'bench/node-runtimes.ts', date: new Date().toISOString(), machine: '2 cores, 24 GiB, shared with other helpers running tests',
    arms: { base: { tree: arms.base.tree, node: versions.base }, this: { tree: arms.self.tree, node: versions.this } },
    order: 'per round: base, this, this, base', ratio: 'this ÷ base of the medians (a *_per_s figure is better higher, every other lower)',
    leg_deadlines: LATENCY_NOT_DEADLINES,
    // a run of some benches keeps the others' entries of an earlier run
    benches: await readFile('bench/results/node-runtimes.json', 'utf8').then((t) => (JSON.parse(t) as { benches: object }).benches, () => ({}))
  }
  for (const name of values.benches!.split(',')) {
    const runs: { arm: string; figures: Record<string, number>; load: number[]; seconds: number }[] = []
    for (let round = 0; round < Number(values.rounds); round++) {
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
      args: BENCHES[name]!.args, median_base: base, median_this: self,
      ratio_this_over_base: Object.fromEntries(keys.map((k) => [k, round(self[k]! / base[k]!)])), runs
    }
    await writeFile('bench/results/node-runtimes.json', `${JSON.stringify(output, null, 2)}\n`)
  }
  console.log(JSON.stringify(Object.fromEntries(Object.entries(output.benches as Record<string, { ratio_this_over_base: unknown }>).map(([k, v]) => [k, v.ratio_this_over_base]))))
}

main().catch((error: unknown) => { console.error(error); process.exit(1) })

/**
 * Whole-ingest cost of text PDFs, this tree beside another (`--base DIR`: a tree of another commit, e.g. `git archive
 * 91f31e2` with node_modules and models linked), side by side in one run: `npm run ingest -- --direct --json DIR` in
 * each tree's own folder, a fresh DATA_DIR each time, in the order base, this, this, base, … (drift on a busy machine
 * falls on both). Per run the wall seconds and the CPU seconds of the whole CLI (user + system by /usr/bin/time: less
 * disturbed than wall time on a shared machine), medians and ratios this ÷ base.
 *
 *   nice -n 5 npx tsx bench/pdf-ingest-rate.ts --base DIR [--rounds 3] [--out bench/results/pdf-ingest-rate.json] FOLDER
 *
 * FOLDER: text PDFs (bench/scanned-retrieval.ts --work W leaves LibreOffice's ten regulation PDFs in W/text).
 */
import { execFile } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs, promisify } from 'node:util'
import { median } from './lib/median.js'

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { base: { type: 'string' }, rounds: { type: 'string', default: '3' }, out: { type: 'string' } }
})
if (!values.base || positionals.length !== 1) throw new Error('usage: bench/pdf-ingest-rate.ts --base DIR [--rounds N] [--out FILE] FOLDER')
const folder = resolve(positionals[0]!)
const trees = { base: resolve(values.base), this: resolve('.') }
const node = join(resolve('.'), '.cache/node/bin')
const run = promisify(execFile)

async function once(tree: 'base' | 'this') {
  const dir = await mkdtemp(join(tmpdir(), 'pdf-ingest-'))
  try {
    const started = performance.now()
    const { stdout, stderr } = await run('/usr/bin/time', ['-f', 'cpu %U %S', 'node_modules/.bin/tsx', 'src/cli/ingest.ts', '--direct', '--json', folder], {
      cwd: trees[tree], maxBuffer: 64 * 1024 * 1024,
      env: { ...process.env, PATH: `${node}:${process.env.PATH}`, DATA_DIR: dir, DEMO_DATA: 'false', LOG_LEVEL: 'silent', MODEL_DIR: join(trees.this, 'models') }
    })
    const seconds = (performance.now() - started) / 1000
    const [, user, system] = /cpu ([\d.]+) ([\d.]+)/.exec(stderr)!
    const report = JSON.parse(stdout) as { files: Array<{ outcome: string; chunks?: number; pages?: number }> }
    const chunks = report.files.reduce((s, f) => s + (f.chunks ?? 0), 0)
    if (report.files.some((f) => f.outcome !== 'ingested')) throw new Error(`${tree}: ${stdout}`)
    return { tree, seconds, cpu_seconds: Number(user) + Number(system), files: report.files.length, chunks, pages: report.files.reduce((s, f) => s + (f.pages ?? 0), 0) }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

const runs: Array<Awaited<ReturnType<typeof once>>> = []
const load = [loadavg()[0]!]
for (let r = 0; r < Number(values.rounds); r++) {
  for (const tree of r % 2 === 0 ? (['base', 'this'] as const) : (['this', 'base'] as const)) {
    runs.push(await once(tree))
    load.push(loadavg()[0]!)
    console.error(JSON.stringify(runs.at(-1)))
  }
}
const round = (x: number, d = 1000) => Math.round(x * d) / d
const of = (tree: string, k: 'seconds' | 'cpu_seconds') => median(runs.filter((r) => r.tree === tree).map((r) => r[k]))
const result = {
  command: `nice -n 5 npx tsx bench/pdf-ingest-rate.ts ${process.argv.slice(2).join(' ')}`, folder, rounds: Number(values.rounds),
  files: runs[0]!.files, pages: runs[0]!.pages, chunks: runs[0]!.chunks,
  median: { base_seconds: round(of('base', 'seconds')), this_seconds: round(of('this', 'seconds')), base_cpu_seconds: round(of('base', 'cpu_seconds')), this_cpu_seconds: round(of('this', 'cpu_seconds')) },
  this_over_base: { seconds: round(of('this', 'seconds') / of('base', 'seconds')), cpu_seconds: round(of('this', 'cpu_seconds') / of('base', 'cpu_seconds')) },
  runs, load_1min: { min: round(Math.min(...load), 100), max: round(Math.max(...load), 100) }, node: process.version, date: new Date().toISOString()
}
console.log(JSON.stringify(result, null, 2))
if (values.out) await writeFile(values.out, `${JSON.stringify(result, null, 2)}\n`)

/**
 * Re-ingesting an unchanged folder costs a small share of its first ingest (issue 30, item 4: at most 5% at 1,000
 * files). A folder of `--files` Markdown files (a title and `--sections` (3) sections of real Chinese text each, the synthetic
 * CMRC passages of bench/lib/synthetic.ts) is ingested by the CLI over HTTP (`npm run ingest -- --url URL --json
 * FOLDER`) into one running service (embedded stores, the real local model, a fresh DATA_DIR), then the same command
 * runs again over the unchanged folder; every file of the second run must be reported `unchanged`. Per run: the
 * CLI's own `seconds` (reading the files and the service's ingest requests, from the CLI's start of work) and the
 * process's wall time (its Node/tsx start-up included). The CLI's own start-up is measured apart: the median wall time
 * of three `npm run ingest -- --help` (Node, tsx and the CLI's modules loaded, nothing read or sent). Writes
 * bench/results/reingest-unchanged.json, or `-LABEL.json` with `--label`.
 *
 *   npx tsx bench/reingest-unchanged.ts [--files 1000] [--sections 3] [--tree DIR --label NAME]
 *
 * `--tree DIR` runs the CLI and the service of another checkout (node_modules and models linked), e.g. the previous
 * main, so that two trees are measured under the same load.
 */
import { spawn } from 'node:child_process'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { startServer, type ServerProcess } from '../scripts/lib/server-process.js'
import { loadCmrc } from './lib/cmrc.js'
import { writeSectionedFolder } from './lib/synthetic.js'

const { values } = parseArgs({
  options: { files: { type: 'string', default: '1000' }, sections: { type: 'string', default: '3' }, tree: { type: 'string' }, label: { type: 'string' } }
})
const files = Number(values.files)
const perFile = Number(values.sections)
const tree = resolve(values.tree ?? '.')

interface Report { counts: Record<string, number>; chunks: number; seconds: number }

function cli(folder: string, url: string): Promise<{ wall: number; report: Report; load: [number, number] }> {
  const load = loadavg()[0]!
  const started = performance.now()
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(tree, 'src/cli/ingest.ts'), '--url', url, '--json', folder], {
      env: { ...process.env, LOG_LEVEL: 'silent' }, stdio: ['ignore', 'pipe', 'inherit']
    })
    let stdout = ''
    child.stdout.on('data', (d: Buffer) => { stdout += d.toString() })
    child.on('error', reject)
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`ingest exited ${code}`))
      resolve({ wall: (performance.now() - started) / 1000, report: JSON.parse(stdout) as Report, load: [load, loadavg()[0]!] })
    })
  })
}

/** Wall seconds of `ingest --help`: the process's start-up and the CLI's imports, nothing read or sent. */
function startup(): Promise<number> {
  const started = performance.now()
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(tree, 'src/cli/ingest.ts'), '--help'], { stdio: 'ignore' })
    child.on('error', reject)
    child.on('close', () => resolve((performance.now() - started) / 1000))
  })
}

const dir = await mkdtemp(join(tmpdir(), 'recall-reingest-'))
let server: ServerProcess | undefined
try {
  const folder = join(dir, 'docs')
  await mkdir(folder)
  const { documents } = await loadCmrc()
  await writeSectionedFolder(folder, documents.map((d) => d.text), files, perFile)
  server = await startServer({ DATA_DIR: join(dir, 'data'), DEMO_DATA: 'false', RATE_LIMIT_MAX: '0' }, {
    timeoutMs: 600_000, args: ['--import', 'tsx', join(tree, 'src/http/server.ts')]
  })
  const startLoad = loadavg()[0]!
  const startups = [await startup(), await startup(), await startup()].sort((a, b) => a - b)
  const first = await cli(folder, server.url)
  const again = await cli(folder, server.url)
  if (again.report.counts.unchanged !== files) throw new Error(`second run: ${JSON.stringify(again.report.counts)}`)
  const cliStartup = startups[1]!
  const share = (a: number, b: number) => Math.round((a / b) * 10_000) / 10_000
  const result = {
    date: new Date().toISOString(), tree: values.tree ?? '.', files, sections_per_file: perFile, chunks: first.report.chunks,
    through: 'CLI over HTTP to one running service: npm run ingest -- --url URL --json FOLDER (embedded stores, local model)',
    cli_startup: { wall_seconds: round(cliStartup), runs: startups.map(round), load_average: [startLoad, loadavg()[0]!], what: 'median of three `ingest --help`: Node, tsx and the CLI\'s modules' },
    first: { wall_seconds: round(first.wall), report_seconds: round(first.report.seconds), counts: first.report.counts, load_average: first.load },
    again: { wall_seconds: round(again.wall), report_seconds: round(again.report.seconds), counts: again.report.counts, load_average: again.load },
    again_over_first_wall: share(again.wall, first.wall),
    again_over_first_report: share(again.report.seconds, first.report.seconds),
    again_over_first_wall_less_startup: share(again.wall - cliStartup, first.wall - cliStartup)
  }
  console.log(JSON.stringify(result, null, 2))
  await writeFile(`bench/results/reingest-unchanged${values.label ? `-${values.label}` : ''}.json`, `${JSON.stringify(result, null, 2)}\n`)
} finally {
  await server?.kill()
  await rm(dir, { recursive: true, force: true })
}

function round(x: number): number {
  return Math.round(x * 100) / 100
}

/**
 * Where the time of re-ingesting an unchanged folder goes (issue 30, item 4): the folder of bench/reingest-unchanged.ts
 * is ingested once by the CLI over HTTP, then the service is restarted with `--cpu-prof` and the CLI runs again over
 * the unchanged folder with `--cpu-prof` too. Printed: the CLI's wall time, its start-up alone (`--help`), the
 * service's own `ingest` log lines (one per job: its ms), and each CPU profile's self time by package or source
 * file and by function (top 20). Nothing is written under bench/results: the figures go to bench/results/reingest-unchanged.log.md.
 *
 *   npx tsx bench/reingest-profile.ts [--files 1000] [--sections 1] [--tree DIR]
 */
import { spawn } from 'node:child_process'
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { startServer } from '../scripts/lib/server-process.js'
import { loadCmrc } from './lib/cmrc.js'
import { writeSectionedFolder } from './lib/synthetic.js'

const { values } = parseArgs({ options: { files: { type: 'string', default: '1000' }, sections: { type: 'string', default: '1' }, tree: { type: 'string' } } })
const files = Number(values.files)
const perFile = Number(values.sections)
const tree = resolve(values.tree ?? '.')

function run(args: string[]): Promise<{ wall: number; stdout: string }> {
  const started = performance.now()
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, args, { env: { ...process.env, LOG_LEVEL: 'silent' }, stdio: ['ignore', 'pipe', 'ignore'] })
    let stdout = ''
    child.stdout.on('data', (d: Buffer) => { stdout += d.toString() })
    child.on('error', fail)
    child.on('close', () => done({ wall: (performance.now() - started) / 1000, stdout }))
  })
}

interface Profile { nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number } }>; samples: number[]; timeDeltas: number[] }

/** Self time (ms) of a CPU profile by package / source file and by function, the top `n` of each. */
function summarise(profile: Profile, n = 20): string[] {
  const frames = new Map(profile.nodes.map((node) => [node.id, node.callFrame]))
  const byPlace = new Map<string, number>()
  const byFunction = new Map<string, number>()
  let total = 0
  profile.samples.forEach((id, i) => {
    const us = profile.timeDeltas[i] ?? 0
    const frame = frames.get(id)!
    const url = frame.url.replace(/^file:\/\//, '')
    const modules = url.lastIndexOf('node_modules/')
    const rest = modules >= 0 ? url.slice(modules + 'node_modules/'.length).split('/') : []
    const place = frame.url === '' ? `(${frame.functionName || 'native'})` : modules >= 0 ? rest.slice(0, rest[0]!.startsWith('@') ? 2 : 1).join('/') : url.replace(`${tree}/`, '')
    byPlace.set(place, (byPlace.get(place) ?? 0) + us)
    const fn = `${frame.functionName || '(anonymous)'} ${url.replace(`${tree}/`, '').replace(/.*node_modules\//, '')}:${frame.lineNumber + 1}`
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + us)
    total += us
  })
  const top = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]).slice(0, n)
    .map(([k, us]) => `  ${(us / 1000).toFixed(0).padStart(7)} ms ${((100 * us) / total).toFixed(1).padStart(5)}%  ${k}`)
  return [`sampled ${(total / 1000).toFixed(0)} ms`, 'by package or source file:', ...top(byPlace), 'by function:', ...top(byFunction)]
}

async function profileIn(dir: string): Promise<Profile> {
  const name = (await readdir(dir)).find((f) => f.endsWith('.cpuprofile'))
  if (!name) throw new Error(`no profile in ${dir}`)
  return JSON.parse(await readFile(join(dir, name), 'utf8')) as Profile
}

const dir = await mkdtemp(join(tmpdir(), 'recall-reingest-profile-'))
try {
  const folder = join(dir, 'docs')
  await mkdir(folder)
  const { documents } = await loadCmrc()
  await writeSectionedFolder(folder, documents.map((d) => d.text), files, perFile)
  const env = { DATA_DIR: join(dir, 'data'), DEMO_DATA: 'false', RATE_LIMIT_MAX: '0' }
  const cli = (extra: string[], url: string) => ['--import', 'tsx', ...extra, join(tree, 'src/cli/ingest.ts'), '--url', url, '--json', folder]
  let server = await startServer(env, { timeoutMs: 600_000, args: ['--import', 'tsx', join(tree, 'src/http/server.ts')] })
  const first = await run(cli([], server.url))
  console.log(`first run: ${first.wall.toFixed(1)} s wall, ${(JSON.parse(first.stdout) as { seconds: number }).seconds.toFixed(1)} s reported`)
  await server.kill()
  const serverProfiles = join(dir, 'server-profile')
  const cliProfiles = join(dir, 'cli-profile')
  server = await startServer({ ...env, LOG_LEVEL: 'info' }, {
    timeoutMs: 600_000, args: ['--import', 'tsx', `--cpu-prof`, `--cpu-prof-dir=${serverProfiles}`, join(tree, 'src/http/server.ts')]
  })
  const ready = server.output().length
  const load = loadavg()[0]!
  const startup = await run(['--import', 'tsx', join(tree, 'src/cli/ingest.ts'), '--help'])
  const again = await run(cli(['--cpu-prof', `--cpu-prof-dir=${cliProfiles}`], server.url))
  const report = JSON.parse(again.stdout) as { seconds: number; counts: Record<string, number> }
  const ingestLines = server.output().slice(ready).split('\n').filter((l) => l.includes('"msg":"ingest"'))
  const jobMs = ingestLines.map((l) => (JSON.parse(l) as { ms: number }).ms)
  await server.kill()
  console.log(`again: ${again.wall.toFixed(1)} s wall, ${report.seconds.toFixed(1)} s reported, ${JSON.stringify(report.counts)}; CLI start-up (--help) ${startup.wall.toFixed(1)} s; load average ${load.toFixed(1)} -> ${loadavg()[0]!.toFixed(1)}`)
  console.log(`service: ${jobMs.length} ingests logged, ${jobMs.reduce((a, b) => a + b, 0).toFixed(0)} ms in all (${jobMs.map((ms) => ms.toFixed(0)).join(', ')})`)
  console.log('CLI profile (the second run):')
  for (const line of summarise(await profileIn(cliProfiles))) console.log(line)
  console.log('service profile (its start-up, then the second run):')
  for (const line of summarise(await profileIn(serverProfiles))) console.log(line)
} finally {
  await rm(dir, { recursive: true, force: true })
}

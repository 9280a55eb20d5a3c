// Start-up benchmark (`make startup`): how long after the process starts does recall answer /healthz, and
// when is it ready (model, stores and the demo world loaded)? `npm start` as `make run` does, a fresh
// DATA_DIR with the demo world, from dist/ (build first), a few runs in a row; then as many again beside
// `stress-ng --cpu 4` (four CPU-bound processes on the machine's cores).
//
//   tsx bench/startup.ts [--runs 3] [--out bench/results/startup.json]
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { parseArgs } from 'node:util'
import { freePort } from '../scripts/lib/free-port.js'
import { msUntilAnswering } from './lib/answering.js'

const { values } = parseArgs({ options: { runs: { type: 'string', default: '3' }, out: { type: 'string', default: 'bench/results/startup.json' } } })

async function once(): Promise<{ healthz_ms: number; readyz_ms: number }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'recall-startup-'))
  const port = await freePort()
  const started = performance.now()
  const child = spawn('npm', ['start', '--silent'], {
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, DEMO_DATA: 'true', LOG_LEVEL: 'warn' },
    stdio: 'ignore',
    detached: true
  })
  try {
    const base = `http://127.0.0.1:${port}`
    const healthz = await msUntilAnswering(`${base}/healthz`, started, 60_000)
    const readyz = await msUntilAnswering(`${base}/readyz`, started, 600_000)
    return { healthz_ms: healthz, readyz_ms: readyz }
  } finally {
    // npm starts node as its child: end the whole group this script started.
    process.kill(-child.pid!, 'SIGTERM')
    await new Promise((r) => child.once('exit', r))
    rmSync(dataDir, { recursive: true, force: true })
  }
}

const load = loadavg().map((x) => Math.round(x * 100) / 100)
const runs = []
for (let i = 0; i < Number(values.runs); i++) {
  runs.push(await once())
  console.log(JSON.stringify(runs.at(-1)))
}
const stress: ChildProcess = spawn('stress-ng', ['--cpu', '4', '--timeout', '600s'], { stdio: 'ignore' })
const stressedRuns = []
try {
  await new Promise((r) => setTimeout(r, 2000))
  for (let i = 0; i < Number(values.runs); i++) {
    stressedRuns.push(await once())
    console.log(JSON.stringify({ beside_stress_ng: stressedRuns.at(-1) }))
  }
} finally {
  stress.kill('SIGTERM')
}
mkdirSync(dirname(values.out), { recursive: true })
writeFileSync(values.out, `${JSON.stringify({
  generated_by: 'bench/startup.ts',
  started_at: new Date().toISOString(),
  what: '`npm start` (as `make run` after its setup and build steps) in a fresh DATA_DIR with the demo world: ms from spawn to the first 200 of /healthz, and of /readyz',
  node: process.version,
  load_average_1_5_15: { start: load, end: loadavg().map((x) => Math.round(x * 100) / 100) },
  runs,
  runs_beside_stress_ng_cpu_4: stressedRuns
}, null, 2)}\n`)
console.log(`wrote ${values.out}`)

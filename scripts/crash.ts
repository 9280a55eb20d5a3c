/**
 * `make crash`: the crash campaign (`scripts/crash/campaign.ts`) against the built service, by hand.
 * Options: `--rounds N` (default 200), `--seed S`, `--out FILE` (the report as JSON, e.g.
 * bench/results/crash.json), `--sources` (run src/ under tsx instead of dist/). Document writes come through REST, the MCP
 * tool `ingest` and the ingest CLI over HTTP (`dist/src/cli/ingest.js` under plain node). `--kill-ms MIN,MAX` (default
 * 300,3000): when the service is killed, counted from the round's first acknowledged CLI write (a CLI write took 17 s at
 * load 39: 12 s to start under plain node, then its job), or from 60 s into the round when none came.
 * Exits 1 when an acknowledged write was lost, something was half-present or a restart failed.
 */
import { writeFileSync } from 'node:fs'
import { runCrashCampaign } from './crash/campaign.js'

const args = process.argv.slice(2)
const arg = (name: string): string | undefined => {
  const at = args.indexOf(`--${name}`)
  return at >= 0 ? args[at + 1] : undefined
}
const rounds = Number(arg('rounds') ?? 200)
const seed = Number(arg('seed') ?? 18)
const out = arg('out')
const [killMin, killMax] = (arg('kill-ms') ?? '300,3000').split(',').map(Number) as [number, number]

const report = await runCrashCampaign({
  rounds, seed, killAfterMs: [killMin, killMax],
  ...(args.includes('--sources')
    ? { cliArgs: ['--import', 'tsx', 'src/cli/ingest.ts'] }
    : { serverArgs: ['dist/src/http/server.js'], cliArgs: ['dist/src/cli/ingest.js'] }),
  log: (line) => console.log(line),
  onRound: (so) => { if (out) writeFileSync(out, `${JSON.stringify({ generated_by: 'scripts/crash.ts', at: new Date().toISOString(), seed, kill_after_ms: [killMin, killMax], finished: false, ...so }, null, 2)}\n`) }
})
const summary = { generated_by: 'scripts/crash.ts', at: new Date().toISOString(), seed, kill_after_ms: [killMin, killMax], finished: true, ...report }
console.log(JSON.stringify(summary, null, 2))
if (out) writeFileSync(out, `${JSON.stringify(summary, null, 2)}\n`)
process.exit(report.acknowledged_lost === 0 && report.half_present === 0 && report.failed_restarts === 0 ? 0 : 1)

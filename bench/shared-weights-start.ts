// What EMBEDDING_WEIGHTS=shared costs at start-up: making the shared copy of the weights on a fresh DATA_DIR, then
// finding and checking it on each later start (src/providers/embedder/shared-weights.ts), wall and this process's CPU.
//
//   tsx bench/shared-weights-start.ts [--rounds 2] [--out bench/results/shared-weights-start.json]
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { sharedWeightsModel } from '../src/providers/embedder/shared-weights.js'

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '2' }, out: { type: 'string', default: 'bench/results/shared-weights-start.json' } } })
const options = { folder: resolve('models', 'bge-small-zh-v1.5'), maxLength: 512, dimensions: 512, threads: 1 }
const rounds: Array<{ steps: Record<string, { wall_ms: number; cpu_ms: number }>; load: number }> = []
for (let r = 0; r < Number(values.rounds); r++) {
  const dir = mkdtempSync(join(tmpdir(), 'recall-weights-start-'))
  const round: Record<string, { wall_ms: number; cpu_ms: number }> = {}
  for (const step of ['made', 'found', 'found again']) {
    const began = performance.now()
    const cpu = process.cpuUsage()
    await sharedWeightsModel(options, dir)
    const used = process.cpuUsage(cpu)
    round[step] = { wall_ms: Math.round(performance.now() - began), cpu_ms: Math.round((used.user + used.system) / 1000) }
  }
  rmSync(dir, { recursive: true, force: true })
  rounds.push({ steps: round, load: loadavg()[0]! })
  console.log(JSON.stringify(rounds.at(-1)))
}
writeFileSync(values.out, JSON.stringify({ bench: 'shared-weights-start', date: new Date().toISOString(), rounds }, null, 2) + '\n')

/**
 * What the machine-wide OCR slot (src/ocr/machine-slots.ts: a `flock` child holding a lock on a slot file) adds to one
 * recognition, against the process's own slots (src/ocr/slots.ts), interleaved in one run: each round takes and
 * releases a slot around empty work, one holder at a time, `size` slots. Medians per take-and-release.
 *
 *   npx tsx bench/ocr-slot-cost.ts [rounds] [--size 1] [--out file.json]
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { MachineSlots } from '../src/ocr/machine-slots.js'
import { Slots } from '../src/ocr/slots.js'

const { values, positionals } = parseArgs({ allowPositionals: true, options: { out: { type: 'string' }, size: { type: 'string' } } })
const rounds = Number(positionals[0] ?? 200)
const size = Number(values.size ?? 1)
const dir = await mkdtemp(join(tmpdir(), 'recall-slot-cost-'))
const arms = { machine: new MachineSlots(dir, size), process: new Slots(size) }
const lockable = await arms.machine.health()
if (!lockable.ok) throw new Error(lockable.reason)
const times: Record<keyof typeof arms, number[]> = { machine: [], process: [] }
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const load = [loadavg()[0]!]
for (let r = 0; r < rounds; r++) {
  for (const arm of (r % 2 === 0 ? ['machine', 'process'] : ['process', 'machine']) as Array<keyof typeof arms>) {
    const started = performance.now()
    await arms[arm].run(async () => undefined)
    times[arm].push(performance.now() - started)
  }
}
load.push(loadavg()[0]!)
await rm(dir, { recursive: true, force: true })
const result = {
  date: new Date().toISOString(), rounds, size, load_1m: load.map((l) => Math.round(l * 10) / 10),
  median_ms: { machine: Math.round(median(times.machine) * 100) / 100, process: Math.round(median(times.process) * 1000) / 1000 },
  p90_ms: { machine: Math.round([...times.machine].sort((a, b) => a - b)[Math.floor(rounds * 0.9)]! * 100) / 100 }
}
console.log(JSON.stringify(result, null, 2))
if (values.out) await writeFile(values.out, `${JSON.stringify(result, null, 2)}\n`)

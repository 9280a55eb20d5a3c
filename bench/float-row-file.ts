/**
 * The int8 store's float rows file (src/providers/vector-store/float-row-file.ts) beside another tree's (`--base DIR`),
 * the two in turn round by round: what a start-up pays to write every row again, and what a search pays to read its
 * candidates back (issue 44, item 1: the costs of int8 as the default).
 *
 *   nice -n 19 npx tsx bench/float-row-file.ts --base DIR [--rows 100000] [--dims 512] [--rounds 4] [--searches 300]
 *     [--candidates 200] [--out FILE]
 *
 * - write: `--rows` rows written one after another from row 0 (as a load acquires them), then every 7th row read back
 *   once and compared (as a load of Episodes' records, which take their chunk's vector, checks a shared row): CPU and
 *   wall of the whole.
 * - read: `--searches` times, `--candidates` distinct rows drawn at random (a search's candidates), each read into a
 *   row of one buffer as the exact scorer does: time a search's reads, p50 and p99. The rows stay in the page cache
 *   (the machine's memory is free); a dropped page would be a read from disk, not measured here.
 */
import { rmSync, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { FloatRowFile } from '../src/providers/vector-store/float-row-file.js'
import { median } from './lib/median.js'
import { rng } from './lib/synthetic.js'

const { values } = parseArgs({
  options: {
    base: { type: 'string' },
    rows: { type: 'string', default: '100000' },
    dims: { type: 'string', default: '512' },
    rounds: { type: 'string', default: '4' },
    searches: { type: 'string', default: '300' },
    candidates: { type: 'string', default: '200' },
    out: { type: 'string' }
  }
})
if (!values.base) throw new Error('--base DIR: the tree to compare with')
const ROWS = Number(values.rows)
const DIMS = Number(values.dims)
const r3 = (x: number) => Math.round(x * 1e3) / 1e3

type RowFile = { write(row: number, v: Float32Array): void; readInto(row: number, into: Uint8Array): void; read(row: number): Float32Array; close(): void }
type RowFileClass = new (dir: string, dims: number) => RowFile
const { FloatRowFile: BaseFile } = (await import(join(values.base, 'src/providers/vector-store/float-row-file.ts'))) as { FloatRowFile: RowFileClass }
const arms: { name: string; make: RowFileClass; writeCpu: number[]; writeWall: number[]; readMs: number[] }[] = [
  { name: 'this', make: FloatRowFile, writeCpu: [], writeWall: [], readMs: [] },
  { name: 'base', make: BaseFile, writeCpu: [], writeWall: [], readMs: [] }
]

// one source of rows for every arm: 256 distinct vectors used in turn (the file's cost does not depend on the values)
const random = rng(44)
const source = Array.from({ length: 256 }, () => Float32Array.from({ length: DIMS }, () => random() * 2 - 1))
const dir = join(tmpdir(), `float-row-file-bench-${process.pid}`)
const loads = [loadavg()[0]!]

for (let round = 0; round < Number(values.rounds); round++) {
  for (const arm of round % 2 === 0 ? arms : [...arms].reverse()) {
    const file = new arm.make(dir, DIMS)
    const cpu = process.cpuUsage()
    const started = performance.now()
    for (let row = 0; row < ROWS; row++) {
      file.write(row, source[row % 256]!)
      if (row % 7 === 6) {
        const back = file.read(row - 3)
        if (back[0] !== source[(row - 3) % 256]![0]) throw new Error(`${arm.name}: row ${row - 3} read back wrong`)
      }
    }
    arm.writeWall.push(performance.now() - started)
    const used = process.cpuUsage(cpu)
    arm.writeCpu.push((used.user + used.system) / 1000)
    const buffer = new Uint8Array(Number(values.candidates) * DIMS * 4)
    const draw = rng(round + 1)
    for (let s = 0; s < Number(values.searches); s++) {
      const rows = new Set<number>()
      while (rows.size < Number(values.candidates)) rows.add(Math.floor(draw() * ROWS))
      const t = performance.now()
      let i = 0
      for (const row of rows) file.readInto(row, buffer.subarray(i * DIMS * 4, ++i * DIMS * 4))
      arm.readMs.push(performance.now() - t)
    }
    file.close()
  }
  loads.push(loadavg()[0]!)
}
rmSync(dir, { recursive: true, force: true })

const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!
const figures = Object.fromEntries(arms.map((a) => [a.name, {
  write_rows_cpu_ms: a.writeCpu.map(Math.round), write_rows_wall_ms: a.writeWall.map(Math.round),
  read_candidates: { p50_ms: r3(percentile(a.readMs, 50)), p99_ms: r3(percentile(a.readMs, 99)) }
}]))
const [mine, base] = arms as [typeof arms[0], typeof arms[0]]
const report = {
  bench: 'float-row-file', at: new Date().toISOString(), base_tree: values.base, rows: ROWS, dims: DIMS, rounds: Number(values.rounds),
  searches: Number(values.searches), candidates: Number(values.candidates), load_1min: loads.map((l) => Math.round(l * 10) / 10),
  ...figures,
  this_over_base: {
    write_cpu_median: r3(median(mine.writeCpu) / median(base.writeCpu)), write_wall_median: r3(median(mine.writeWall) / median(base.writeWall)),
    read_p50: r3(percentile(mine.readMs, 50) / percentile(base.readMs, 50))
  }
}
const text = JSON.stringify({ command: `npx tsx bench/float-row-file.ts ${process.argv.slice(2).join(" ")}`, ...report }, null, 2)
console.log(text)
if (values.out) writeFileSync(values.out, `${text}\n`)

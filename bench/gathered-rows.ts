/**
 * What a snapshot written off the write queue pays to read an int8 pool's float rows (issue 44: a third of a 1M ingest's
 * main thread at 600k chunks): `Int8RowPool.rowsInto` (runs of nearby rows read at once) beside the row-at-a-time read
 * it replaced (`SharedRows.rowsInto`), over the same pool and the same slices of 2,048 records (a snapshot's), rounds
 * alternating. Rows asked: every row in order (a chunk collection), and every third row (a derived collection's records,
 * which take some of their chunks' rows). Writes bench/results/gathered-rows.json.
 *
 *   npx tsx bench/gathered-rows.ts [--rows 200000] [--rounds 3] [--out F]
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { Int8RowPool } from '../src/providers/vector-store/int8-row-pool.js'
import { SharedRows } from '../src/providers/vector-store/shared-rows.js'

const DIMS = 512
const SLICE = 2048

const { values } = parseArgs({ options: { rows: { type: 'string', default: '200000' }, rounds: { type: 'string', default: '3' }, out: { type: 'string', default: 'bench/results/gathered-rows.json' } } })
const rowCount = Number(values.rows)
const dir = mkdtempSync(join(tmpdir(), 'recall-gathered-'))
const pool = new Int8RowPool(DIMS, DIMS, 4, dir)
const v = new Float32Array(DIMS)
const rows: number[] = []
for (let n = 0; n < rowCount; n++) {
  for (let i = 0; i < DIMS; i++) v[i] = Math.sin(n * 0.61 + i * 1.37)
  rows.push(pool.acquire(v, 0))
}
const oneByOne = SharedRows.prototype.rowsInto
const cases = { every_row: rows, every_third_row: rows.filter((_, i) => i % 3 === 0) }
const cpuMs = (read: (asked: number[], from: number, to: number, into: Float32Array) => void, asked: number[]): number => {
  const into = new Float32Array(SLICE * DIMS)
  const before = process.cpuUsage()
  for (let from = 0; from < asked.length; from += SLICE) read(asked, from, Math.min(asked.length, from + SLICE), into)
  const used = process.cpuUsage(before)
  return Math.round((used.user + used.system) / 100) / 10
}
const results: Record<string, { one_by_one_ms: number[]; gathered_ms: number[] }> = {}
for (const [name, asked] of Object.entries(cases)) {
  results[name] = { one_by_one_ms: [], gathered_ms: [] }
  for (let r = 0; r < Number(values.rounds); r++) {
    results[name].one_by_one_ms.push(cpuMs((a, f, t, i) => oneByOne.call(pool, a, f, t, i), asked))
    results[name].gathered_ms.push(cpuMs((a, f, t, i) => pool.rowsInto(a, f, t, i), asked))
  }
  console.log(name, JSON.stringify(results[name]))
}
pool.close()
rmSync(dir, { recursive: true, force: true })
writeFileSync(values.out, `${JSON.stringify({
  generated_by: 'bench/gathered-rows.ts', at: new Date().toISOString(),
  machine: { cpus: cpus().length, node: process.version, load_average: loadavg().map((x) => Math.round(x * 10) / 10) },
  rows: rowCount, dims: DIMS, slice_records: SLICE, cpu_ms: results
}, null, 2)}\n`)

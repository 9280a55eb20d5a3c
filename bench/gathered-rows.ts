/**
 * What a snapshot written off the write queue pays to read an int8 pool's float rows (issue 44: a third of a 1M ingest's
 * main thread at 600k chunks): `Int8RowPool.rowsInto` (runs of nearby rows read at once) beside the row-at-a-time read
 * it replaced (`SharedRows.rowsInto`), over the same pool and the same slices of 2,048 records (a snapshot's), rounds
 * alternating. Rows asked: every row in order (a chunk collection), and every third row (a derived collection's records,
 * which take some of their chunks' rows). Writes bench/results/gathered-rows.json.
 *
 * `--cold`: before each pass the float file's pages are dropped from the page cache (`posix_fadvise DONTNEED` by
 * Python on `/proc/<pid>/fd/<fd>`), so every row comes from disk, as in a 1M ingest whose page cache had let them go;
 * each pass reads the slices as the snapshot writer does (the event loop let run between slices), and reports its wall
 * time and the event loop's longest stall, for the row-at-a-time read, the gathered read, and the gathered read awaited
 * (`rowsIntoAsync`).
 *
 *   npx tsx bench/gathered-rows.ts [--rows 200000] [--rounds 3] [--cold] [--out F]
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { setImmediate as nextTurn } from 'node:timers/promises'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { Int8RowPool } from '../src/providers/vector-store/int8-row-pool.js'
import { SharedRows } from '../src/providers/vector-store/shared-rows.js'

const DIMS = 512
const SLICE = 2048

const { values } = parseArgs({ options: { rows: { type: 'string', default: '200000' }, rounds: { type: 'string', default: '3' }, cold: { type: 'boolean', default: false }, out: { type: 'string', default: 'bench/results/gathered-rows.json' } } })
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
// the pool's float file, a private member: this bench drops its pages from the page cache
const floatFd = (pool as unknown as { floats: { fd: number } }).floats.fd
const dropPages = (): void => {
  execFileSync('python3', ['-c', `import os; fd = os.open('/proc/${process.pid}/fd/${floatFd}', os.O_RDONLY); os.fdatasync(fd); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)`])
}
type Read = (asked: number[], from: number, to: number, into: Float32Array) => void | Promise<void>
const coldPass = async (read: Read, asked: number[]): Promise<{ wall_ms: number; longest_stall_ms: number }> => {
  dropPages()
  const into = new Float32Array(SLICE * DIMS)
  const loop = monitorEventLoopDelay({ resolution: 1 })
  loop.enable()
  const started = performance.now()
  for (let from = 0; from < asked.length; from += SLICE) {
    await read(asked, from, Math.min(asked.length, from + SLICE), into)
    await nextTurn()
  }
  const wall = performance.now() - started
  loop.disable()
  return { wall_ms: Math.round(wall), longest_stall_ms: Math.round(loop.max / 1e5) / 10 }
}
if (values.cold) {
  // the rows reach the file before its pages are dropped
  pool.rowsInto([rows.at(-1)!], 0, 1, new Float32Array(DIMS))
  const cold: Record<string, Record<string, { wall_ms: number; longest_stall_ms: number }[]>> = {}
  for (const [name, asked] of Object.entries(cases)) {
    const byWay: Record<string, { wall_ms: number; longest_stall_ms: number }[]> = { one_by_one: [], gathered: [], gathered_awaited: [] }
    for (let r = 0; r < Number(values.rounds); r++) {
      byWay['one_by_one']!.push(await coldPass((a, f, t, i) => oneByOne.call(pool, a, f, t, i), asked))
      byWay['gathered']!.push(await coldPass((a, f, t, i) => pool.rowsInto(a, f, t, i), asked))
      byWay['gathered_awaited']!.push(await coldPass((a, f, t, i) => pool.rowsIntoAsync(a, f, t, i), asked))
    }
    cold[name] = byWay
    console.log(name, JSON.stringify(byWay))
  }
  pool.close()
  rmSync(dir, { recursive: true, force: true })
  writeFileSync(values.out, `${JSON.stringify({
    generated_by: 'bench/gathered-rows.ts --cold', at: new Date().toISOString(),
    machine: { cpus: cpus().length, node: process.version, load_average: loadavg().map((x) => Math.round(x * 10) / 10) },
    rows: rowCount, dims: DIMS, slice_records: SLICE, cold
  }, null, 2)}\n`)
  process.exit(0)
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

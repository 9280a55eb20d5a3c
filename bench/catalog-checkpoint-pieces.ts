/**
 * The catalog's checkpoint file written and read in pieces (`RCC2`, a column's 8,192 entries a piece, the event loop
 * given turns) beside the earlier build's one JSON value (`RCC1`), on a kept DATA_DIR's checkpoint (issue 44: at 1M
 * chunks the one-value read held the event loop 2-3 s in a start-up, and V8's string limit is reached near 2.7M chunks).
 * In one process, both trees' catalogs held throughout (the same live heap under every operation): the base tree reads
 * the kept file and writes it again, this tree reads its own file of the same catalog and writes it again; every read
 * must give the same columns. Then the canonical form a checkpoint after writes builds (`canonicalCatalog`: each chunk
 * decoded again, in id order), run at once (as before) and in steps. Each pair in turn, which goes first alternating
 * round by round, a full collection before each operation. Reported per operation: wall time, the
 * longest the event loop went without a turn (a 1 ms interval's longest gap), and the file's bytes.
 *
 *   node --expose-gc --max-old-space-size=8192 --import tsx bench/catalog-checkpoint-pieces.ts --file DIR/catalog/recall_chunks.catalog --base TREE [--rounds 3] [--out FILE]
 */
import { createHash } from 'node:crypto'
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { pathToFileURL } from 'node:url'
import { readCheckpoint, writeCheckpoint } from '../src/corpus/documents/catalog-checkpoint.js'
import { ChunkCatalog } from '../src/corpus/documents/chunk-catalog.js'
import { canonicalCatalog } from '../src/corpus/documents/library.js'
import { runSteps, runStepsYielding } from '../src/providers/embedded/load-steps.js'

const { values } = parseArgs({
  options: { file: { type: 'string' }, base: { type: 'string' }, rounds: { type: 'string', default: '3' }, out: { type: 'string', default: 'bench/results/catalog-checkpoint-pieces.json' } }
})
if (!values.file || !values.base) throw new Error('--file and --base are required')
const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d
const gc = (globalThis as { gc?: () => void }).gc ?? (() => {})

type Checkpoints = { readCheckpoint: typeof readCheckpoint; writeCheckpoint: typeof writeCheckpoint }
const base = await import(pathToFileURL(resolve(values.base, 'src/corpus/documents/catalog-checkpoint.ts')).href) as Checkpoints

/** Wall time of `run` and the longest gap between ticks of a 1 ms interval meanwhile. */
async function timed<T>(run: () => Promise<T>): Promise<{ value: T; wall_ms: number; longest_stall_ms: number }> {
  let last = performance.now()
  let longest = 0
  const tick = setInterval(() => {
    const now = performance.now()
    longest = Math.max(longest, now - last)
    last = now
  }, 1)
  const started = performance.now()
  const value = await run()
  const wall = performance.now() - started
  clearInterval(tick)
  longest = Math.max(longest, performance.now() - last)
  return { value, wall_ms: round(wall), longest_stall_ms: round(longest) }
}

function digest(catalog: ChunkCatalog): string {
  const hash = createHash('sha256')
  const columns = catalog.toColumns() as unknown as Record<string, unknown[]>
  for (const [name, column] of Object.entries(columns)) {
    hash.update(name)
    for (let at = 0; at < column.length; at += 8192) hash.update(JSON.stringify(column.slice(at, at + 8192)))
  }
  return hash.digest('hex').slice(0, 16)
}

const kept = await readFile(values.file)
const header = JSON.parse(kept.toString('utf8', 12, 12 + kept.readUInt32LE(8))) as { stamp: string; collection: string; namespace: string; chunks: number }
const expect = { stamp: header.stamp, collection: header.collection, namespace: header.namespace }
const headerOut = { stamp: header.stamp, collection: header.collection, namespace: header.namespace }
const work = await mkdtemp(join(tmpdir(), 'recall-catalog-pieces-'))
const rounds: Record<string, unknown>[] = []
try {
  // both catalogs held for the whole run, so that every operation runs beside the same live heap
  const first = await base.readCheckpoint(values.file, expect)
  if (!('catalog' in first)) throw new Error(`base did not read the kept file: ${first.unused}`)
  const baseCatalog = first.catalog
  const want = digest(baseCatalog)
  // the same catalog as this tree's own class (the base tree's has not its methods in steps)
  const catalog = ChunkCatalog.fromColumns(baseCatalog.toColumns())
  if (digest(catalog) !== want) throw new Error('the catalog as this tree\'s class differs')
  const thisKept = join(work, 'this.catalog')
  await writeCheckpoint(thisKept, catalog, headerOut)
  type Op = { name: string; run: () => Promise<unknown>; check?: (value: unknown) => void }
  const readBack = (name: string) => (value: unknown) => {
    const read = value as Awaited<ReturnType<typeof readCheckpoint>>
    if (!('catalog' in read)) throw new Error(`${name} did not read its file: ${read.unused}`)
    const got = digest(read.catalog)
    if (got !== want) throw new Error(`${name}: the catalog read back differs (${got} against ${want})`)
  }
  const ops: Op[] = [
    { name: 'base_read', run: () => base.readCheckpoint(values.file!, expect), check: readBack('base_read') },
    { name: 'this_read', run: () => readCheckpoint(thisKept, expect), check: readBack('this_read') },
    { name: 'base_write', run: () => base.writeCheckpoint(join(work, 'base-written.catalog'), baseCatalog, headerOut) },
    { name: 'this_write', run: () => writeCheckpoint(join(work, 'this-written.catalog'), catalog, headerOut) },
    // the canonical form a checkpoint after writes builds (each chunk decoded again, in id order): at once, as before, and in steps
    { name: 'canonical_at_once', run: async () => digest(runSteps(canonicalCatalog(catalog))) },
    { name: 'canonical_in_steps', run: async () => digest(await runStepsYielding(canonicalCatalog(catalog))) }
  ]
  for (let r = 1; r <= Number(values.rounds); r++) {
    const row: Record<string, unknown> = { round: r, chunks: catalog.size, columns_digest: want }
    // pairs in turn, which of a pair goes first alternating round by round
    for (let p = 0; p < ops.length; p += 2) {
      const pair = r % 2 === 1 ? [ops[p]!, ops[p + 1]!] : [ops[p + 1]!, ops[p]!]
      const values: unknown[] = []
      for (const op of pair) {
        gc()
        const t = await timed(op.run)
        op.check?.(t.value)
        values.push(t.value)
        row[op.name] = { wall_ms: t.wall_ms, longest_stall_ms: t.longest_stall_ms }
      }
      if (pair[0]!.name.startsWith('canonical') && values[0] !== values[1]) throw new Error(`round ${r}: the canonical catalogs differ`)
    }
    ;(row['base_write'] as Record<string, number>)['bytes'] = (await stat(join(work, 'base-written.catalog'))).size
    ;(row['this_write'] as Record<string, number>)['bytes'] = (await stat(join(work, 'this-written.catalog'))).size
    console.log(JSON.stringify(row))
    rounds.push(row)
  }
} finally {
  await rm(work, { recursive: true, force: true })
}
await writeFile(values.out, `${JSON.stringify({
  generated_by: 'bench/catalog-checkpoint-pieces.ts', at: new Date().toISOString(),
  machine: { cpus: cpus().length, node: process.version }, load_average_at_end: loadavg().map((l) => round(l, 2)),
  file: values.file, base: values.base, rounds
}, null, 1)}\n`)
console.log(`wrote ${values.out}`)

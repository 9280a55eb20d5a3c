/**
 * The embedded vector store's reopen alone (issue 44, item 1): every collection of a kept DATA_DIR's `vectors/` (namespace
 * `default`) read into memory by a new store, in a process of its own, this tree beside `--base`, interleaved round by
 * round (base first in odd rounds). Each arm first folds its own copy's logs into its own snapshot form (format 2 here,
 * 1 before issue 44's columns), so that each reads what it writes. Reported per run: CPU and wall time of the reopen
 * and of a scroll of every chunk kept (as the document catalog reads them at start-up), heap and off-heap held after
 * them (after a full collection, the scrolled chunks held), and a digest of answers (for 8 query vectors
 * taken from the chunks, each collection's top 10 with payloads, and a scroll of the first 50 documents' chunks), which
 * must be equal across arms.
 *
 *   node --expose-gc --import tsx bench/vector-reopen.ts --from DIR --base TREE [--rounds 3] [--out FILE]
 */
import { createHash } from 'node:crypto'
import { execFileSync } from 'node:child_process'
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { foldVectorsWith } from './lib/fold-graph.js'
import { loadTree, measureInChild } from './lib/tree.js'
import { median } from './lib/median.js'

const { values } = parseArgs({
  options: {
    from: { type: 'string' },
    base: { type: 'string' },
    rounds: { type: 'string', default: '3' },
    out: { type: 'string', default: 'bench/results/vector-reopen.json' },
    worker: { type: 'string' },
    name: { type: 'string' },
    dir: { type: 'string' }
  }
})
const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d
const MiB = 2 ** 20
const log = (line: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`)
const gc = (globalThis as { gc?: () => void }).gc!

if (values.worker) {
  const tree = loadTree(values.name!, values.worker)
  const { EmbeddedVectorStore } = await tree.module('src/providers/vector-store/embedded.ts')
  const dir = values.dir!
  const collections = (await readdir(dir)).filter((f) => f.endsWith('.snap')).map((f) => decodeURIComponent(f.slice(0, -5))).sort()
  gc()
  const before = process.memoryUsage()
  const cpu = process.cpuUsage()
  const started = performance.now()
  const store = new EmbeddedVectorStore({ dir })
  let records = 0
  for (const collection of collections) records += await store.count(collection, 'default')
  // as the document catalog does at start-up: every chunk's payload read, and kept
  const catalog: unknown[] = []
  for await (const row of store.scroll('recall_chunks', 'default')) catalog.push(row)
  const wallMs = performance.now() - started
  const used = process.cpuUsage(cpu)
  // array buffers let go are freed after the collection, once the event loop turns
  gc()
  await new Promise((r) => setTimeout(r, 50))
  gc()
  const after = process.memoryUsage()
  catalog.length = 0
  // answers: top 10 with payloads per collection for 8 chunk vectors, and the first 50 documents' chunks scrolled
  const digest = createHash('sha256')
  const chunkIds: string[] = []
  const docs = new Set<string>()
  for await (const { id, payload } of store.scroll('recall_chunks', 'default')) {
    if (chunkIds.length < 8 && id.endsWith('#0')) chunkIds.push(id)
    if (docs.size < 50) docs.add(payload.doc_id)
  }
  const queries = await store.vectorsOf('recall_chunks', 'default', chunkIds)
  for (const id of chunkIds) {
    for (const collection of collections) {
      const hits = await store.search(collection, 'default', queries.get(id)!, 10).catch((e: Error) => e.message)
      digest.update(JSON.stringify([collection, hits]))
    }
  }
  for await (const record of store.scroll('recall_chunks', 'default', [...docs])) digest.update(JSON.stringify(record))
  await store.close()
  process.send!({
    arm: values.name, records, collections: collections.length,
    cpu_seconds: round((used.user + used.system) / 1e6, 2), wall_seconds: round(wallMs / 1000, 2),
    heap_mib: round((after.heapUsed - before.heapUsed) / MiB), off_heap_mib: round((after.external - before.external) / MiB), // external includes the array buffers
    answers_sha256: digest.digest('hex')
  })
  process.exit(0)
}

if (!values.from || !values.base) throw new Error('--from DIR (a DATA_DIR kept by bench/memory.ts --keep) and --base TREE')
const script = fileURLToPath(import.meta.url)
const arms = [loadTree('this', '.'), loadTree('base', values.base)]
const dirs = new Map<string, string>()
for (const arm of arms) {
  const data = await mkdtemp(join(tmpdir(), `recall-vector-reopen-${arm.name}-`))
  execFileSync('cp', ['-a', join(resolve(values.from), 'vectors'), data])
  await foldVectorsWith(arm.dir, data)
  dirs.set(arm.name, data)
}
const runs: Record<string, unknown>[] = []
try {
  for (let r = 1; r <= Number(values.rounds); r++) {
    for (const arm of r % 2 === 1 ? [...arms].reverse() : arms) {
      const loadAtStart = round(loadavg()[0]!)
      const run = { round: r, load_1m_at_start: loadAtStart, ...(await measureInChild(script, arm, ['--dir', join(dirs.get(arm.name)!, 'vectors')])) }
      log(JSON.stringify(run))
      runs.push(run)
    }
  }
} finally {
  for (const dir of dirs.values()) await rm(dir, { recursive: true, force: true })
}
const of = (arm: string, key: string) => median(runs.filter((r) => r['arm'] === arm).map((r) => r[key] as number))
const keys = ['cpu_seconds', 'wall_seconds', 'heap_mib', 'off_heap_mib']
const summary = {
  this: Object.fromEntries(keys.map((k) => [k, of('this', k)])),
  base: Object.fromEntries(keys.map((k) => [k, of('base', k)])),
  this_over_base: Object.fromEntries(keys.map((k) => [k, round(of('this', k) / of('base', k), 3)])),
  answers_identical: new Set(runs.map((r) => r['answers_sha256'])).size === 1
}
log(JSON.stringify(summary))
await writeFile(values.out, `${JSON.stringify({
  generated_by: 'bench/vector-reopen.ts', at: new Date().toISOString(), from: resolve(values.from),
  commits: Object.fromEntries(arms.map((a) => [a.name, a.commit])), machine: { cpus: cpus().length, node: process.version, note: 'shared machine, every process at nice 19' },
  load_average_at_end: loadavg().map((x) => round(x)), summary, runs
}, null, 2)}\n`)
log(`wrote ${values.out}`)

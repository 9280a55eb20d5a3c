/**
 * What the entity-names write costs per documents write as a namespace grows (issue 44 item 1; at 1M chunks its
 * whole-namespace reconcile, `planEntityNames`, was 17.8–19.4% of the ingesting process's CPU): this tree beside
 * `--base DIR`, both in this process, over the embedded stores, derivation of the graph on (Episodes off: they write
 * no graph names), stand-in vectors (`bench/lib/synthetic.ts`: no model runs, so what is measured is the reconcile's
 * own reading and bookkeeping, not embedding). Each tree ingests the same documents (8 CMRC sections each, 50 documents
 * a write, as bench/memory.ts) to each checkpoint; there, rounds alternate between the trees: one more write of 50
 * documents with the namespace's `entities:` lock held by the bench until the write answered, then the entity-names
 * run alone, timed from the lock's release until the write path is idle (wall, and the process's CPU, every thread).
 *
 *   node --expose-gc --max-old-space-size=2048 --import tsx bench/entity-names-reconcile.ts --base DIR \
 *     [--checkpoints 10000,30000] [--rounds 8] [--out bench/results/entity-names-reconcile.json]
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { loadCmrc } from './lib/cmrc.js'
import { sectionedDocuments, standInEmbedder, syntheticDocuments } from './lib/synthetic.js'
import { loadTree, type Tree } from './lib/tree.js'

const { values: args } = parseArgs({
  options: {
    base: { type: 'string' }, checkpoints: { type: 'string', default: '10000,30000' }, rounds: { type: 'string', default: '8' },
    out: { type: 'string', default: 'bench/results/entity-names-reconcile.json' }, 'machine-note': { type: 'string' }
  }
})
if (!args.base) throw new Error('--base DIR: the tree to compare with')
const checkpoints = args.checkpoints!.split(',').map(Number)
const ROUNDS = Number(args.rounds)
const NAMESPACE = 'default'
const BATCH = 50
const PER_DOCUMENT = 8
const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d
const median = (xs: readonly number[]) => { const s = [...xs].sort((a, b) => a - b); return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2 }
const log = (line: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`)
const cpuMs = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000 }

interface Arm {
  tree: Tree
  services: any
  lock: { exclusive<T>(name: string, write: () => Promise<T>): Promise<T> }
  dataDir: string
  chunks: number
  runs: Array<{ wall_ms: number; cpu_ms: number }>
}

async function open(tree: Tree): Promise<Arm> {
  const dataDir = await mkdtemp(join(tmpdir(), `recall-bench-names-${tree.name}-`))
  const config = await tree.loadConfig({
    DATA_DIR: dataDir, DEMO_DATA: 'false', LOG_LEVEL: 'silent', EMBEDDING_SESSIONS: '0', DERIVED_GRAPH: 'true', DERIVED_EPISODES: 'false', ENTITY_VECTORS: 'true'
  })
  const { InProcessWriteLock } = await tree.module('src/corpus/write-lock.ts')
  const lock = new InProcessWriteLock()
  const services = await (await tree.module('src/services.ts')).openServices(config, { providers: (p: object) => ({ ...p, embedder: standInEmbedder }), writeLock: lock })
  return { tree, services, lock, dataDir, chunks: 0, runs: [] }
}

async function write(arm: Arm, documents: unknown[]): Promise<void> {
  const written = await arm.services.writePath.write(NAMESPACE, { kind: 'documents', op: 'upsert', documents }) as { chunks: number }
  arm.chunks += written.chunks
}

/** One write, its entity-names run held back by the lock until it answered, then the run alone, timed. */
async function measured(arm: Arm, documents: unknown[]): Promise<void> {
  let release!: () => void
  const held = new Promise<void>((resolve) => { release = resolve })
  let taken!: () => void
  const lockTaken = new Promise<void>((resolve) => { taken = resolve })
  const gate = arm.lock.exclusive(`entities:${NAMESPACE}`, async () => { taken(); await held })
  await lockTaken
  await write(arm, documents)
  const wall = performance.now()
  const cpu = cpuMs()
  release()
  await gate
  await arm.services.writePath.entityNamesIdle()
  arm.runs.push({ wall_ms: performance.now() - wall, cpu_ms: cpuMs() - cpu })
}

const cmrc = (await loadCmrc()).documents.map((d) => d.text!)
const passages = syntheticDocuments(cmrc, Math.ceil((Math.max(...checkpoints) + 2 * ROUNDS * BATCH * PER_DOCUMENT * checkpoints.length) * 1.2), 7).map((d) => d.text!)
const documents = sectionedDocuments(passages, PER_DOCUMENT)
const nextBatch = () => Array.from({ length: BATCH }, () => documents.next().value!)
const arms = [await open(loadTree('base', args.base)), await open(loadTree('this', '.'))]
log(`trees: ${arms.map((a) => `${a.tree.name} ${a.tree.commit}`).join(', ')}`)
const results: Record<string, unknown>[] = []
for (const checkpoint of checkpoints) {
  // both trees get the same documents: the batches are made once and written to each
  while (arms[0]!.chunks < checkpoint) {
    const batch = nextBatch()
    for (const arm of arms) await write(arm, batch)
    for (const arm of arms) await arm.services.writePath.entityNamesIdle()
  }
  log(`${checkpoint}: ${arms.map((a) => `${a.tree.name} ${a.chunks} chunks`).join(', ')}; load ${round(loadavg()[0]!)}`)
  for (const arm of arms) arm.runs = []
  const loadBefore = loadavg()[0]!
  for (let r = 0; r < ROUNDS; r++) {
    const batch = nextBatch()
    // the order alternates, so a drift in the machine's load falls on both
    for (const arm of r % 2 === 0 ? arms : [...arms].reverse()) await measured(arm, batch)
  }
  const graph = await arms[1]!.services.graph.count(NAMESPACE)
  const names = (await arms[1]!.services.graph.names(NAMESPACE)).length
  const of = (arm: Arm) => ({
    commit: arm.tree.commit, chunks: arm.chunks,
    run_wall_ms: { median: round(median(arm.runs.map((x) => x.wall_ms))), each: arm.runs.map((x) => round(x.wall_ms)) },
    run_cpu_ms: { median: round(median(arm.runs.map((x) => x.cpu_ms))), each: arm.runs.map((x) => round(x.cpu_ms)) }
  })
  const [base, mine] = arms.map(of)
  const point = {
    checkpoint, entities: graph.entities, relations: graph.relations, names_read_whole: names, load_1m: [round(loadBefore), round(loadavg()[0]!)],
    base, this: mine,
    ratio_this_to_base: { run_wall: round(mine!.run_wall_ms.median / base!.run_wall_ms.median, 3), run_cpu: round(mine!.run_cpu_ms.median / base!.run_cpu_ms.median, 3) }
  }
  log(JSON.stringify(point))
  results.push(point)
}
// the two trees' collections hold the same records at the end
const records = async (arm: Arm) => {
  const { entityCollectionOf } = await arm.tree.module('src/corpus/entity-vectors.ts')
  const ids: string[] = []
  for await (const r of arm.services.vectors.scroll(entityCollectionOf(arm.services.config.collectionPrefix), NAMESPACE)) ids.push(`${r.id}:${r.payload.text}`)
  return ids
}
const [baseRecords, thisRecords] = [await records(arms[0]!), await records(arms[1]!)]
const same = baseRecords.length === thisRecords.length && baseRecords.every((x, i) => x === thisRecords[i])
log(`entity collections at the end: base ${baseRecords.length}, this ${thisRecords.length} records, identical: ${same}`)
for (const arm of arms) {
  await arm.services.close()
  await rm(arm.dataDir, { recursive: true, force: true })
}
await writeFile(args.out!, `${JSON.stringify({
  generated_by: 'bench/entity-names-reconcile.ts', at: new Date().toISOString(),
  machine: { cpus: cpus().length, node: process.version, note: args['machine-note'] ?? 'not given' },
  method: 'per checkpoint, rounds alternating between the trees: a write of 50 documents (8 sections each) with the entities: lock held until it answered, then its entity-names run alone, wall and process CPU (all threads) from the release until the write path was idle; stand-in vectors; DERIVED_GRAPH=true, DERIVED_EPISODES=false',
  rounds: ROUNDS, checkpoints: results, entity_collections_identical: same, entity_records: thisRecords.length
}, null, 2)}\n`)

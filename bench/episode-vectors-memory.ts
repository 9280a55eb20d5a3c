/**
 * The derived Episodes' vector records alone (issue 44, item 1): the embedded vector store of a kept DATA_DIR
 * (`bench/memory.ts --keep DIR`) opened by this tree and, with `--base DIR`, by another, each in a process of its own on
 * a fresh copy of the `vectors` folder. The chunks' collection is read first (so the derived records share its rows, as in
 * the service), then each derived Episode collection in turn; after each, heap and off-heap after two full collections:
 * what each collection holds, in bytes a chunk (heap: ids, payloads, maps; off-heap: rows no chunk had). Also the CPU of
 * reading them, and a digest of every answer (each collection's scroll, a search per collection with 40 stored vectors,
 * with and without a filter of doc ids, `vectorsOf`, `count`), which must be the same in both trees.
 *
 *   node --expose-gc --import tsx bench/episode-vectors-memory.ts --from DATA_DIR [--base DIR] [--rounds N] [--prefix recall_] [--out FILE]
 *
 * With `--rounds N` the trees run in turns (this, base; base, this; …); the CPU ratio is of the rounds' sums, the bytes
 * and the digest the first round's.
 */
import { createHash } from 'node:crypto'
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { loadTree, measureInChild, type Tree } from './lib/tree.js'

const { values: args } = parseArgs({
  options: {
    from: { type: 'string' }, base: { type: 'string' }, out: { type: 'string' }, rounds: { type: 'string', default: '1' },
    prefix: { type: 'string', default: 'recall_' }, worker: { type: 'string' }, name: { type: 'string' }
  }
})
const NAMESPACE = 'default'
const COLLECTIONS = ['Episode_summary', 'Facet_search_text', 'Facet_anchor_text', 'FacetPoint_search_text', 'Entity_name', 'RelationType_relationship_name']
  .map((c) => `${args.prefix}derived_${c}`)
const CHUNKS = `${args.prefix}chunks`
const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d
const log = (line: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`)

if (!args.from) throw new Error('--from DATA_DIR (kept by bench/memory.ts --keep) is required')
if (args.worker) await worker(args.worker, args.from)
else await main(args.from)

async function main(from: string): Promise<void> {
  const startedLoad = loadavg().map((x) => round(x))
  const trees: Tree[] = [loadTree('this', '.'), ...(args.base ? [loadTree('base', args.base)] : [])]
  const results: Record<string, Record<string, unknown>> = {}
  const cpu: Record<string, number[]> = Object.fromEntries(trees.map((t) => [t.name, []]))
  for (let r = 0; r < Number(args.rounds); r++) for (const tree of r % 2 === 0 ? trees : [...trees].reverse()) {
    const result = await measureInChild(fileURLToPath(import.meta.url), tree, ['--from', from])
    results[tree.name] ??= result
    cpu[tree.name]!.push(result['read_cpu_seconds'] as number)
    log(`round ${r + 1}, ${tree.name} (${tree.commit}, load ${loadavg()[0]!.toFixed(1)}): ${JSON.stringify(result)}`)
  }
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0)
  const derivedBytes = (tree: string) => (results[tree]!['derived_heap_and_off_heap_bytes_per_chunk'] as number)
  const report = {
    generated_by: 'bench/episode-vectors-memory.ts', at: new Date().toISOString(), from,
    trees: Object.fromEntries(trees.map((t) => [t.name, { dir: t.dir, commit: t.commit }])),
    load_average_at_start: startedLoad, load_average_at_end: loadavg().map((x) => round(x)),
    results, read_cpu_seconds_by_round: cpu,
    ...(results['base'] ? {
      same_answers: results['this']!['answers_digest'] === results['base']['answers_digest'],
      this_over_base: {
        derived_collections_bytes_per_chunk: round(derivedBytes('this') / derivedBytes('base'), 3),
        read_cpu: round(sum(cpu['this']!) / sum(cpu['base']!), 3)
      }
    } : {})
  }
  const text = JSON.stringify(report, null, 2)
  console.log(text)
  if (args.out) await writeFile(args.out, `${text}\n`)
}

async function worker(treeDir: string, from: string): Promise<void> {
  const tree = loadTree('tree', treeDir)
  const { EmbeddedVectorStore } = await tree.module('src/providers/vector-store/embedded.ts')
  const gc = (globalThis as { gc?: () => void }).gc!
  const held = async () => {
    await new Promise((turn) => setImmediate(turn))
    gc(); gc()
    const m = process.memoryUsage()
    return { heap: m.heapUsed, external: m.external }
  }
  const dir = await mkdtemp(join(tmpdir(), 'recall-episode-vectors-'))
  await cp(join(from, 'vectors'), dir, { recursive: true })
  const store = new EmbeddedVectorStore({ dir })
  let before = await held()
  const perCollection: Record<string, Record<string, number>> = {}
  let readCpu = 0
  let chunks = 0
  let derivedHeap = 0
  let derivedOffHeap = 0
  for (const collection of [CHUNKS, ...COLLECTIONS]) {
    const cpu = process.cpuUsage()
    const records = await store.count(collection, NAMESPACE) as number
    const used = process.cpuUsage(cpu)
    if (collection !== CHUNKS) readCpu += (used.user + used.system) / 1e6
    else chunks = records
    const after = await held()
    const heap = after.heap - before.heap
    const offHeap = after.external - before.external
    if (collection !== CHUNKS) {
      derivedHeap += heap
      derivedOffHeap += offHeap
    }
    perCollection[collection] = {
      records, records_per_chunk: round(records / chunks, 3), heap_bytes_per_chunk: Math.round(heap / chunks),
      heap_bytes_per_record: Math.round(heap / Math.max(1, records)), off_heap_bytes_per_chunk: Math.round(offHeap / chunks)
    }
    before = after
  }
  // every answer, hashed: the same bytes in both trees, or the change changed an answer
  const digest = createHash('sha256')
  const add = (label: string, value: unknown) => digest.update(`${label}\u0000${JSON.stringify(value)}\n`)
  for (const collection of COLLECTIONS) {
    const ids: string[] = []
    const docIds: string[] = []
    for await (const { id, payload } of store.scroll(collection, NAMESPACE)) {
      add(`scroll ${collection}`, [id, payload])
      ids.push(id)
      docIds.push(payload.doc_id)
    }
    add(`count ${collection}`, await store.count(collection, NAMESPACE))
    const probes = ids.filter((_, i) => i % Math.max(1, Math.floor(ids.length / 40)) === 0).slice(0, 40)
    const vectors = await store.vectorsOf(collection, NAMESPACE, [...probes, 'nope'])
    add(`vectorsOf ${collection}`, [...vectors].map(([id, v]) => [id, createHash('sha256').update(v).digest('hex')]))
    const someDocs = docIds.filter((_, i) => i % 7 === 0).slice(0, 50)
    for (const id of probes) {
      add(`search ${collection} ${id}`, await store.search(collection, NAMESPACE, vectors.get(id)!, 20))
      add(`search filtered ${collection} ${id}`, await store.search(collection, NAMESPACE, vectors.get(id)!, 5, { doc_ids: someDocs }))
      add(`rank ${collection} ${id}`, await store.rank(collection, NAMESPACE, vectors.get(id)!, 20))
    }
  }
  const afterReads = await held()
  await store.close()
  await rm(dir, { recursive: true, force: true })
  process.send!({
    chunks, per_collection: perCollection,
    derived_heap_bytes_per_chunk: Math.round(derivedHeap / chunks), derived_off_heap_bytes_per_chunk: Math.round(derivedOffHeap / chunks),
    derived_heap_and_off_heap_bytes_per_chunk: Math.round((derivedHeap + derivedOffHeap) / chunks),
    reads_kept_bytes_per_chunk: Math.round((afterReads.heap + afterReads.external - before.heap - before.external) / chunks),
    read_cpu_seconds: round(readCpu, 2),
    answers_digest: digest.digest('hex')
  }, () => process.exit(0))
}

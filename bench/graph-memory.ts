/**
 * The embedded knowledge graph's own memory per chunk (issue 44, item 1), this tree beside another (`--base DIR`) in one
 * run: documents shaped as `bench/memory.ts` makes them (8 sections of CMRC sentence windows, the real chunker), derived
 * once here with this tree's `deriveDocument` and written to a file; then each tree, in a process of its own, writes them
 * with `replaceDerived` (50 documents a write, as the write path) into an on-disk store, and reports heap (after two
 * full collections, less the empty store's) and resident memory:
 *   - after the ingest; after closing and opening the store again (replay from snapshot and log);
 *   - after reading every entity's neighbourhood once (a store may keep what a read built);
 * the CPU time of the writes, of the reopen (the process's, fold threads included: what a loaded machine does not
 * inflate, unlike their wall time) and of graphrag's reads (every entity's neighbourhood, with and without a cut of 5
 * neighbours, and the keyword searches below), and a digest of every answer the store gives (`names`, `count`, each entity's `neighbourhood`, `derivedOf` of every
 * document, `getEntities`, `searchKeywords` of tokens of names), which must be the same in both trees.
 *
 *   node --expose-gc --import tsx bench/graph-memory.ts --chunks 20000 [--base DIR] [--rounds N] [--heap-snapshot DIR] [--out FILE]
 *
 * `--rounds N` measures each tree N times, the trees' order alternating from round to round; the report gives each
 * round and, per figure, the median over rounds (and its ratio to the base's).
 *
 * `--heap-snapshot DIR` also writes each tree's heap after the restart (`<tree>.heapsnapshot`) and a summary of it by
 * constructor (`<tree>.summary.json`: self size and count of every node kind holding over 0.5% of the heap).
 */
import { createHash } from 'node:crypto'
import { createReadStream, readFileSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { writeHeapSnapshot } from 'node:v8'
import { analyze } from '../src/kernel/cjk-analyzer.js'
import { chunkDocument } from '../src/corpus/documents/chunking.js'
import { deriveDocument } from '../src/derive/document.js'
import { derivationOptions } from '../src/derive/options.js'
import { loadCmrc } from './lib/cmrc.js'
import { sectionedDocuments, syntheticDocuments } from './lib/synthetic.js'
import { loadTree, measureInChild, type Tree } from './lib/tree.js'

const { values: args } = parseArgs({
  options: {
    chunks: { type: 'string', default: '20000' }, base: { type: 'string' }, out: { type: 'string' }, rounds: { type: 'string', default: '1' },
    'heap-snapshot': { type: 'string' }, worker: { type: 'string' }, name: { type: 'string' }, contributions: { type: 'string' }
  }
})
const MiB = 2 ** 20
const NAMESPACE = 'bench'
const BATCH = 50
const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d
const log = (line: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`)

if (args.worker) await worker(args.worker, args.contributions!)
else await main()

async function main(): Promise<void> {
  const target = Number(args.chunks)
  const startedLoad = loadavg().map((x) => round(x))
  const cmrc = (await loadCmrc()).documents.map((d) => d.text)
  const passages = syntheticDocuments(cmrc, Math.ceil(target * 1.1), 7).map((d) => d.text)
  const options = derivationOptions()
  const dir = await mkdtemp(join(tmpdir(), 'recall-graph-memory-'))
  const file = join(dir, 'contributions.jsonl')
  const lines: string[] = []
  let chunks = 0
  for (const document of sectionedDocuments(passages, 8)) {
    if (chunks >= target) break
    const id = document.id
    const records = chunkDocument(document)
    chunks += records.length
    lines.push(JSON.stringify([id, deriveDocument(records, options), records.length]))
  }
  await writeFile(file, `${lines.join('\n')}\n`)
  log(`derived ${lines.length} documents, ${chunks} chunks`)
  const trees: Tree[] = [loadTree('this', '.'), ...(args.base ? [loadTree('base', args.base)] : [])]
  const rounds: Array<Record<string, Record<string, unknown>>> = []
  // one tree after the other: the two processes' heaps never compete for the machine's memory at once
  for (let r = 0; r < Number(args.rounds); r++) {
    const round: Record<string, Record<string, unknown>> = {}
    for (const tree of r % 2 === 0 ? trees : [...trees].reverse()) {
      round[tree.name] = await measureInChild(fileURLToPath(import.meta.url), tree, ['--contributions', file, ...(args['heap-snapshot'] && r === 0 ? ['--heap-snapshot', args['heap-snapshot']] : [])])
      log(`round ${r + 1} ${tree.name} (${tree.commit}): ${JSON.stringify(round[tree.name])}`)
    }
    rounds.push(round)
  }
  await rm(dir, { recursive: true, force: true })
  const results = Object.fromEntries(trees.map((t) => [t.name, medianOf(rounds.map((round) => round[t.name]!))]))
  const perChunk = (tree: string, at: string) => (results[tree]![at] as { heap_bytes_per_chunk: number }).heap_bytes_per_chunk
  const report = {
    generated_by: 'bench/graph-memory.ts', at: new Date().toISOString(), chunks, documents: lines.length,
    trees: Object.fromEntries(trees.map((t) => [t.name, { dir: t.dir, commit: t.commit }])),
    load_average_at_start: startedLoad, load_average_at_end: loadavg().map((x) => round(x)),
    results, ...(rounds.length > 1 ? { rounds } : {}),
    ...(results['base'] ? {
      same_answers: rounds.every((round) => round['this']!['answers_digest'] === round['base']!['answers_digest']),
      this_over_base_cpu: Object.fromEntries(['write_cpu_seconds', 'open_from_disk_cpu_seconds', 'read_cpu_seconds'].map((k) => [k, round((results['this']![k] as number) / (results['base']![k] as number), 3)])),
      this_over_base_heap: Object.fromEntries(['after_ingest', 'after_restart', 'after_reads'].map((at) => [at, round(perChunk('this', at) / perChunk('base', at), 3)]))
    } : {})
  }
  const text = JSON.stringify(report, null, 2)
  console.log(text)
  if (args.out) await writeFile(args.out, `${text}\n`)
}

async function worker(treeDir: string, contributions: string): Promise<void> {
  const tree = loadTree('tree', treeDir)
  const { EmbeddedKnowledgeGraphStore } = await tree.module('src/providers/knowledge-graph/embedded.ts')
  const gc = (globalThis as { gc?: () => void }).gc!
  // a turn of the event loop first: what a read kept weakly (`WeakRef`) is collectable only after the task that read it
  const held = async () => {
    await new Promise((turn) => setImmediate(turn))
    gc(); gc()
    const m = process.memoryUsage()
    return { heap: m.heapUsed + m.external, rss: m.rss }
  }
  const dir = await mkdtemp(join(tmpdir(), 'recall-graph-memory-store-'))
  let store = new EmbeddedKnowledgeGraphStore({ dir })
  await store.init()
  const base = await held()
  let chunks = 0
  const docIds: string[] = []
  const cpuSeconds = (since: NodeJS.CpuUsage) => {
    const used = process.cpuUsage(since)
    return round((used.user + used.system) / 1e6, 2)
  }
  let writeCpu = 0
  let batch: Array<[string, unknown]> = []
  for await (const line of createInterface({ input: createReadStream(contributions) })) {
    if (!line) continue
    const [id, contribution, chunkCount] = JSON.parse(line) as [string, unknown, number]
    docIds.push(id)
    chunks += chunkCount
    batch.push([id, contribution])
    if (batch.length === BATCH) {
      const cpu = process.cpuUsage()
      await store.replaceDerived(NAMESPACE, new Map(batch))
      writeCpu += cpuSeconds(cpu)
      batch = []
    }
  }
  const cpu = process.cpuUsage()
  if (batch.length > 0) await store.replaceDerived(NAMESPACE, new Map(batch))
  await store.close()
  writeCpu += cpuSeconds(cpu)
  const at = (m: Awaited<ReturnType<typeof held>>) => ({ heap_mib: round((m.heap - base.heap) / MiB), rss_mib: round(m.rss / MiB), heap_bytes_per_chunk: Math.round((m.heap - base.heap) / chunks) })
  const afterIngest = at(await held())
  store = new EmbeddedKnowledgeGraphStore({ dir })
  const t0 = performance.now()
  const openCpu = process.cpuUsage()
  await store.init()
  const openSeconds = round((performance.now() - t0) / 1000, 2)
  const openCpuSeconds = cpuSeconds(openCpu)
  const afterRestart = at(await held())
  if (args['heap-snapshot']) {
    const name = join(args['heap-snapshot'], `${args.name}.heapsnapshot`)
    writeHeapSnapshot(name)
    await writeFile(join(args['heap-snapshot'], `${args.name}.summary.json`), `${JSON.stringify(summarise(name), null, 2)}\n`)
  }
  // every answer, hashed: the same bytes in both trees, or the cut changed an answer
  const digest = createHash('sha256')
  const add = (label: string, value: unknown) => digest.update(`${label}\u0000${JSON.stringify(value)}\n`)
  const readCpu = process.cpuUsage()
  const names = await store.names(NAMESPACE) as Array<{ id: string; name: string }>
  add('names', names)
  add('count', await store.count(NAMESPACE))
  for (const { id } of names) add(id, await store.neighbourhood(NAMESPACE, [id]))
  let readCpuSeconds = cpuSeconds(readCpu)
  const afterReads = at(await held())
  const cutCpu = process.cpuUsage()
  for (let i = 0; i < names.length; i += 3) add(`cut ${i}`, await store.neighbourhood(NAMESPACE, [names[i]!.id], undefined, { maxNeighbours: 5 }))
  readCpuSeconds += cpuSeconds(cutCpu)
  for (let i = 0; i < docIds.length; i += 7) add(`of ${i}`, await store.derivedOf(NAMESPACE, docIds.slice(i, i + 7)))
  add('get', await store.getEntities(NAMESPACE, names.filter((_, i) => i % 3 === 0).map((n) => n.id)))
  const searchTokens = names.filter((_, i) => i % 97 === 0).map((n) => analyze(n.name))
  const searchCpu = process.cpuUsage()
  for (const [i, tokens] of searchTokens.entries()) {
    add(`kw ${i * 97}`, await store.searchKeywords(NAMESPACE, tokens, 10))
    add(`kw typed ${i * 97}`, await store.searchKeywords(NAMESPACE, tokens, 10, { types: ['term', 'person', 'organization'] }))
  }
  readCpuSeconds += cpuSeconds(searchCpu)
  await store.close()
  await rm(dir, { recursive: true, force: true })
  process.send!({
    chunks, documents: docIds.length, entities: names.length,
    write_cpu_seconds: round(writeCpu, 2), open_from_disk_seconds: openSeconds, open_from_disk_cpu_seconds: openCpuSeconds, read_cpu_seconds: round(readCpuSeconds, 2), after_ingest: afterIngest, after_restart: afterRestart, after_reads: afterReads,
    answers_digest: digest.digest('hex')
  }, () => process.exit(0))
}

/** Each figure's median over rounds (numbers, and the numbers of nested objects); other values from the first round. */
function medianOf(results: Array<Record<string, unknown>>): Record<string, unknown> {
  const first = results[0]!
  return Object.fromEntries(Object.entries(first).map(([key, value]) => {
    if (typeof value === 'number') {
      const sorted = results.map((r) => r[key] as number).sort((a, b) => a - b)
      const mid = sorted.length >> 1
      return [key, sorted.length % 2 ? sorted[mid]! : round((sorted[mid - 1]! + sorted[mid]!) / 2, 2)]
    }
    if (value && typeof value === 'object' && !Array.isArray(value)) return [key, medianOf(results.map((r) => r[key] as Record<string, unknown>))]
    return [key, value]
  }))
}

/** Self size and count per node kind (type and constructor name) of a heap snapshot, the kinds over 0.5% of it. */
function summarise(file: string): Array<{ kind: string; count: number; self_mib: number; share: number }> {
  const snapshot = JSON.parse(readFileSync(file, 'utf8')) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[]] } }; nodes: number[]; strings: string[]
  }
  const fields = snapshot.snapshot.meta.node_fields
  const width = fields.length
  const [typeAt, nameAt, sizeAt] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f))
  const types = snapshot.snapshot.meta.node_types[0]
  const kinds = new Map<string, { count: number; size: number }>()
  let total = 0
  for (let i = 0; i < snapshot.nodes.length; i += width) {
    const type = types[snapshot.nodes[i + typeAt!]!]!
    const name = type === 'object' || type === 'closure' || type === 'hidden' || type === 'array' ? snapshot.strings[snapshot.nodes[i + nameAt!]!]! : ''
    const kind = `${type}${name ? ` ${name.slice(0, 60)}` : ''}`
    const size = snapshot.nodes[i + sizeAt!]!
    total += size
    const k = kinds.get(kind) ?? { count: 0, size: 0 }
    k.count++
    k.size += size
    kinds.set(kind, k)
  }
  return [...kinds].filter(([, k]) => k.size > total * 0.005).sort(([, a], [, b]) => b.size - a.size)
    .map(([kind, k]) => ({ kind, count: k.count, self_mib: round(k.size / MiB), share: round(k.size / total, 3) }))
}

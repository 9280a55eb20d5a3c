/**
 * The embedded episodic graph's own memory per chunk with derived Episodes (issue 44, item 1), this tree beside another
 * (`--base DIR`) in one run: documents shaped as `bench/memory.ts` makes them (8 sections of CMRC sentence windows, the
 * real chunker), their Episodes derived once here with this tree's `deriveEpisodes` (the default options; `--links 4,8`
 * links derived entities as `DERIVED_EPISODE_ENTITY_LINKS` does) and written to a file; then each tree, in a process of
 * its own, applies them (50 documents a change, as the write path) to an on-disk store, and reports heap (after two
 * full collections, less the empty store's) and resident memory:
 *   - after the ingest; after closing and opening the store again (replay from snapshot and log);
 *   - after every read below (a store may keep what a read built);
 * the CPU time of the writes and of the reopen (the process's, fold threads included), and a digest of every answer the
 * store gives (`describe` of every node, `project` from each Episode's facets, `nodeTypes`, `facetLabelEpisodes`,
 * `episodesInTimeRange`, `countByType` (its counts, not the order of its keys, which the port does not promise),
 * `namespaces`, and what deleting a tenth of the documents' Episodes answers), which must be the same in both trees.
 *
 * With `--rounds N` the trees run N times, in turns (this, base; then base, this; …), and the CPU ratios are of the
 * rounds' sums (the heap and the digest are the first round's).
 *
 *   node --expose-gc --import tsx bench/episode-memory.ts --chunks 20000 [--base DIR] [--rounds N] [--links 4,8] [--heap-snapshot DIR] [--out FILE]
 */
import { createHash } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { writeHeapSnapshot } from 'node:v8'
import { chunkDocument } from '../src/corpus/documents/chunking.js'
import { deriveDocument } from '../src/derive/document.js'
import { DEFAULT_EPISODE_OPTIONS, deriveEpisodes } from '../src/derive/episodes.js'
import { derivationOptions } from '../src/derive/options.js'
import { passageText } from '../src/kernel/lexical-text.js'
import { loadCmrc } from './lib/cmrc.js'
import { sectionedDocuments, syntheticDocuments } from './lib/synthetic.js'
import { loadTree, measureInChild, type Tree } from './lib/tree.js'

const { values: args } = parseArgs({
  options: {
    chunks: { type: 'string', default: '20000' }, base: { type: 'string' }, out: { type: 'string' }, links: { type: 'string', default: '0,0' },
    rounds: { type: 'string', default: '1' },
    'heap-snapshot': { type: 'string' }, worker: { type: 'string' }, name: { type: 'string' }, changes: { type: 'string' }
  }
})
const MiB = 2 ** 20
const NAMESPACE = 'bench'
const BATCH = 50
const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d
const log = (line: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`)

if (args.worker) await worker(args.worker, args.changes!)
else await main()

async function main(): Promise<void> {
  const target = Number(args.chunks)
  const [perFacet, perEpisode] = args.links!.split(',').map(Number) as [number, number]
  const episodeOptions = { ...DEFAULT_EPISODE_OPTIONS, entitiesPerFacet: perFacet, entitiesPerEpisode: perEpisode }
  const startedLoad = loadavg().map((x) => round(x))
  const cmrc = (await loadCmrc()).documents.map((d) => d.text)
  const passages = syntheticDocuments(cmrc, Math.ceil(target * 1.1), 7).map((d) => d.text)
  const options = derivationOptions()
  const dir = await mkdtemp(join(tmpdir(), 'recall-episode-memory-'))
  const file = join(dir, 'changes.jsonl')
  const lines: string[] = []
  let chunks = 0
  let documents = 0
  let batch: { entities: Map<string, unknown>; episodes: unknown[]; chunks: number } = { entities: new Map(), episodes: [], chunks: 0 }
  const flush = () => {
    lines.push(JSON.stringify([{ entities: [...batch.entities.values()], episodes: batch.episodes }, batch.chunks]))
    batch = { entities: new Map(), episodes: [], chunks: 0 }
  }
  for (const document of sectionedDocuments(passages, 8)) {
    if (chunks >= target) break
    const id = document.id
    const records = chunkDocument(document)
    const episodeChunks = records.map((c) => ({
      id: c.id, chunk_index: c.chunk_index, text: c.text, passage: passageText(c),
      ...(c.title ? { title: c.title } : {}), ...(c.heading_path ? { heading_path: c.heading_path } : {})
    }))
    const derived = deriveEpisodes(id, episodeChunks, deriveDocument(records, options).entities, episodeOptions)
    for (const e of derived.entities) batch.entities.set(e.id, e)
    batch.episodes.push(...derived.episodes)
    batch.chunks += records.length
    chunks += records.length
    documents += 1
    if (documents % BATCH === 0) flush()
  }
  if (batch.episodes.length > 0) flush()
  await writeFile(file, `${lines.join('\n')}\n`)
  log(`derived the Episodes of ${documents} documents, ${chunks} chunks, ${lines.length} changes`)
  const trees: Tree[] = [loadTree('this', '.'), ...(args.base ? [loadTree('base', args.base)] : [])]
  const results: Record<string, Record<string, unknown>> = {}
  const cpu: Record<string, { write: number[]; open: number[] }> = Object.fromEntries(trees.map((t) => [t.name, { write: [], open: [] }]))
  // one tree after the other: the two processes' heaps never compete for the machine's memory at once
  for (let round = 0; round < Number(args.rounds); round++) for (const tree of round % 2 === 0 ? trees : [...trees].reverse()) {
    const result = await measureInChild(fileURLToPath(import.meta.url), tree, ['--changes', file, ...(args['heap-snapshot'] ? ['--heap-snapshot', args['heap-snapshot']] : [])])
    results[tree.name] ??= result
    cpu[tree.name]!.write.push(result['write_cpu_seconds'] as number)
    cpu[tree.name]!.open.push(result['open_from_disk_cpu_seconds'] as number)
    log(`round ${round + 1}, ${tree.name} (${tree.commit}, load ${loadavg()[0]!.toFixed(1)}): ${JSON.stringify(result)}`)
  }
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0)
  await rm(dir, { recursive: true, force: true })
  const perChunk = (tree: string, at: string) => (results[tree]![at] as { heap_bytes_per_chunk: number }).heap_bytes_per_chunk
  const report = {
    generated_by: 'bench/episode-memory.ts', at: new Date().toISOString(), chunks, documents, entity_links: args.links,
    trees: Object.fromEntries(trees.map((t) => [t.name, { dir: t.dir, commit: t.commit }])),
    load_average_at_start: startedLoad, load_average_at_end: loadavg().map((x) => round(x)),
    results, cpu_seconds_by_round: cpu,
    ...(results['base'] ? {
      same_answers: results['this']!['answers_digest'] === results['base']['answers_digest'],
      this_over_base_cpu: { write: round(sum(cpu['this']!.write) / sum(cpu['base']!.write), 3), open_from_disk: round(sum(cpu['this']!.open) / sum(cpu['base']!.open), 3) },
      this_over_base_heap: Object.fromEntries(['after_ingest', 'after_restart', 'after_reads'].map((at) => [at, round(perChunk('this', at) / perChunk('base', at), 3)]))
    } : {})
  }
  const text = JSON.stringify(report, null, 2)
  console.log(text)
  if (args.out) await writeFile(args.out, `${text}\n`)
}

interface Change { entities: Array<{ id: string }>; episodes: Array<{ episode: { id: string; derived_doc: string }; nodes: Array<{ id: string; type: string; search_text?: string }> }> }

async function worker(treeDir: string, changes: string): Promise<void> {
  const tree = loadTree('tree', treeDir)
  const { EmbeddedEpisodicGraphStore } = await tree.module('src/providers/episodic-graph/embedded.ts')
  const gc = (globalThis as { gc?: () => void }).gc!
  // a turn of the event loop first: what a read kept weakly (`WeakRef`) is collectable only after the task that read it
  const held = async () => {
    await new Promise((turn) => setImmediate(turn))
    gc(); gc()
    const m = process.memoryUsage()
    return { heap: m.heapUsed + m.external, rss: m.rss }
  }
  const dir = await mkdtemp(join(tmpdir(), 'recall-episode-memory-store-'))
  const file = join(dir, 'episodic-graph.json')
  let store = new EmbeddedEpisodicGraphStore({ file })
  await store.namespaces()
  const base = await held()
  let chunks = 0
  const episodeIds: string[] = []
  const nodeIds: string[] = []
  const labels = new Set<string>()
  const entityIds: string[] = []
  const cpuSeconds = (since: NodeJS.CpuUsage) => {
    const used = process.cpuUsage(since)
    return (used.user + used.system) / 1e6
  }
  let writeCpu = 0
  for await (const line of createInterface({ input: createReadStream(changes) })) {
    if (!line) continue
    const [change, chunkCount] = JSON.parse(line) as [Change, number]
    chunks += chunkCount
    for (const g of change.episodes) {
      episodeIds.push(g.episode.id)
      for (const n of g.nodes) {
        nodeIds.push(n.id)
        if (n.type === 'Facet' && n.search_text) labels.add(n.search_text)
      }
    }
    for (const e of change.entities) entityIds.push(e.id)
    const cpu = process.cpuUsage()
    await store.apply(NAMESPACE, change)
    writeCpu += cpuSeconds(cpu)
  }
  const cpu = process.cpuUsage()
  await store.close()
  writeCpu += cpuSeconds(cpu)
  const at = (m: Awaited<ReturnType<typeof held>>) => ({ heap_mib: round((m.heap - base.heap) / MiB), rss_mib: round(m.rss / MiB), heap_bytes_per_chunk: Math.round((m.heap - base.heap) / chunks) })
  const afterIngest = at(await held())
  store = new EmbeddedEpisodicGraphStore({ file })
  const t0 = performance.now()
  const openCpu = process.cpuUsage()
  await store.namespaces()
  const openSeconds = round((performance.now() - t0) / 1000, 2)
  const openCpuSeconds = round(cpuSeconds(openCpu), 2)
  const afterRestart = at(await held())
  if (args['heap-snapshot']) log(`heap snapshot: ${writeHeapSnapshot(join(args['heap-snapshot'], `${args.name}.heapsnapshot`))}`)
  // every answer, hashed: the same bytes in both trees, or the change changed an answer
  const digest = createHash('sha256')
  const fragment = (f: { nodes: Map<string, unknown>; edges: unknown[] }) => ({ nodes: [...f.nodes], edges: f.edges })
  const add = (label: string, value: unknown) => digest.update(`${label}\u0000${JSON.stringify(value)}\n`)
  add('namespaces', await store.namespaces())
  const counts = async () => Object.entries(await store.countByType(NAMESPACE)).sort(([a], [b]) => (a < b ? -1 : 1))
  add('count', await counts())
  for (let i = 0; i < episodeIds.length; i++) add(`describe ${i}`, fragment(await store.describe(NAMESPACE, [episodeIds[i]!])))
  for (let i = 0; i < nodeIds.length; i += 5) add(`describe node ${i}`, fragment(await store.describe(NAMESPACE, nodeIds.slice(i, i + 5))))
  for (let i = 0; i < entityIds.length; i += 3) add(`describe entity ${i}`, fragment(await store.describe(NAMESPACE, entityIds.slice(i, i + 3))))
  for (let i = 0; i < episodeIds.length; i += 11) {
    const relevant = nodeIds.filter((id) => id.startsWith(`${episodeIds[i]}/`)).slice(0, 6)
    const best = new Map(relevant.map((id, k) => [id, 0.1 * k] as const))
    add(`project ${i}`, fragment(await store.project(NAMESPACE, { relevant_ids: relevant, best_by_id: best, max_ids: 12, episode_hit_ids: [episodeIds[i]!, episodeIds[(i + 1) % episodeIds.length]!] })))
    add(`project labels ${i}`, fragment(await store.project(NAMESPACE, { relevant_ids: relevant, best_by_id: best, max_ids: 12, episode_hit_ids: [], retrieved_labels: new Set(['has_point']) })))
  }
  add('types', [...await store.nodeTypes(NAMESPACE, [...nodeIds.filter((_, i) => i % 7 === 0), ...episodeIds, ...entityIds, 'nope'])])
  add('labels', [...await store.facetLabelEpisodes(NAMESPACE, [...labels, 'nope'])])
  add('time', await store.episodesInTimeRange(NAMESPACE, { start_ms: 0, end_ms: Date.UTC(2100, 0) }))
  const afterReads = at(await held())
  const gone = episodeIds.filter((_, i) => i % 10 === 0)
  add('delete', await store.apply(NAMESPACE, { deleteEpisodeIds: gone }))
  add('count after delete', await counts())
  add('describe after delete', fragment(await store.describe(NAMESPACE, gone.slice(0, 50))))
  await store.close()
  await rm(dir, { recursive: true, force: true })
  process.send!({
    chunks, episodes: episodeIds.length, nodes: nodeIds.length, entities: entityIds.length,
    write_cpu_seconds: round(writeCpu, 2), open_from_disk_seconds: openSeconds, open_from_disk_cpu_seconds: openCpuSeconds,
    after_ingest: afterIngest, after_restart: afterRestart, after_reads: afterReads,
    answers_digest: digest.digest('hex')
  }, () => process.exit(0))
}

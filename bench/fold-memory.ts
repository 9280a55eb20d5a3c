/**
 * What an embedded graph's fold costs as a namespace grows, and what a write waits for while one runs (issue 44,
 * item 2): this tree beside another (`--base DIR`), in one run.
 *
 * For each size (chunks) and graph, the namespace is written once here with this tree's store (`knowledge-graph`: N
 * one-chunk synthetic CMRC documents, their contributions written with `replaceDerived` 100 documents a call, as
 * `bench/kg-derived-write.ts` writes them; `episodic-graph`: documents of 8 sections, their derived Episodes applied 50
 * documents a change, as `bench/episode-memory.ts` does): the first half folded into a snapshot, the second half left
 * in the log, as a store holds them when its log has outgrown its snapshot; then the log is set aside for a fold
 * (`beginCompaction`, timed: the step a write queue runs). Then each tree, in a process of its own, in turns:
 *
 * - **fold alone**: a copy of the files folded by the tree's own fold-thread entry in a worker thread of this
 *   process, under the heap limits the tree's store gives it (`foldThreadLimits`, when the tree has them; a thread that
 *   runs out of it is run again without, as the store does, and the row says so): wall time, the thread's CPU (`worker.cpuUsage()`), its peak heap used and committed
 *   (`worker.getHeapStatistics()` every 5 ms), the process's resident growth, and the written snapshot's SHA-256
 *   (the same in both trees, or the fold changed what it writes);
 * - **writes during a fold**: the tree's store opened on another copy (it finds the fold set aside and runs it in its
 *   thread at once), then 20 batches written one after another while it runs and 20 after it ended (`knowledge-graph`:
 *   further batches of 100 documents; `episodic-graph`: the first 40 changes again, 50 documents' Episodes each),
 *   each write's wall time and the main thread's CPU for it (`process.threadCpuUsage`):
 *   what a write waits for while a fold runs.
 *
 *   npx tsx bench/fold-memory.ts [--chunks 5000,10000,20000,30000] [--graphs knowledge-graph,episodic-graph]
 *     [--base DIR] [--rounds 1] [--log-chunks N] [--out FILE]
 *
 * `--log-chunks N` leaves only the last N chunks in the log (a fold due by the knowledge graph's `foldLogBytes` with a
 * larger snapshot: the case where what a fold holds must not grow with the namespace).
 */
import { createHash } from 'node:crypto'
import { fork } from 'node:child_process'
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { chunkDocument } from '../src/corpus/documents/chunking.js'
import { deriveDocument } from '../src/derive/document.js'
import { DEFAULT_EPISODE_OPTIONS, deriveEpisodes } from '../src/derive/episodes.js'
import { derivationOptions } from '../src/derive/options.js'
import { passageText } from '../src/kernel/lexical-text.js'
import { DurableLog } from '../src/providers/embedded/durable-log.js'
import { foldThreadLimits } from '../src/providers/embedded/fold-client.js'
import { foldEpisodicGraph, EmbeddedEpisodicGraphStore } from '../src/providers/episodic-graph/embedded.js'
import { EmbeddedKnowledgeGraphStore, FOLD_SHARE_BYTES, FOLD_WHOLE_MAX_BYTES, foldKnowledgeGraph } from '../src/providers/knowledge-graph/embedded.js'
import { loadCmrc } from './lib/cmrc.js'
import { runFoldThread } from './lib/fold-thread-run.js'
import { sectionedDocuments, syntheticDocuments } from './lib/synthetic.js'
import { loadTree } from './lib/tree.js'

const { values: args } = parseArgs({
  options: {
    chunks: { type: 'string', default: '5000,10000,20000,30000' }, graphs: { type: 'string', default: 'knowledge-graph,episodic-graph' },
    base: { type: 'string' }, rounds: { type: 'string', default: '1' }, out: { type: 'string' }, 'log-chunks': { type: 'string' },
    worker: { type: 'string' }, name: { type: 'string' }, task: { type: 'string' }
  }
})
const MiB = 2 ** 20
const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d
const load = () => round(loadavg()[0]!)
const log = (line: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`)
const quantile = (xs: readonly number[], q: number) => [...xs].sort((a, b) => a - b)[Math.max(0, Math.ceil(q * xs.length) - 1)]!
const spread = (xs: readonly number[]) => xs.length === 0 ? undefined : { n: xs.length, p50: round(quantile(xs, 0.5)), p99: round(quantile(xs, 0.99)), max: round(Math.max(...xs)) }
const WRITES = 20
const GRAPHS = {
  // `blocks`: this tree's store folds it a block at a time (its fold thread's heap limit is sized from the log)
  'knowledge-graph': { entry: 'src/providers/knowledge-graph/fold-thread.ts', identity: { kind: 'knowledge-graph', format: 2, reads: [1] }, name: 'knowledge-graph', blocks: true },
  'episodic-graph': { entry: 'src/providers/episodic-graph/fold-thread.ts', identity: { kind: 'episodic-graph', format: 1 }, name: 'episodic-graph', blocks: true }
} as const
type Graph = keyof typeof GRAPHS

interface Prepared { graph: Graph; chunks: number; dir: string; seq: number; begin_ms: number; snapshot_bytes: number; fold_log_bytes: number; extra: string }

if (args.worker) await worker(args.worker, JSON.parse(await readFile(args.task!, 'utf8')) as Prepared)
else await main()

async function main(): Promise<void> {
  const sizes = args.chunks!.split(',').map(Number)
  const graphs = args.graphs!.split(',') as Graph[]
  const startedLoad = loadavg().map((x) => round(x))
  const trees = [loadTree('this', '.'), ...(args.base ? [loadTree('base', args.base)] : [])]
  const work = await mkdtemp(join(tmpdir(), 'recall-fold-memory-'))
  const cmrc = (await loadCmrc()).documents.map((d) => d.text)
  const rows: Array<Record<string, unknown>> = []
  try {
    for (const graph of graphs) {
      const batches = graph === 'knowledge-graph' ? kgBatches(cmrc, Math.max(...sizes) + WRITES * 2 * 100) : episodeBatches(cmrc, Math.max(...sizes))
      for (const chunks of sizes) {
        const prepared = await prepare(graph, chunks, batches, work)
        log(`${graph} ${chunks}: snapshot ${round(prepared.snapshot_bytes / MiB)} MiB, fold log ${round(prepared.fold_log_bytes / MiB)} MiB, set aside in ${prepared.begin_ms} ms`)
        const taskFile = join(work, `task-${graph}-${chunks}.json`)
        await writeFile(taskFile, JSON.stringify(prepared))
        const results: Record<string, Array<Record<string, unknown>>> = {}
        for (let r = 0; r < Number(args.rounds); r++) for (const tree of r % 2 === 0 ? trees : [...trees].reverse()) {
          const result = await child(tree.dir, tree.name, taskFile)
          ;(results[tree.name] ??= []).push({ ...result, load: load() })
          log(`${graph} ${chunks} ${tree.name}: ${JSON.stringify(result)}`)
        }
        rows.push({ graph, chunks, snapshot_bytes: prepared.snapshot_bytes, fold_log_bytes: prepared.fold_log_bytes, begin_compaction_ms: prepared.begin_ms, results })
        await rm(prepared.dir, { recursive: true, force: true })
      }
    }
  } finally {
    await rm(work, { recursive: true, force: true })
  }
  const report = {
    generated_by: 'bench/fold-memory.ts', at: new Date().toISOString(), argv: process.argv.slice(2),
    trees: Object.fromEntries(trees.map((t) => [t.name, { dir: t.dir, commit: t.commit }])),
    load_average_at_start: startedLoad, load_average_at_end: loadavg().map((x) => round(x)), rows
  }
  const text = JSON.stringify(report, null, 2)
  console.log(text)
  if (args.out) await writeFile(args.out, `${text}\n`)
}

/** Batches of 100 one-chunk documents' contributions, as JSON lines (`[[doc, contribution], …]`). */
function kgBatches(cmrc: string[], documents: number): string[] {
  const options = derivationOptions()
  const docs = syntheticDocuments(cmrc, documents)
  const out: string[] = []
  for (let i = 0; i < docs.length; i += 100) {
    out.push(JSON.stringify(docs.slice(i, i + 100).map((d) => [d.id, deriveDocument([{ id: `${d.id}#0`, text: d.text }], options)])))
  }
  log(`derived ${docs.length} documents' contributions`)
  return out
}

/** Changes of 50 documents' derived Episodes until `chunks`, each line `[change, chunks]`. */
function episodeBatches(cmrc: string[], chunks: number): string[] {
  const options = derivationOptions()
  const passages = syntheticDocuments(cmrc, Math.ceil(chunks * 1.1), 7).map((d) => d.text)
  const out: string[] = []
  let batch: { entities: Map<string, unknown>; episodes: unknown[]; chunks: number } = { entities: new Map(), episodes: [], chunks: 0 }
  const flush = () => {
    out.push(JSON.stringify([{ entities: [...batch.entities.values()], episodes: batch.episodes }, batch.chunks]))
    batch = { entities: new Map(), episodes: [], chunks: 0 }
  }
  let total = 0
  let documents = 0
  for (const document of sectionedDocuments(passages, 8)) {
    if (total >= chunks) break
    const records = chunkDocument(document)
    const episodeChunks = records.map((c) => ({
      id: c.id, chunk_index: c.chunk_index, text: c.text, passage: passageText(c),
      ...(c.title ? { title: c.title } : {}), ...(c.heading_path ? { heading_path: c.heading_path } : {})
    }))
    const derived = deriveEpisodes(document.id, episodeChunks, deriveDocument(records, options).entities, DEFAULT_EPISODE_OPTIONS)
    for (const e of derived.entities) batch.entities.set(e.id, e)
    batch.episodes.push(...derived.episodes)
    batch.chunks += records.length
    total += records.length
    if (++documents % 50 === 0) flush()
  }
  if (batch.episodes.length > 0) flush()
  log(`derived the Episodes of ${documents} documents, ${total} chunks`)
  return out
}

/** The namespace's files at `chunks`: half folded into the snapshot, half in a log set aside for a fold. */
async function prepare(graph: Graph, chunks: number, batches: string[], work: string): Promise<Prepared> {
  const dir = await mkdtemp(join(work, `${graph}-${chunks}-`))
  const { identity, name } = GRAPHS[graph]
  let written = 0
  let at = 0
  const writeUntil = async (limit: number) => {
    if (graph === 'knowledge-graph') {
      const store = new EmbeddedKnowledgeGraphStore({ dir, compactionFloorBytes: 1e12 })
      for (; written < limit; at++, written += 100) await store.replaceDerived('default', new Map(JSON.parse(batches[at]!) as never))
      await store.close()
    } else {
      const store = new EmbeddedEpisodicGraphStore({ file: join(dir, 'episodic-graph.json'), compactionFloorBytes: 1e12 })
      for (; written < limit && at < batches.length; at++) {
        const [change, count] = JSON.parse(batches[at]!) as [never, number]
        await store.apply('default', change)
        written += count
      }
      await store.close()
    }
  }
  const fold = graph === 'knowledge-graph' ? foldKnowledgeGraph : foldEpisodicGraph
  // the log's share: half by default (a log that has just outgrown its snapshot), or the last `--log-chunks`
  await writeUntil(args['log-chunks'] ? chunks - Number(args['log-chunks']) : chunks / 2)
  const opened = await DurableLog.open({ backend: 'bench', ...identity, dir, name })
  await opened.log.compact(fold(opened.snapshot, opened.records))
  await writeUntil(chunks)
  const { log: durable } = await DurableLog.open({ backend: 'bench', ...identity, dir, name })
  const t0 = performance.now()
  const pending = (await durable.beginCompaction())!
  const beginMs = round(performance.now() - t0, 2)
  const size = async (file: string) => (await readFile(file)).length
  const extra = join(work, `extra-${graph}-${chunks}.jsonl`)
  // the knowledge graph's: further documents; the episodic graph's: the first documents' Episodes derived again
  await writeFile(extra, (graph === 'knowledge-graph' ? batches.slice(at, at + WRITES * 2) : batches.slice(0, WRITES * 2)).join('\n'))
  return { graph, chunks: written, dir, seq: pending.seq, begin_ms: beginMs, snapshot_bytes: await size(pending.snapshotFile), fold_log_bytes: await size(pending.foldFile), extra }
}

function child(treeDir: string, name: string, taskFile: string): Promise<Record<string, unknown>> {
  const script = fileURLToPath(import.meta.url)
  const proc = fork(script, ['--worker', treeDir, '--name', name, '--task', taskFile], { execArgv: ['--expose-gc', '--max-old-space-size=8192', '--import', 'tsx'] })
  return new Promise((done, fail) => {
    proc.once('message', (m) => done(m as Record<string, unknown>))
    proc.once('exit', (code) => code !== 0 && fail(new Error(`${name} exited ${code}`)))
  })
}

async function worker(treeDir: string, task: Prepared): Promise<void> {
  const tree = loadTree(args.name!, treeDir)
  const { identity, name, entry } = GRAPHS[task.graph]
  const copy = async () => {
    const dir = await mkdtemp(join(tmpdir(), 'recall-fold-copy-'))
    await cp(task.dir, dir, { recursive: true })
    return dir
  }
  // fold alone, in a thread started on the tree's own entry
  const dir = await copy()
  const fold = { snapshotFile: join(dir, `${name}.snap`), foldFile: join(dir, `${name}.fold.log`), seq: task.seq }
  const execArgv = ['--import', pathToFileURL(createRequire(join(treeDir, 'package.json')).resolve('tsx')).href]
  // the heap limits the tree's store gives its fold thread (`foldThreadLimits`), if it gives any
  const client = await tree.module('src/providers/embedded/fold-client.ts')
  const limitsOf = (args.name === 'this' ? foldThreadLimits : client['foldThreadLimits']) as typeof foldThreadLimits | undefined
  // (and the most of the log the knowledge graph's fold holds at once, and folds whole, as its store passes them; an older tree ignores them)
  const kg = task.graph === 'knowledge-graph'
  const limited = limitsOf ? await limitsOf(fold, GRAPHS[task.graph].blocks, kg ? FOLD_SHARE_BYTES : undefined, kg ? FOLD_WHOLE_MAX_BYTES : undefined) : undefined
  const heapMb = limited?.heapMb
  const resourceLimits = limited?.resourceLimits
  ;(globalThis as { gc?: () => void }).gc?.()
  const { file, ranOutOfHeap: outOfMemory, wallMs, cpuMs, peak } = await runFoldThread(pathToFileURL(join(tree.dir, entry)), { ...identity, backend: 'bench', fold }, execArgv, resourceLimits)
  const bytes = await readFile(file)
  const result: Record<string, unknown> = {
    commit: tree.commit, fold_heap_limit_mib: heapMb ?? null, fold_young_limit_mib: resourceLimits?.maxYoungGenerationSizeMb ?? null, fold_ran_out_of_heap: outOfMemory,
    fold_wall_ms: round(wallMs), fold_thread_cpu_ms: round(cpuMs),
    fold_peak_heap_used_mib: round(peak.used / MiB), fold_peak_heap_committed_mib: round(peak.committed / MiB),
    fold_peak_external_mib: round(peak.external / MiB), process_rss_growth_mib: round(peak.rss / MiB),
    snapshot_written_bytes: bytes.length, snapshot_sha256: createHash('sha256').update(bytes).digest('hex')
  }
  await rm(dir, { recursive: true, force: true })

  {
    // writes while the store's own fold runs (it starts it at open), then as many after it ended
    const storeDir = await copy()
    const kg = task.graph === 'knowledge-graph'
    const { [kg ? 'EmbeddedKnowledgeGraphStore' : 'EmbeddedEpisodicGraphStore']: Store } =
      await tree.module(`src/providers/${task.graph}/embedded.ts`)
    // no further fold: the writes after this one ended are the same writes with none running
    const store = new Store(kg ? { dir: storeDir, compactionFloorBytes: 1e12 } : { file: join(storeDir, 'episodic-graph.json'), compactionFloorBytes: 1e12 })
    const t1 = performance.now()
    await (kg ? store.init() : store.namespaces())
    result['open_ms'] = round(performance.now() - t1)
    const compaction = store.compaction as { idle: boolean; settled(): Promise<void> }
    const write = (line: string): Promise<unknown> => kg
      ? store.replaceDerived('default', new Map(JSON.parse(line) as never))
      : store.apply('default', (JSON.parse(line) as [unknown])[0])
    const lines = (await readFile(task.extra, 'utf8')).split('\n')
    const during: number[] = []
    const duringCpu: number[] = []
    const after: number[] = []
    const afterCpu: number[] = []
    for (const [i, line] of lines.entries()) {
      if (i === WRITES) await compaction.settled()
      const folding = !compaction.idle
      const cpu0 = process.threadCpuUsage()
      const w0 = performance.now()
      await write(line)
      const ms = performance.now() - w0
      const used = process.threadCpuUsage(cpu0)
      ;(folding ? during : after).push(ms)
      ;(folding ? duringCpu : afterCpu).push((used.user + used.system) / 1000)
    }
    await store.close()
    result['write_ms_during_fold'] = spread(during)
    result['write_main_cpu_ms_during_fold'] = spread(duringCpu)
    result['write_ms_no_fold'] = spread(after)
    result['write_main_cpu_ms_no_fold'] = spread(afterCpu)
    await rm(storeDir, { recursive: true, force: true })
  }
  process.send!(result, () => process.exit(0))
}

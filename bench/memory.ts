/**
 * Memory per chunk on the embedded default with derivation on (issue 44, item 1): ingests `--chunks` chunks (default
 * 100,000) through the one write path (the real chunker, the real derivation of graph and Episodes), with stand-in
 * passage vectors drawn from the real model's distribution (per-dimension mean and spread of bge-small-zh-v1.5 over
 * CMRC passages, then normalised), and reports:
 *   - resident memory, heap and off-heap (typed arrays) at every checkpoint, with each write's own time, the time it
 *     waited behind compaction steps on the stores' queues (`compactionWaits`), the event loop's longest stall, and
 *     the folds that ran in the window (`foldRuns`: the files' sizes, the thread's limit, its wall time);
 *   - the ingest's peak resident (`ingest_peak_rss_mib`: the kernel's high-water mark over the ingest, which a memory
 *     budget must keep under its limit);
 *   - start-up from disk: the services closed, then opened on the same DATA_DIR in a new process (as a restart is),
 *     until every start-up step is done, with its garbage collections by kind and its peak resident (the kernel's
 *     high-water mark, reset just before it; with `--from` the copied folder is synced first) and the event loop's
 *     stalls meanwhile (what a request could have waited);
 *   - bytes per chunk per store, by release: after a full collection, the namespace's derived Episodes, derived graph,
 *     entity-name vectors, chunk vectors, then the catalog and lexical index are dropped in turn, and what each drop
 *     frees (heap + off-heap, after a full collection) is that store's; the lexical index's own typed arrays
 *     (`memoryBytes`) split the last; what is left after every drop is reported too. The vector store holds a
 *     namespace's distinct vectors once for all its collections, in WebAssembly memory that does not shrink, so the
 *     vector drops free heap (ids, payloads) and the last of them the pool's memory (given back once it holds no row).
 *
 *   node --expose-gc --max-old-space-size=16384 --import tsx bench/memory.ts --chunks 100000 [--out bench/results/memory-100k.json]
 *
 * Start-up alone, again and again on the same data: `--keep DIR` keeps the DATA_DIR as ingest left it; then
 * `--from DIR` skips ingest and restarts from a copy of it (`--cpu-profile PATH` profiles the start-up,
 * `--heap-snapshot PATH` writes the heap as start-up left it, `--heap-snapshot-after-drops PATH` as every drop left it).
 * `--heap-snapshots PREFIX` writes the two heaps that `bench/heap-diff.ts` compares: after the ingest and after the
 * restart's first reads; `--heap-snapshot-after-episodes PATH` the heap after the first drop (the derived Episodes), to
 * compare with PREFIX-restart.
 *
 * Checkpoints are written to `<out>.partial.json` as they come, so a stopped run keeps what it measured.
 *
 * `resident_breakdown`: resident memory by kind (bench/lib/resident.ts: V8's heap by part, worker heaps, the page pool,
 * glibc's arenas, large mappings, files), bytes a chunk over the empty service, as the ingest left it, after `gc()` and
 * after `--idle` seconds. `GRAPH_THREAD`, `EPISODIC_THREAD`, `FOLD_THREADS`, `MEMORY_LIMIT` (with node started on `heapFlagsFor`'s flags), `MEMORY_RELEASE_AFTER_MS`,
 * `MEMORY_RELEASE_MAX_HEAP` and glibc's `MALLOC_*` variables are taken from the environment, as the service takes them.
 */
import { execFileSync, spawn } from 'node:child_process'
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { Session } from 'node:inspector/promises'
import { cpus, loadavg, tmpdir, totalmem } from 'node:os'
import { basename, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { constants as perfConstants, monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks'
import { getHeapStatistics, writeHeapSnapshot } from 'node:v8'
import { loadConfig } from '../src/config.js'
import { EPISODIC_COLLECTIONS } from '../src/providers/episodic-graph/collections.js'
import { exclusiveOf, InProcessWriteLock } from '../src/corpus/write-lock.js'
import { dropDocuments } from '../src/corpus/appliers/writers/documents.js'
import type { DocumentInput } from '../src/corpus/documents/input.js'
import { DERIVED_COLLECTION_PREFIX } from '../src/providers/episodic-graph/collections.js'
import { entityCollectionOf } from '../src/corpus/entity-vectors.js'
import { createEmbedder } from '../src/providers/embedder/index.js'
import type { Embedder } from '../src/providers/embedder/port.js'
import type { EmbeddedLexicalIndex } from '../src/providers/lexical-index/embedded.js'
import { contentHash } from '../src/providers/lexical-index/segment.js'
import { openServices, type Services } from '../src/services.js'
import { MemoryBudgetError } from '../src/memory/budget.js'
import { compactionWaits } from '../src/providers/embedded/task-queue.js'
import { foldRuns } from '../src/providers/embedded/fold-client.js'
import { ThreadedStore } from '../src/providers/embedded/threaded-store.js'
import { loadCmrc } from './lib/cmrc.js'
import { pausesByKind, type GcPause } from './lib/gc-pauses.js'
import { residentAttribution, residentBreakdown, threadsHeldBytes, watchWorkers } from './lib/resident.js'
import { rng, sectionedDocuments, syntheticDocuments } from './lib/synthetic.js'

const { values } = parseArgs({
  options: {
    chunks: { type: 'string', default: '100000' },
    'sections-per-document': { type: 'string', default: '8' },
    'batch-documents': { type: 'string', default: '50' },
    checkpoint: { type: 'string', default: '10000' },
    out: { type: 'string' },
    // keep a copy of the DATA_DIR as it stands after ingest (closed), to restart from it again with --from
    keep: { type: 'string' },
    // skip ingest: restart from a copy of a DATA_DIR kept by --keep (the copy is removed at the end; the kept one stays)
    from: { type: 'string' },
    // write a heap snapshot after start-up (before the first reads) to this path
    'heap-snapshot': { type: 'string' },
    // write a heap snapshot after every store was dropped (what no drop freed) to this path
    'heap-snapshot-after-drops': { type: 'string' },
    // write a heap snapshot after the first drop, the derived Episodes' (bench/heap-diff.ts against PREFIX-restart: what they held)
    'heap-snapshot-after-episodes': { type: 'string' },
    // heap snapshots to diff (bench/heap-diff.ts): PREFIX-ingest.heapsnapshot after the ingest (its two full
    // collections), PREFIX-restart.heapsnapshot after the restart and its first read of every store
    'heap-snapshots': { type: 'string' },
    // a CPU profile of the start-up alone (.cpuprofile, for Chrome DevTools or speedscope)
    'cpu-profile': { type: 'string' },
    // after the ingest, wait this long with no work (no collection asked for) and measure again: what V8's memory
    // reducer and the threads give back when the service is idle
    idle: { type: 'string', default: '30' },
    // what else the machine did during the run, written into the result as it is
    'machine-note': { type: 'string' }
  }
})
const target = Number(values.chunks)
const perDocument = Number(values['sections-per-document'])
const batchDocuments = Number(values['batch-documents'])
const checkpointEvery = Number(values.checkpoint)
const idleSeconds = Number(values.idle)
const out = values.out ?? `bench/results/memory-${target >= 1e6 ? `${target / 1e6}m` : `${target / 1e3}k`}.json`
const gc = (globalThis as { gc?: () => void }).gc
if (!gc) throw new Error('run with node --expose-gc (see the header)')

const NAMESPACE = 'default'
const MiB = 2 ** 20
const log = (line: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`)
const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d
const load = () => round(loadavg()[0]!, 1)

/** Heap and off-heap after two full collections; resident as it stands. */
function held(): { rss: number; heap: number; external: number; array_buffers: number } {
  gc!(); gc!()
  const m = process.memoryUsage()
  return { rss: m.rss, heap: m.heapUsed, external: m.external, array_buffers: m.arrayBuffers }
}
const inMiB = (m: ReturnType<typeof held>) => Object.fromEntries(Object.entries(m).map(([k, v]) => [`${k}_mib`, round(v / MiB)]))

/** A stand-in embedder whose vectors follow the real model's per-dimension mean and spread (fitted on `sample`). */
async function fittedStandIn(sample: readonly string[]): Promise<{ embedder: Embedder; fit: Record<string, number> }> {
  const model = createEmbedder({ backend: 'local', modelDir: process.env['MODEL_DIR'] ?? './models', modelName: 'bge-small-zh-v1.5', threads: 1, sessions: 0 })
  const vectors: Float32Array[] = []
  for (const text of sample) vectors.push(...await model.embedPassages([text]))
  await model.close()
  const dims = vectors[0]!.length
  const mean = new Float64Array(dims)
  const spread = new Float64Array(dims)
  for (const v of vectors) for (let d = 0; d < dims; d++) mean[d]! += v[d]! / vectors.length
  for (const v of vectors) for (let d = 0; d < dims; d++) spread[d]! += (v[d]! - mean[d]!) ** 2 / vectors.length
  for (let d = 0; d < dims; d++) spread[d] = Math.sqrt(spread[d]!)
  const draw = (text: string): Float32Array => {
    const random = rng(contentHash(text)[0])
    const v = new Float32Array(dims)
    let norm = 0
    for (let d = 0; d < dims; d++) {
      const z = Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random())
      v[d] = mean[d]! + spread[d]! * z
      norm += v[d]! * v[d]!
    }
    norm = Math.sqrt(norm)
    for (let d = 0; d < dims; d++) v[d]! /= norm
    return v
  }
  // how alike two real passages are, beside two stand-ins: the fit should keep the model's crowding of vectors
  const cos = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i]!, 0)
  const pairs = (vs: Float32Array[]) => { let s = 0, n = 0; for (let i = 0; i + 1 < vs.length; i += 2) { s += cos(vs[i]!, vs[i + 1]!); n++ } return s / n }
  const fit = { sample_passages: vectors.length, mean_cosine_real_pairs: round(pairs(vectors), 3), mean_cosine_stand_in_pairs: round(pairs(sample.map(draw)), 3) }
  return {
    fit,
    embedder: {
      model: 'bge-small-zh-v1.5', dimensions: dims,
      embedQueries: async (texts) => texts.map(draw),
      embedPassages: async (texts) => texts.map(draw),
      health: async () => ({ backend: 'embedder:stand-in', ok: true, latency_ms: 0 }),
      close: async () => {}
    }
  }
}

/** Runs a child process with this one's output; rejects unless it exits 0. */
function run(command: string, args: readonly string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    spawn(command, args, { stdio: 'inherit' }).on('error', reject).on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${command} exited ${code}`))))
  })
}

/** Waits `seconds` doing nothing (a timer keeps the loop alive, as a server's socket does); resident every 5 s. */
async function idleFor(seconds: number): Promise<number[]> {
  const samples: number[] = []
  for (let s = 0; s < seconds; s += 5) {
    await new Promise((resolve) => setTimeout(resolve, Math.min(5, seconds - s) * 1000))
    samples.push(round(process.memoryUsage.rss() / MiB))
  }
  return samples
}

function percentile(xs: readonly number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor(p * s.length))] ?? 0
}

/** Per write, the time its tasks waited behind compaction steps (issue 44: none over 100 ms at 1M chunks). */
function waitSummary(ms: readonly number[]): Record<string, number> {
  return { writes_that_waited: ms.filter((x) => x > 0).length, over_100: ms.filter((x) => x > 100).length, p99: round(percentile(ms, 0.99)), max: round(Math.max(0, ...ms)) }
}

async function main(): Promise<void> {
  watchWorkers()
  const startedLoad = loadavg().map((x) => round(x, 1))
  const cmrc = (await loadCmrc()).documents.map((d) => d.text)
  log('fitting the stand-in vectors to the real model')
  const { embedder, fit } = await fittedStandIn(syntheticDocuments(cmrc, 256, 11).map((d) => d.text))
  // a chunk per section, roughly: passages enough for the target and a margin
  const passages = values.from ? [] : syntheticDocuments(cmrc, Math.ceil(target * 1.1), 7).map((d) => d.text)
  const dataDir = await mkdtemp(join(tmpdir(), 'recall-bench-memory-'))
  // MEMORY_LIMIT and MEMORY_RELEASE_AFTER_MS from the environment: the budget the service would keep (run node with
  // heapFlagsFor's flags beside it), and the release of the ingest's pages once writes are quiet (the service's default)
  const configOf = (dir: string) => loadConfig({ DATA_DIR: dir, DEMO_DATA: 'false', LOG_LEVEL: 'silent', EMBEDDING_SESSIONS: '0', DERIVED_GRAPH: 'true', DERIVED_EPISODES: 'true', MEMORY_LIMIT: process.env['MEMORY_LIMIT'], GRAPH_THREAD: process.env['GRAPH_THREAD'], EPISODIC_THREAD: process.env['EPISODIC_THREAD'], FOLD_THREADS: process.env['FOLD_THREADS'], MEMORY_RELEASE_AFTER_MS: process.env['MEMORY_RELEASE_AFTER_MS'], MEMORY_RELEASE_MAX_HEAP: process.env['MEMORY_RELEASE_MAX_HEAP'] })
  const config = configOf(dataDir)
  // each start-up step's own time, from the service's start-up log
  const stepMs: Record<string, number> = {}
  const heapReleases: object[] = []
  let started = performance.now()
  const logger = {
    info: (obj: object) => {
      const { step, ms } = obj as { step?: string; ms?: number }
      if (step && ms !== undefined) stepMs[step] = ms
      // the service's release of the heap once writes are quiet (src/memory/heap-release.ts)
      if ('rss_before_bytes' in obj) heapReleases.push({ ...obj, at_seconds: round((performance.now() - started) / 1000) })
    },
    warn: () => {}, error: () => {}
  }
  const openOn = (c: typeof config) => openServices(c, { providers: (base) => ({ ...base, embedder }), logger })
  const open = () => openOn(config)
  let services: Services
  if (values.from) {
    // the empty service measured on a folder of its own, then the kept DATA_DIR copied in
    const emptyDir = await mkdtemp(join(tmpdir(), 'recall-bench-memory-empty-'))
    services = await openOn(configOf(emptyDir))
  } else {
    services = await open()
  }
  /** `compactionWaits` and the folds run, of this thread's stores and of the graphs' own threads (`GRAPH_THREAD`, `EPISODIC_THREAD`). */
  const counters = async (takeFolds = false) => {
    const own = { totalMs: compactionWaits.totalMs, maxMsByStore: { ...compactionWaits.maxMsByStore }, foldRuns: takeFolds ? foldRuns.splice(0) : [] }
    for (const store of [services.graph, services.episodes]) {
      if (!(store instanceof ThreadedStore)) continue
      const thread = await store.threadCounters(takeFolds)
      own.totalMs += thread.compactionWaits.totalMs
      Object.assign(own.maxMsByStore, thread.compactionWaits.maxMsByStore)
      own.foldRuns.push(...thread.foldRuns)
    }
    return own
  }
  const base = held()
  const baseResident = await residentAttribution()
  log(`empty service: ${JSON.stringify(inMiB(base))}`)
  if (values.from) {
    await services.close()
    await rm(services.config.dataDir, { recursive: true, force: true })
    await cp(values.from, dataDir, { recursive: true })
    // the copy written out before the timed start: gigabytes of writeback would otherwise compete with its reads
    execFileSync('sync')
  }

  const checkpoints: Record<string, unknown>[] = []
  const writeMs: number[] = []
  let windowMs: number[] = []
  // per write, what its store tasks waited behind compaction steps on their queues (the writes go one at a time, so
  // the process-wide tally's growth over a write is that write's); the event loop's longest stall per window bounds
  // what any step done off the queues on this thread (a snapshot encoded a slice at a time) held a write back
  const compactionWaitMs: number[] = []
  let windowWaitMs: number[] = []
  const loopDelay = monitorEventLoopDelay({ resolution: 10 })
  loopDelay.enable()
  let chunks = 0
  let docs = 0
  let next = checkpointEvery
  let refused: Record<string, unknown> | undefined
  // the ingest's peak resident, as the memory budget must bound it: the kernel's high-water mark, reset first (Linux only)
  const ingestPeakReset = await writeFile('/proc/self/clear_refs', '5').then(() => true, () => false)
  started = performance.now()
  const report = (extra: Record<string, unknown>) => ({
    generated_by: 'bench/memory.ts', at: new Date().toISOString(),
    machine: { cpus: cpus().length, memory_gib: Math.round(totalmem() / 2 ** 30), node: process.version, heap_limit_mib: Math.round(getHeapStatistics().heap_size_limit / MiB), node_flags: process.execArgv.filter((a) => a.startsWith('--') && a !== '--import' && a !== '--expose-gc'), malloc_arena_max: process.env['MALLOC_ARENA_MAX'] ?? null, note: values['machine-note'] ?? 'not given (--machine-note): say what else ran' },
    method: {
      corpus: `documents of ${perDocument} sections, each a window of CMRC 2018 sentences (bench/lib/synthetic.ts); real chunker; ${batchDocuments} documents a write through the write path`,
      derivation: 'DERIVED_GRAPH=true, DERIVED_EPISODES=true (the defaults)',
      vectors: 'stand-in: per-dimension Gaussian with the mean and spread of the real model over 256 CMRC passages, normalised (no model run per chunk)',
      memory: 'heap and off-heap (process.memoryUsage().external: array buffers, the vector store\'s WebAssembly memory) after two full collections (node --expose-gc); resident as it stands; the model is not loaded (stand-in vectors): add the in-process ONNX session for a service'
    },
    fit, load_average_at_start: startedLoad, empty_service: inMiB(base), memory_limit: process.env['MEMORY_LIMIT'] ?? null, graph_thread: process.env['GRAPH_THREAD'] ?? 'default', episodic_thread: process.env['EPISODIC_THREAD'] ?? 'default', fold_threads: process.env['FOLD_THREADS'] ?? 'default', memory_release_after_ms: process.env['MEMORY_RELEASE_AFTER_MS'] ?? 'default', memory_release_max_heap: process.env['MEMORY_RELEASE_MAX_HEAP'] ?? 'default', ...extra
  })
  const batch: DocumentInput[] = []
  for (const document of sectionedDocuments(passages, perDocument)) {
    if (chunks >= target) break
    batch.push(document)
    if (batch.length < batchDocuments) continue
    const t = performance.now()
    const waitedBefore = (await counters()).totalMs
    let written
    try {
      written = await services.writePath.write(NAMESPACE, { kind: 'documents', op: 'upsert', documents: batch.splice(0) })
    } catch (error) {
      if (!(error instanceof MemoryBudgetError)) throw error
      refused = { chunks, message: error.message, budget: services.memory.usage() }
      log(`refused at ${chunks} chunks: ${error.message}`)
      break
    }
    const ms = performance.now() - t
    writeMs.push(ms)
    windowMs.push(ms)
    const waited = (await counters()).totalMs - waitedBefore
    compactionWaitMs.push(waited)
    windowWaitMs.push(waited)
    chunks += written.chunks
    docs += written.documents
    if (chunks >= next || chunks >= target) {
      next += checkpointEvery
      const m = held()
      const lexical = services.lexical.get(NAMESPACE) as EmbeddedLexicalIndex
      const point = {
        chunks, documents: docs, seconds: round((performance.now() - started) / 1000), load_1m: load(),
        // every thread's CPU (collections included): under load a fairer cost than wall time
        cpu_seconds: round((process.cpuUsage().user + process.cpuUsage().system) / 1e6),
        ...inMiB(m), bytes_per_chunk_heap_and_off_heap: Math.round((m.heap + m.external - base.heap - base.external) / chunks),
        lexical_index_typed_arrays_mib: round(lexical.memoryBytes / MiB),
        write_ms_in_window: { p50: round(percentile(windowMs, 0.5)), p99: round(percentile(windowMs, 0.99)), max: round(Math.max(...windowMs)) },
        compaction_wait_ms_in_window: waitSummary(windowWaitMs),
        longest_compaction_wait_ms_by_store_so_far: Object.fromEntries(Object.entries((await counters()).maxMsByStore).map(([k, v]) => [k, round(v)])),
        event_loop_delay_ms_in_window: { p99: round(loopDelay.percentile(99) / 1e6), max: round(loopDelay.max / 1e6) },
        folds_in_window: (await counters(true)).foldRuns.map((run) => ({ kind: run.kind, snapshot_mib: round(run.snapshotBytes / MiB), log_mib: round(run.logBytes / MiB), heap_limit_mib: run.heapMb, ran_out_of_heap: run.ranOutOfHeap, wall_s: round(run.wallMs / 1000), waited_s: round(run.waitedMs / 1000) })),
        derived_graph: await services.graph.count(NAMESPACE), episodes: (await services.episodes.countByType(NAMESPACE))['Episode'] ?? 0,
        budget: services.memory.usage(),
        resident: await residentAttribution()
      }
      windowMs = []
      windowWaitMs = []
      loopDelay.reset()
      checkpoints.push(point)
      log(JSON.stringify(point))
      await writeFile(out.replace(/\.json$/, '.partial.json'), `${JSON.stringify(report({ checkpoints }), null, 2)}\n`)
    }
  }
  const ingestSeconds = (performance.now() - started) / 1000
  const ingestPeakKiB = ingestPeakReset ? Number(/VmHWM:\s+(\d+) kB/.exec(await readFile('/proc/self/status', 'utf8'))?.[1]) : NaN
  if (Number.isFinite(ingestPeakKiB)) log(`ingest's peak resident: ${round(ingestPeakKiB / 1024)} MiB`)
  // resident as the last write left it, before any collection the bench asks for
  const residentAsLeft = await residentAttribution()
  const atEnd = held()
  const residentAtEnd = await residentAttribution()
  const budgetAtEnd = services.memory.usage()
  const idle = await idleFor(idleSeconds)
  const residentAfterIdle = await residentAttribution()
  if (values['heap-snapshots'] && !values.from) log(`heap snapshot: ${writeHeapSnapshot(`${values['heap-snapshots']}-ingest.heapsnapshot`)}`)

  if (!values.from) {
    await services.close()
    if (values.keep) await cp(dataDir, values.keep, { recursive: true })
    // start-up from disk as a restart sees it: a process of its own, which holds nothing of the ingest
    log('closed; starting again from the same DATA_DIR in a new process')
    const restartOut = join(dataDir, '..', `${basename(dataDir)}-restart.json`)
    const passOn = (['cpu-profile', 'heap-snapshot', 'heap-snapshot-after-drops', 'heap-snapshot-after-episodes', 'heap-snapshots'] as const).flatMap((o) => (values[o] ? [`--${o}`, values[o]] : []))
    await run(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), '--from', dataDir, '--out', restartOut, ...passOn])
    const restart = JSON.parse(await readFile(restartOut, 'utf8')) as Record<string, unknown>
    await rm(restartOut, { force: true })
    await rm(dataDir, { recursive: true, force: true })
    const restartFields = ['empty_service', 'startup_from_disk_seconds', 'startup_steps_ms', 'startup_gc', 'startup_peak_rss_mib', 'startup_event_loop_delay_ms', 'after_startup', 'first_read_of_every_store_seconds', 'after_restart', 'resident_breakdown_after_restart', 'per_store_after_restart']
    const final = report({
      chunks, documents: docs, ingest_seconds: round(ingestSeconds), chunks_per_s: round(chunks / ingestSeconds),
      ingest_peak_rss_mib: Number.isFinite(ingestPeakKiB) ? round(ingestPeakKiB / 1024) : null,
      write_ms: { count: writeMs.length, p50: round(percentile(writeMs, 0.5)), p99: round(percentile(writeMs, 0.99)), max: round(Math.max(...writeMs)) },
      compaction_wait_ms: waitSummary(compactionWaitMs),
      after_ingest: { ...inMiB(atEnd), bytes_per_chunk_heap_and_off_heap: Math.round((atEnd.heap + atEnd.external - base.heap - base.external) / chunks), bytes_per_chunk_resident: Math.round((atEnd.rss - base.rss) / chunks), resident: residentAtEnd },
      refused,
      budget_after_ingest: budgetAtEnd,
      heap_releases: heapReleases,
      // resident by kind, bytes a chunk over the empty service: as the last write left it; after the two full
      // collections (gc(), which keeps V8's page pool); after --idle seconds with nothing asked of it
      resident_breakdown: {
        empty_service: residentBreakdown(baseResident, baseResident, 1).mib,
        as_the_ingest_left_it: residentBreakdown(residentAsLeft, baseResident, chunks),
        after_two_full_collections: residentBreakdown(residentAtEnd, baseResident, chunks),
        [`after_${idleSeconds}_s_idle`]: { ...residentBreakdown(residentAfterIdle, baseResident, chunks), resident_mib_every_5_s: idle }
      },
      restart: { note: 'a new process on the same DATA_DIR (bench/memory.ts --from); per chunk against its own empty service', ...Object.fromEntries(restartFields.map((k) => [k, restart[k]])) },
      load_average_at_end: loadavg().map((x) => round(x, 1)),
      checkpoints
    })
    await writeFile(out, `${JSON.stringify(final, null, 2)}\n`)
    await rm(out.replace(/\.json$/, '.partial.json'), { force: true })
    log(`wrote ${out}`)
    return
  }
  gc!()
  for (const step of Object.keys(stepMs)) delete stepMs[step]
  const profiler = values['cpu-profile'] ? new Session() : undefined
  if (profiler) {
    profiler.connect()
    await profiler.post('Profiler.enable')
    await profiler.post('Profiler.start')
  }
  // the start-up's garbage collections, by kind (the observer hears of each after it: a turn given for the last)
  const startupPauses: GcPause[] = []
  const gcKinds: Record<number, string> = { [perfConstants.NODE_PERFORMANCE_GC_MINOR]: 'minor', [perfConstants.NODE_PERFORMANCE_GC_MAJOR]: 'major', [perfConstants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental', [perfConstants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb' }
  const gcObserver = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) startupPauses.push({ at_ms: Math.round(e.startTime), ms: e.duration, kind: gcKinds[(e as unknown as { detail?: { kind: number } }).detail?.kind ?? -1] ?? 'other' })
  })
  gcObserver.observe({ entryTypes: ['gc'] })
  // the start-up's peak resident: the kernel's high-water mark, reset first (writing 5 to clear_refs; Linux only)
  const peakReset = await writeFile('/proc/self/clear_refs', '5').then(() => true, () => false)
  // how long a request (a /healthz) could have waited: the event loop's stalls during the start-up
  const startupLoop = monitorEventLoopDelay({ resolution: 10 })
  startupLoop.enable()
  const t0 = performance.now()
  services = await open()
  const startupSeconds = (performance.now() - t0) / 1000
  startupLoop.disable()
  const startupLoopDelay = { p99: round(startupLoop.percentile(99) / 1e6), max: round(startupLoop.max / 1e6) }
  await new Promise((resolve) => setTimeout(resolve, 50))
  gcObserver.disconnect()
  const startupGc = pausesByKind(startupPauses.filter((p) => p.at_ms >= t0))
  const peakKiB = peakReset ? Number(/VmHWM:\s+(\d+) kB/.exec(await readFile('/proc/self/status', 'utf8'))?.[1]) : NaN
  const startupPeakMib = Number.isFinite(peakKiB) ? round(peakKiB / 1024) : null
  if (profiler) {
    const { profile } = await profiler.post('Profiler.stop')
    await writeFile(values['cpu-profile']!, JSON.stringify(profile))
    profiler.disconnect()
  }
  const startupSteps = { ...stepMs }
  log(`start-up steps (ms): ${JSON.stringify(startupSteps)}; peak resident ${startupPeakMib} MiB; event loop delay (ms) ${JSON.stringify(startupLoopDelay)}; collections: ${JSON.stringify(startupGc)}`)
  const afterStartup = held()
  if (values.from) {
    chunks = services.documents.chunkCount
    docs = services.documents.documentCount
  }
  if (values['heap-snapshot']) log(`heap snapshot: ${writeHeapSnapshot(values['heap-snapshot'])}`)
  // the embedded stores open a namespace on its first read: read each once, so that all of it is in memory
  const t1 = performance.now()
  const probe = await embedder.embedQueries(['资料'])
  for (const c of ['chunks', ...EPISODIC_COLLECTIONS.map((e) => `${DERIVED_COLLECTION_PREFIX}${e}`)]) {
    await services.vectors.search(`${config.collectionPrefix}${c}`, NAMESPACE, probe[0]!, 1).catch(() => [])
  }
  await services.lexical.get(NAMESPACE).search('资料', 1)
  await services.graph.names(NAMESPACE)
  await services.episodes.countByType(NAMESPACE)
  const firstReadSeconds = (performance.now() - t1) / 1000
  const reopened = held()
  const residentReopened = await residentAttribution()
  if (values['heap-snapshots']) log(`heap snapshot: ${writeHeapSnapshot(`${values['heap-snapshots']}-restart.heapsnapshot`)}`)
  log(`start-up from disk ${round(startupSeconds)} s, first reads ${round(firstReadSeconds)} s; ${JSON.stringify(inMiB(reopened))}`)

  // bytes per chunk per store, by release
  const lexicalBytes = (services.lexical.get(NAMESPACE) as EmbeddedLexicalIndex).memoryBytes
  const prefix = config.collectionPrefix
  const steps: Array<[string, () => Promise<void>]> = [
    ['derived_episodes', async () => {
      await services.episodes.dropNamespace(NAMESPACE)
      for (const c of EPISODIC_COLLECTIONS) await services.vectors.dropNamespace(`${prefix}${DERIVED_COLLECTION_PREFIX}${c}`, NAMESPACE)
    }],
    ['derived_graph', () => services.graph.dropNamespace(NAMESPACE)],
    ['entity_name_vectors', () => services.vectors.dropNamespace(entityCollectionOf(prefix), NAMESPACE)],
    ['vector_store', () => services.vectors.dropNamespace(`${prefix}chunks`, NAMESPACE)],
    ['catalog_and_lexical_index', () => dropDocuments(services.documents.get(NAMESPACE)!, exclusiveOf(new InProcessWriteLock(), `documents:${NAMESPACE}`))]
  ]
  const perStore: Record<string, unknown> = {}
  let before = reopened
  let threadsBefore = await threadsHeldBytes()
  for (const [name, release] of steps) {
    await release()
    const after = held()
    const threadsAfter = await threadsHeldBytes()
    // a store in a thread of its own (the graphs with GRAPH_THREAD, EPISODIC_THREAD) frees in its thread, which collects on a drop
    const threadsFreed = threadsBefore - threadsAfter
    const freed = before.heap + before.external - after.heap - after.external + threadsFreed
    perStore[name] = { freed_mib: round(freed / MiB), bytes_per_chunk: Math.round(freed / chunks), heap_freed_mib: round((before.heap - after.heap) / MiB), off_heap_freed_mib: round((before.external - after.external) / MiB), threads_freed_mib: round(threadsFreed / MiB) }
    log(`${name}: ${JSON.stringify(perStore[name])}`)
    if (name === 'derived_episodes' && values['heap-snapshot-after-episodes']) log(`heap snapshot: ${writeHeapSnapshot(values['heap-snapshot-after-episodes'])}`)
    before = after
    threadsBefore = threadsAfter
  }
  // what no drop freed: structures kept beside the stores (the graphrag name matcher), code compiled meanwhile
  if (values['heap-snapshot-after-drops']) log(`heap snapshot after every drop: ${writeHeapSnapshot(values['heap-snapshot-after-drops'])}`)
  perStore['left_after_every_drop'] = { mib: round((before.heap + before.external - base.heap - base.external) / MiB), bytes_per_chunk: Math.round((before.heap + before.external - base.heap - base.external) / chunks), heap_mib: round((before.heap - base.heap) / MiB), off_heap_mib: round((before.external - base.external) / MiB) }
  const catalogAndLexical = perStore['catalog_and_lexical_index'] as { freed_mib: number }
  perStore['lexical_index_typed_arrays'] = { mib: round(lexicalBytes / MiB), bytes_per_chunk: Math.round(lexicalBytes / chunks) }
  perStore['catalog_by_difference'] = { mib: round(catalogAndLexical.freed_mib - lexicalBytes / MiB), bytes_per_chunk: Math.round((catalogAndLexical.freed_mib * MiB - lexicalBytes) / chunks) }
  await services.close()
  await rm(dataDir, { recursive: true, force: true })

  const final = report({
    chunks, documents: docs, restarted_from: values.from,
    startup_from_disk_seconds: round(startupSeconds),
    startup_steps_ms: startupSteps,
    startup_gc: startupGc,
    startup_peak_rss_mib: startupPeakMib,
    startup_event_loop_delay_ms: startupLoopDelay,
    after_startup: inMiB(afterStartup),
    first_read_of_every_store_seconds: round(firstReadSeconds),
    after_restart: { ...inMiB(reopened), bytes_per_chunk_heap_and_off_heap: Math.round((reopened.heap + reopened.external - base.heap - base.external) / chunks), bytes_per_chunk_resident: Math.round((reopened.rss - base.rss) / chunks), resident: residentReopened },
    resident_breakdown_after_restart: residentBreakdown(residentReopened, baseResident, chunks),
    per_store_after_restart: perStore,
    load_average_at_end: loadavg().map((x) => round(x, 1)),
    checkpoints
  })
  await writeFile(out, `${JSON.stringify(final, null, 2)}\n`)
  await rm(out.replace(/\.json$/, '.partial.json'), { force: true })
  log(`wrote ${out}`)
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})

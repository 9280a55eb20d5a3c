import { rm, stat } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { performance } from 'node:perf_hooks'
import { pathToFileURL } from 'node:url'
import { setFlagsFromString } from 'node:v8'
import { Worker, type ResourceLimits } from 'node:worker_threads'
import type { PendingFold } from './durable-log.js'
import { foldTurn } from './fold-gate.js'
import type { FoldTask, FoldWritten } from './fold-thread.js'

// From source (tsx, vitest) a fold thread's entry is TypeScript and needs tsx's loader; from dist/ it is JavaScript.
const fromSource = import.meta.url.endsWith('.ts')
const MiB = 2 ** 20

/** A store's fold-thread entry module `name` (without extension) in the folder of `base` (its `import.meta.url`). */
export function foldEntry(name: string, base: string): URL {
  return new URL(`./${name}${fromSource ? '.ts' : '.js'}`, base)
}

/** A store thread's `execArgv`: from source, tsx's loader (the entry is TypeScript); from dist/, none. */
export function threadExecArgv(): string[] {
  return fromSource ? ['--import', pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href] : []
}

/** The bytes a fold reads: the snapshot file and the log set aside for it. */
export interface FoldSizes {
  snapshotBytes: number
  logBytes: number
}

/**
 * What a fold thread's old generation must hold (`bench/fold-memory.ts`, `bench/kg-fold-from-folder.ts`,
 * `docs/benchmarks.md`): a fixed margin for the thread itself (its modules, a block of the snapshot, the rows in flight),
 * and per byte of what it holds whole, JSON parsed into objects: the log's records when it folds the snapshot a block at a
 * time (`blocks`, unless `foldsWhole`; at most `heldLogBytes` of them; 6 bytes a byte), else both files (4). A block fold also holds
 * the snapshot's string tables and numbers them anew (every document id of the namespace): a quarter of a byte a byte of
 * snapshot (at 1M chunks the knowledge graph's fold peaked at 406 MiB with 64 MiB of log held, 836 MiB of snapshot).
 */
const FOLD_HEAP_MARGIN_MIB = 64
const FOLD_HEAP_PER_HELD_BYTE = 4
/**
 * A block fold's log: its records parsed and split by item, and the garbage of parsing them (5.6 bytes a byte at the end
 * of the 1M fold, `bench/kg-fold-from-folder.ts`); 4 ran out once the limits held, at 200k chunks (115 MB of log, 64 MiB
 * held at once, 190 MB of snapshot: 366 MiB).
 */
const FOLD_HEAP_PER_LOG_BYTE_IN_BLOCKS = 6
const FOLD_HEAP_PER_SNAPSHOT_BYTE_IN_BLOCKS = 0.25
/**
 * The young generation's limit beside it: without one V8 sizes it apart from the old generation's (a 92 MiB limit
 * measured 134 MiB used at its peak), and a fold's objects are short-lived rows, so a small one does.
 */
const FOLD_YOUNG_MIB = 16

/**
 * Whether a block fold folds its files whole instead: when its log is the larger (its items are then most of the
 * namespace) and the two hold at most `wholeMaxBytes` (the knowledge graph's folds a larger pair in blocks, so that what a
 * fold holds stays bounded however far its log outgrew its snapshot).
 */
export function foldsWhole({ snapshotBytes, logBytes }: FoldSizes, wholeMaxBytes = Infinity): boolean {
  return logBytes >= snapshotBytes && snapshotBytes + logBytes <= wholeMaxBytes
}

/**
 * The fold thread's old-generation limit in MiB for files of these sizes; `heldLogBytes`: the most of the log a block
 * fold holds parsed at once (the knowledge graph's goes over a larger log a range of items at a time); `wholeMaxBytes`:
 * see `foldsWhole`.
 */
export function foldHeapLimitMb(sizes: FoldSizes, blocks: boolean, heldLogBytes = Infinity, wholeMaxBytes = Infinity): number {
  const { snapshotBytes, logBytes } = sizes
  if (!blocks || foldsWhole(sizes, wholeMaxBytes)) return Math.ceil(FOLD_HEAP_MARGIN_MIB + (FOLD_HEAP_PER_HELD_BYTE * (snapshotBytes + logBytes)) / MiB)
  const held = FOLD_HEAP_PER_LOG_BYTE_IN_BLOCKS * Math.min(logBytes, heldLogBytes) + FOLD_HEAP_PER_SNAPSHOT_BYTE_IN_BLOCKS * snapshotBytes
  return Math.ceil(FOLD_HEAP_MARGIN_MIB + held / MiB)
}

/** A fold thread's heap limits for the files of `fold` (the bench gives its threads the same). */
export async function foldThreadLimits(fold: PendingFold, blocks: boolean, heldLogBytes?: number, wholeMaxBytes?: number): Promise<{ sizes: FoldSizes; heapMb: number; resourceLimits: ResourceLimits }> {
  const sizes = await foldSizes(fold)
  const heapMb = foldHeapLimitMb(sizes, blocks, heldLogBytes, wholeMaxBytes)
  return { sizes, heapMb, resourceLimits: foldResourceLimits(heapMb) }
}

async function foldSizes(fold: PendingFold): Promise<FoldSizes> {
  const size = async (file: string) => {
    try {
      return (await stat(file)).size
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0
      throw error
    }
  }
  return { snapshotBytes: await size(fold.snapshotFile), logBytes: await size(fold.foldFile) }
}

export interface FoldLimits {
  /** The store's fold reads the snapshot a block at a time (`BlockFold`), so its heap is sized from the log. */
  blocks: boolean
  /** The most of the log such a fold holds parsed at once (see `foldHeapLimitMb`); default all of it. */
  heldLogBytes?: number
  /** Such a fold folds whole a log larger than its snapshot only when the two hold at most this (`foldsWhole`); default any. */
  wholeMaxBytes?: number
  /** Told when a fold ran out of its heap and is run again without a limit. */
  warn: (message: string) => void
  /** Another limit than `foldHeapLimitMb` (a test's, too small on purpose). */
  heapMb?: (sizes: FoldSizes) => number
}

/** One fold a thread ran (`foldWithinLimit`): what it was given, its limit, how long it took and whether it ran out. */
export interface FoldRun {
  kind: string
  snapshotBytes: number
  logBytes: number
  heapMb: number
  ranOutOfHeap: boolean
  /** From the fold's start, its wait for a turn (`FOLD_THREADS`) included. */
  wallMs: number
  /** How long it waited for a turn (`fold-gate.ts`). */
  waitedMs: number
}

/**
 * The folds run in this process, newest last (the last 1,000): a bench reads what ran in each window (issue 44: a log
 * that grows faster than its folds take it shows here as ever larger logs and longer folds).
 */
export const foldRuns: FoldRun[] = []
const FOLD_RUNS_KEPT = 1000

/**
 * Runs one fold in a thread under a heap limit sized from its files (`foldHeapLimitMb`). A thread that runs out of it
 * (`ERR_WORKER_OUT_OF_MEMORY`) wrote only its temporary files, never the snapshot: they are removed, `warn` is told,
 * and the fold runs once more in a thread with V8's default limit. It runs when the process's fold threads leave it a
 * turn and memory has room for its heap (`foldTurn`, `FOLD_THREADS`); `signal` gives that wait up (an `AbortError`).
 */
export async function foldWithinLimit(entry: URL, task: FoldTask, limits: FoldLimits, signal?: AbortSignal): Promise<FoldWritten> {
  const sizes = await foldSizes(task.fold)
  const heapMb = limits.heapMb ? limits.heapMb(sizes) : foldHeapLimitMb(sizes, limits.blocks, limits.heldLogBytes, limits.wholeMaxBytes)
  const started = performance.now()
  const release = await foldTurn(heapMb, signal)
  const waitedMs = performance.now() - started
  const ran = (ranOutOfHeap: boolean) => {
    foldRuns.push({ kind: task.kind, ...sizes, heapMb, ranOutOfHeap, wallMs: performance.now() - started, waitedMs })
    if (foldRuns.length > FOLD_RUNS_KEPT) foldRuns.shift()
  }
  try {
    const written = await foldInThread(entry, task, heapMb)
    ran(false)
    return written
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ERR_WORKER_OUT_OF_MEMORY') throw error
    limits.warn(
      `${task.kind}: the fold of ${task.fold.snapshotFile} (snapshot ${sizes.snapshotBytes} bytes, log ${sizes.logBytes}) ` +
      `ran out of its ${heapMb} MiB heap; folding it again without that limit`
    )
    await removeFoldFiles(task.fold)
    const written = await foldInThread(entry, task)
    ran(true)
    return written
  } finally {
    release()
  }
}

/** The temporary files a fold thread writes beside the snapshot (`fold-thread.ts`, a block fold's rows and log shares). */
async function removeFoldFiles(fold: PendingFold): Promise<void> {
  for (const suffix of ['', '.rows', '.shares']) await rm(`${fold.snapshotFile}.fold.tmp${suffix}`, { force: true })
}

/** Runs one fold in a thread of its own (started for it, gone after), under `heapMb` if given, and answers the snapshot it wrote. */
function foldInThread(entry: URL, task: FoldTask, heapMb?: number): Promise<FoldWritten> {
  const worker = startFoldThread(entry, task, heapMb)
  return new Promise<FoldWritten>((resolve, reject) => {
    let answered = false
    worker.once('message', (written: FoldWritten) => {
      answered = true
      resolve(written)
    })
    worker.once('error', (error) => {
      answered = true
      reject(error)
    })
    worker.once('exit', (code) => {
      if (!answered) reject(new Error(`fold thread exited with code ${code} before it answered`))
    })
  })
}

function foldResourceLimits(heapMb: number): ResourceLimits {
  return { maxOldGenerationSizeMb: heapMb, maxYoungGenerationSizeMb: FOLD_YOUNG_MIB }
}

/**
 * A process started with `--max-old-space-size` (as `scripts/start.sh` starts the service) gives every new isolate that
 * limit, over the `resourceLimits` its worker asked for: a fold thread's limit was ignored, and at 1M chunks one grew
 * to 2.4 GiB. The main isolate read the flag when it started, so it is cleared for the isolates started after it: a fold
 * thread gets its own limit, a worker started without limits V8's default (`test/providers/embedded/fold-heap-limit.test.ts`).
 */
export function honourWorkerHeapLimits(): void {
  if (heapLimitsHonoured) return
  heapLimitsHonoured = true
  setFlagsFromString('--max-old-space-size=0')
}
let heapLimitsHonoured = false

function startFoldThread(entry: URL, task: FoldTask, heapMb?: number): Worker {
  if (heapMb !== undefined) honourWorkerHeapLimits()
  return new Worker(entry, { workerData: task, execArgv: threadExecArgv(), ...(heapMb === undefined ? {} : { resourceLimits: foldResourceLimits(heapMb) }) })
}

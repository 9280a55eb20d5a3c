import { workerData } from 'node:worker_threads'

/**
 * How many fold threads run at once in this process (`FOLD_THREADS`). Each store folds its namespaces' logs in threads
 * of their own (`fold-client.ts`), their heap limits 0.5–0.65 GiB at 500k chunks: under a memory budget two at once
 * moved the refusal of writes earlier (428,400 chunks against 523,200 one at a time, one 1M ingest each under
 * `MEMORY_LIMIT=6GiB`: bench/results/memory.log.md, "Fold threads one at a time under a budget"). The count is kept in
 * shared memory, so a store that lives in a thread of its own
 * (`GRAPH_THREAD`, `EPISODIC_THREAD`) counts against the same limit: its `PortThread` hands the cells over and the
 * thread takes them up (`threadOptions`).
 */
const RUNNING = 0
const MOST = 1
/** The process's memory limit in MiB (`MEMORY_LIMIT`, or the one taken from the machine); 0: none. */
const LIMIT_MIB = 2
/** What the main heap may still take before its next full collection, in MiB (`MemoryBudget`'s headroom). */
const HEADROOM_MIB = 3
/** The heap limits of the fold threads running, in MiB: what they may still take, counted by the memory budget. */
const RESERVED_MIB = 4
let cells: Int32Array = new Int32Array(new SharedArrayBuffer(5 * Int32Array.BYTES_PER_ELEMENT))
const MiB = 2 ** 20
/** How often a fold waiting for memory looks again. */
const MEMORY_POLL_MS = 250

/** At most `most` fold threads at once from now on in this process; 0: any number. */
export function setFoldThreadsAtOnce(most: number): void {
  if (!Number.isInteger(most) || most < 0) throw new RangeError(`fold threads at once: ${most} is not a whole number ≥ 0`)
  Atomics.store(cells, MOST, most)
  Atomics.notify(cells, RUNNING)
}

/**
 * A fold thread starts only when resident memory, the main heap's headroom (`setFoldHeapHeadroom`), the heap limits
 * of the folds running and its own fit within `bytes` (0: any): started near the budget's refusal mark, a fold of ~0.6 GiB took a 6 GiB process to
 * 5.9 GiB (bench/results/memory.log.md, "Fold threads one at a time under a budget"). A fold that waits leaves the
 * store's memory as it is (the log it folds is on disk); it runs once memory is given back, or after a restart.
 */
export function setFoldMemoryLimit(bytes: number): void {
  Atomics.store(cells, LIMIT_MIB, Math.max(0, Math.floor(bytes / MiB)))
}

/** What the main heap may still grow by before V8 collects it (the budget tells it each time it reads it). */
export function setFoldHeapHeadroom(bytes: number): void {
  Atomics.store(cells, HEADROOM_MIB, Math.max(0, Math.ceil(bytes / MiB)))
}

/**
 * The heap limits of the fold threads running now, in bytes: the budget counts them as held until the folds end, so a
 * write taken meanwhile does not take the room a fold's heap may still grow into (a fold admitted at 3.6 GiB of a
 * 4 GiB limit took the process to 4,095.9 MiB: bench/results/memory.log.md, "The heap's growth counted and held near
 * the limit").
 */
export function foldHeapsReserved(): number {
  return Atomics.load(cells, RESERVED_MIB) * MiB
}

/** Fold threads running now in this process (every thread's). */
export function foldThreadsRunning(): number {
  return Atomics.load(cells, RUNNING)
}

type WaitAsync = (typed: Int32Array, index: number, value: number, timeoutMs?: number) => { async: boolean; value: Promise<string> | string }
const waitAsync = (Atomics as unknown as { waitAsync: WaitAsync }).waitAsync

/**
 * Waits for a fold thread's turn and takes it; answers the release (once; a second call does nothing). With `heapMb`
 * (the thread's heap limit) it also waits for memory (`setFoldMemoryLimit`). A fold that waits has its log set aside
 * already, so writes go on meanwhile; `signal` gives the wait up (the fold is put off: `BackgroundCompaction`).
 */
export async function foldTurn(heapMb?: number, signal?: AbortSignal): Promise<() => void> {
  // the signal gives up a wait only: a turn free now is taken (a close still waits for the folds that can run)
  for (;;) {
    const limitMib = Atomics.load(cells, LIMIT_MIB)
    const held = process.memoryUsage.rss() / MiB + Atomics.load(cells, HEADROOM_MIB) + Atomics.load(cells, RESERVED_MIB)
    if (heapMb !== undefined && limitMib > 0 && held + heapMb > limitMib) {
      signal?.throwIfAborted()
      await new Promise((resolve) => setTimeout(resolve, MEMORY_POLL_MS))
      continue
    }
    const running = Atomics.load(cells, RUNNING)
    const most = Atomics.load(cells, MOST)
    if (most === 0 || running < most) {
      if (Atomics.compareExchange(cells, RUNNING, running, running + 1) === running) {
        const reserved = Math.ceil(heapMb ?? 0)
        Atomics.add(cells, RESERVED_MIB, reserved)
        return releaseOnce(cells, reserved)
      }
      continue
    }
    signal?.throwIfAborted()
    // looked at again at least every MEMORY_POLL_MS: for the signal
    const waited = waitAsync(cells, RUNNING, running, MEMORY_POLL_MS)
    if (waited.async) await waited.value
  }
}

function releaseOnce(held: Int32Array, reservedMib: number): () => void {
  let released = false
  return () => {
    if (released) return
    released = true
    Atomics.sub(held, RESERVED_MIB, reservedMib)
    Atomics.sub(held, RUNNING, 1)
    Atomics.notify(held, RUNNING)
  }
}

/** What a store thread's `workerData` carries: its store's options and the process's fold cells. */
export interface StoreThreadData<T> {
  options: T
  foldCells: Int32Array
}

/** A store thread's `workerData` for `options` (`PortThread`). */
export function storeThreadData<T>(options: T): StoreThreadData<T> {
  return { options, foldCells: cells }
}

/** In a store thread: its store's options, its folds counted with the process's from now on. */
export function threadOptions<T>(): T {
  const data = workerData as StoreThreadData<T>
  cells = data.foldCells
  return data.options
}

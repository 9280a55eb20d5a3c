/**
 * How far V8's heap may still grow before its next full collection, and how far it is let grow near the limit.
 *
 * After a full collection V8 lets the heap grow to its growing factor times what the collection kept before it
 * collects again (1.5 with `--heap-growing-percent=50`, src/memory/limit.ts); the pages it takes meanwhile are resident.
 * At a 2.2 GiB live heap that is 1.1 GiB more than the process held when a write was taken under the budget's mark,
 * and a 1M-chunk ingest under `MEMORY_LIMIT=6GiB` stood at 6.40 GiB resident when it was refused
 * (bench/results/memory.log.md, "Fold threads one at a time under a budget"). So the budget counts that growth as held
 * (`heapHeadroom`), and after each full collection the factor is set to what the room under the mark allows
 * (`growingPercentFor`): more frequent collections near the limit instead of pages past it.
 */
import { setFlagsFromString } from 'node:v8'
import { HEAP_GROWING_PERCENT } from './limit.js'

/**
 * The least growth allowed, as a percentage of the live heap: below it V8 would collect again after a few megabytes
 * of promotion and the process would spend its time marking. Past it, the budget refuses writes instead.
 */
export const MIN_GROWING_PERCENT = 10

/** The growing percentage that keeps the heap's growth from `liveBytes` within `roomBytes`, between the least and `most`. */
export function growingPercentFor(roomBytes: number, liveBytes: number, most = HEAP_GROWING_PERCENT): number {
  if (liveBytes <= 0) return most
  return Math.max(MIN_GROWING_PERCENT, Math.min(most, Math.floor((100 * roomBytes) / liveBytes)))
}

/**
 * The pages the heap may still take before V8 collects again: its growth limit (what the last full collection kept,
 * grown by the percentage in force then) less what it has committed now. Pages in V8's pool are not counted as there
 * (they are resident already), so this errs high by them.
 */
export function heapHeadroom(liveBytes: number, committedBytes: number, percent: number): number {
  return Math.max(0, Math.floor(liveBytes * (1 + percent / 100)) - committedBytes)
}

/** Sets V8's growing percentage for the limits it computes at its next full collection (every isolate of the process). */
export function setHeapGrowingPercent(percent: number): void {
  setFlagsFromString(`--heap-growing-percent=${percent}`)
}

/**
 * The fixed growing percentage the process was started with (`--heap-growing-percent=N`, as `scripts/start.sh` sets
 * it; node refuses it in NODE_OPTIONS); undefined when V8 picks its factor itself (up to 4), which the budget then
 * neither counts nor changes.
 */
export function startGrowingPercent(execArgv: readonly string[] = process.execArgv): number | undefined {
  let percent: number | undefined
  for (const arg of execArgv) {
    const match = /^--heap[-_]growing[-_]percent=(\d+)$/.exec(arg)
    if (match) percent = Number(match[1])
  }
  return percent === 0 ? undefined : percent
}

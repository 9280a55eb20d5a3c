/**
 * V8's heap growing factor left to V8 while start-up reads the stores, and the service's fixed one
 * (`--heap-growing-percent`, limit.ts) put back once every step has settled (issue 44). Reading a namespace into memory
 * only adds to the heap: with the factor fixed at 1.5, a full collection ran each time the heap had grown by half, each
 * marking all that was read so far, to find almost nothing to free. The fixed factor is for the ingest that follows,
 * whose garbage it bounds. Figures: bench/results/memory.log.md, "The heap's growth left to V8 during start-up".
 */
import { setFlagsFromString } from 'node:v8'

/** The growing percent in node's own options (`--heap-growing-percent=50`, either spelling), or undefined: V8's own. */
export function fixedGrowingPercent(execArgv: readonly string[] = process.execArgv): number | undefined {
  let found: number | undefined
  for (const option of execArgv) {
    const match = /^--heap[-_]growing[-_]percent=(\d+)$/.exec(option)
    if (match) found = Number(match[1])
  }
  return found !== undefined && found > 0 ? found : undefined
}

/**
 * Lets V8 choose the growing factor until `settled` resolves or rejects, then puts back the one the process was started
 * with. Nothing when it was started without one. V8 reads the flag each time it sets the heap's next limit.
 */
export function growFreelyUntil(settled: Promise<unknown>, execArgv: readonly string[] = process.execArgv): void {
  const fixed = fixedGrowingPercent(execArgv)
  if (fixed === undefined) return
  setFlagsFromString('--heap-growing-percent=0')
  const restore = () => setFlagsFromString(`--heap-growing-percent=${fixed}`)
  settled.then(restore, restore)
}

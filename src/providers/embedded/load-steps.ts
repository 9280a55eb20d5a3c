/**
 * A store's load as a generator of small steps (a snapshot row, a log record), run to its end at once where nothing else
 * waits on the thread (a fold thread) or with the event loop given a turn between steps where the service's does: a 1M
 * start-up's graph loads held the loop for 45 and 18 s at a stretch, /healthz and /readyz went unanswered meanwhile and
 * the other stores' reads waited behind them.
 */
import { setImmediate as nextTurn } from 'node:timers/promises'

/** A load's steps: each `yield` ends one; the generator's return value is what was loaded. */
export type LoadSteps<T> = Generator<void, T, void>

/** Milliseconds a load may hold the event loop before it gives a turn. */
const LOAD_SLICE_MS = 20

/** Every step at once. */
export function runSteps<T>(steps: LoadSteps<T>): T {
  for (;;) {
    const next = steps.next()
    if (next.done) return next.value
  }
}

/** Every step, a turn given to the event loop whenever `sliceMs` has passed since the last (a step is not cut). */
export async function runStepsYielding<T>(steps: LoadSteps<T>, sliceMs = LOAD_SLICE_MS): Promise<T> {
  let since = performance.now()
  for (;;) {
    const next = steps.next()
    if (next.done) return next.value
    if (performance.now() - since >= sliceMs) {
      await nextTurn()
      since = performance.now()
    }
  }
}

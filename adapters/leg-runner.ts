/**
 * The one leg runner every mode uses: a deadline per backend step, an AbortSignal handed to the port so the
 * backend call itself stops when the step times out (a Qdrant HTTP request, a Neo4j transaction, a worker
 * job), and a leg report. What a failed leg does to the request is the mode's choice, stated in its
 * definition: `degrade` (the other legs answer, the report says why this one did not) or `fail` (the
 * request fails, a 503 naming the backend).
 */
import { BackendTimeoutError, ProviderError } from '../src/providers/errors.js'
import type { LegReport } from '../src/kernel/leg-report.js'

/** What a failed leg does to its request. */
type LegFailurePolicy = 'degrade' | 'fail'

/** One leg as a mode declares it: the backend slot it calls and what its failure does. */
export interface LegSpec {
  /** The backend slot whose name a report and a timeout carry (`vectors` → `vector-store:qdrant`). */
  backend: 'embedder' | 'vectors' | 'lexical' | 'graph' | 'episodes'
  /** Which configured read timeout bounds it (`VECTOR_TIMEOUT_MS`, …). */
  timeout: 'embedding' | 'vector' | 'lexical' | 'graph'
  onFailure: LegFailurePolicy
}

/** The legs of a mode, resolved against the deployment: backend names and deadlines. */
export type ResolvedLegs<L extends string> = Record<L, LegRun>

/** Resolves a mode's declared legs with the backends' names and the configured timeouts. */
export function resolveLegs<L extends string>(
  legs: Readonly<Record<L, LegSpec>>,
  backends: Readonly<Record<LegSpec['backend'], string>>,
  timeouts: Readonly<Record<LegSpec['timeout'], number>>
): ResolvedLegs<L> {
  const out = {} as ResolvedLegs<L>
  for (const name of Object.keys(legs) as L[]) {
    const spec = legs[name]
    out[name] = { name, backend: backends[spec.backend], timeoutMs: timeouts[spec.timeout], onFailure: spec.onFailure }
  }
  return out
}

/** A leg ready to run: its name, the backend's name, its deadline and policy. */
export interface LegRun {
  name: string
  backend: string
  timeoutMs: number
  onFailure: LegFailurePolicy
}

export type LegOutcome<T> =
  | { ok: true; value: T; report: LegReport }
  | { ok: false; error: unknown; report: LegReport }

const round = (ms: number) => Math.round(ms * 100) / 100

/**
 * A signal that aborts after `ms` or when `parent` aborts, whichever comes first; its reason is a
 * BackendTimeoutError naming `backend` on the deadline. `clear()` releases the timer.
 */
function deadlineSignal(ms: number, backend: string, parent?: AbortSignal): { signal: AbortSignal; clear(): void } {
  const controller = new AbortController()
  const timer = setTimeout(() => controller.abort(new BackendTimeoutError(backend, `no answer within ${ms} ms`)), ms)
  timer.unref()
  const onParent = () => controller.abort(parent!.reason)
  if (parent) {
    if (parent.aborted) controller.abort(parent.reason)
    else parent.addEventListener('abort', onParent, { once: true })
  }
  return {
    signal: controller.signal,
    clear() {
      clearTimeout(timer)
      parent?.removeEventListener('abort', onParent)
    }
  }
}

/**
 * Runs `work` under the leg's deadline. The signal given to `work` aborts at the deadline (and with
 * `parent`); the result is raced against it too, so a port that ignores its signal still cannot hold the
 * request past the deadline. With `onFailure: 'fail'` a failure is thrown (the request fails); with
 * `degrade` it is returned as a report with status `timeout` or `error` and a reason.
 */
export async function runLeg<T>(leg: LegRun, work: (signal: AbortSignal) => Promise<T>, hitsOf: (value: T) => number, parent?: AbortSignal): Promise<LegOutcome<T>> {
  const started = performance.now()
  const deadline = deadlineSignal(leg.timeoutMs, leg.backend, parent)
  try {
    const aborted = new Promise<never>((_, reject) => {
      if (deadline.signal.aborted) reject(deadline.signal.reason)
      deadline.signal.addEventListener('abort', () => reject(deadline.signal.reason), { once: true })
    })
    aborted.catch(() => {})
    const value = await Promise.race([work(deadline.signal), aborted])
    return { ok: true, value, report: { name: leg.name, status: 'ok', took_ms: round(performance.now() - started), hits: hitsOf(value) } }
  } catch (error) {
    if (leg.onFailure === 'fail') throw error
    const status = error instanceof BackendTimeoutError ? 'timeout' : 'error'
    return { ok: false, error, report: { name: leg.name, status, took_ms: round(performance.now() - started), hits: 0, reason: reasonOf(error) } }
  } finally {
    deadline.clear()
  }
}

/** Runs a leg whose policy is `fail`: its value and report, or the error thrown. */
export async function runRequiredLeg<T>(leg: LegRun, work: (signal: AbortSignal) => Promise<T>, hitsOf: (value: T) => number, parent?: AbortSignal): Promise<{ value: T; report: LegReport }> {
  const outcome = await runLeg({ ...leg, onFailure: 'fail' }, work, hitsOf, parent)
  if (!outcome.ok) throw outcome.error
  return outcome
}

function reasonOf(error: unknown): string {
  return error instanceof ProviderError ? `${error.backend}: ${error.message}` : error instanceof Error ? error.message : String(error)
}

export const skippedLeg = (name: string, reason: string): LegReport => ({ name, status: 'skipped', took_ms: 0, hits: 0, reason })

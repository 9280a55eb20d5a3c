import { BackendTimeoutError, ProviderError } from '../src/providers/errors.js'
import type { LegReport } from '../src/schemas/recall-bundle.js'

export type LegOutcome<T> =
  | { ok: true; value: T; report: LegReport }
  | { ok: false; error: unknown; report: LegReport }

const round = (ms: number) => Math.round(ms * 100) / 100

/** Rejects with BackendTimeoutError after `ms`; the timer never keeps the process alive. */
export function withTimeout<T>(work: Promise<T>, ms: number, backend: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new BackendTimeoutError(backend, `no answer within ${ms} ms`)), ms)
    timer.unref()
  })
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer))
}

/**
 * Runs one backend step with its own timeout and turns the outcome into a leg report: `ok`, `timeout`
 * (BackendTimeoutError naming `backend`) or `error` (anything else, with the message as reason). It never throws.
 */
export async function runLeg<T>(
  name: string,
  backend: string,
  timeoutMs: number,
  work: () => Promise<T>,
  hitsOf: (value: T) => number
): Promise<LegOutcome<T>> {
  const started = performance.now()
  try {
    const value = await withTimeout(work(), timeoutMs, backend)
    return { ok: true, value, report: { name, status: 'ok', took_ms: round(performance.now() - started), hits: hitsOf(value) } }
  } catch (error) {
    const status = error instanceof BackendTimeoutError ? 'timeout' : 'error'
    const reason = error instanceof ProviderError ? `${error.backend}: ${error.message}` : error instanceof Error ? error.message : String(error)
    return { ok: false, error, report: { name, status, took_ms: round(performance.now() - started), hits: 0, reason } }
  }
}

export const skippedLeg = (name: string, reason: string): LegReport => ({ name, status: 'skipped', took_ms: 0, hits: 0, reason })

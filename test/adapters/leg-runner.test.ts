import { describe, expect, it } from 'vitest'
import { runLeg, runRequiredLeg } from '../../adapters/leg-runner.js'
import { BackendTimeoutError, BackendUnavailableError } from '../../src/providers/errors.js'

/** A backend call that only ends when its signal aborts, recording the abort's reason. */
function hangingCall(seen: { aborted?: unknown }) {
  return (signal: AbortSignal) => new Promise<number[]>((_, reject) => {
    signal.addEventListener('abort', () => {
      seen.aborted = signal.reason
      reject(signal.reason)
    })
  })
}

describe('the leg runner', () => {
  it('aborts the backend call at the deadline and reports a timeout naming the backend (degrade)', async () => {
    const seen: { aborted?: unknown } = {}
    const outcome = await runLeg({ name: 'vector', backend: 'vector-store:qdrant', timeoutMs: 30, onFailure: 'degrade' }, hangingCall(seen), (v) => v.length)
    expect(outcome.ok).toBe(false)
    expect(outcome.report.status).toBe('timeout')
    expect(outcome.report.reason).toMatch(/^vector-store:qdrant: no answer within 30 ms$/)
    expect(seen.aborted).toBeInstanceOf(BackendTimeoutError)
  })

  it('answers at the deadline even when the call ignores its signal', async () => {
    const started = performance.now()
    const outcome = await runLeg({ name: 'lexical', backend: 'lexical-index:embedded', timeoutMs: 30, onFailure: 'degrade' },
      () => new Promise<number[]>((resolve) => setTimeout(() => resolve([1]), 2000).unref()), (v) => v.length)
    expect(outcome.report.status).toBe('timeout')
    expect(performance.now() - started).toBeLessThan(1500)
  })

  it('throws with the fail policy, and the call saw the abort', async () => {
    const seen: { aborted?: unknown } = {}
    await expect(runRequiredLeg({ name: 'graph', backend: 'episodic-graph:neo4j', timeoutMs: 20, onFailure: 'fail' }, hangingCall(seen), () => 0))
      .rejects.toBeInstanceOf(BackendTimeoutError)
    expect(seen.aborted).toBeInstanceOf(BackendTimeoutError)
  })

  it('passes the parent signal on: a caller that goes away cancels the call', async () => {
    const seen: { aborted?: unknown } = {}
    const parent = new AbortController()
    const running = runLeg({ name: 'vector', backend: 'vector-store:memory', timeoutMs: 10_000, onFailure: 'degrade' }, hangingCall(seen), (v) => v.length, parent.signal)
    parent.abort(new BackendUnavailableError('client', 'gone'))
    const outcome = await running
    expect(outcome.report.status).toBe('error')
    expect(outcome.report.reason).toBe('client: gone')
    expect(seen.aborted).toBeInstanceOf(BackendUnavailableError)
  })

  it('reports ok with the hit count and took_ms', async () => {
    const outcome = await runLeg({ name: 'vector', backend: 'x', timeoutMs: 1000, onFailure: 'fail' }, async () => [1, 2, 3], (v) => v.length)
    expect(outcome.ok && outcome.value).toEqual([1, 2, 3])
    expect(outcome.report).toMatchObject({ name: 'vector', status: 'ok', hits: 3 })
  })
})

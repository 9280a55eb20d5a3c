import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { Startup } from '../src/startup.js'

const CLOSED_SETTLED = fileURLToPath(new URL('./helpers/startup-closed-settled.ts', import.meta.url))

const tick = (ms = 0) => new Promise((r) => setTimeout(r, ms))

describe('Startup', () => {
  it('runs a step after its predecessors succeed and reports each step with its state and detail', async () => {
    const order: string[] = []
    let openLibrary!: () => void
    const startup = new Startup<string>()
    startup.add({ name: 'library', doing: 'opening', required: true, run: () => new Promise<void>((r) => { openLibrary = r }).then(() => { order.push('library') }) })
    startup.add({ name: 'demo', doing: 'loading the demo', after: ['library'], run: async (progress) => { progress('3 of 5'); order.push('demo'); return 'loaded' } })
    startup.start()
    await tick()
    expect(startup.working).toBe(true)
    expect(startup.report().steps).toEqual([
      { name: 'library', state: 'running', detail: 'opening', attempts: 1 },
      { name: 'demo', state: 'pending', detail: 'waiting for library', attempts: 0 }
    ])
    expect(startup.done).toBe(false)
    openLibrary()
    await startup.settled()
    expect(order).toEqual(['library', 'demo'])
    expect(startup.done).toBe(true)
    expect(startup.report().steps[1]).toEqual({ name: 'demo', state: 'done', detail: 'loaded', attempts: 1 })
  })

  it('retries a failing step with doubling delays until it succeeds', async () => {
    const at: number[] = []
    const startup = new Startup<string>({ firstRetryMs: 40, maxRetryMs: 1000 })
    startup.add({
      name: 'store', doing: 'connecting',
      run: async () => {
        at.push(performance.now())
        if (at.length < 4) throw new Error(`refused ${at.length}`)
      }
    })
    startup.start()
    await startup.settled()
    const first = startup.report().steps[0]!
    expect(first.state).toBe('retrying')
    expect(first.detail).toBe('connecting failed: refused 1')
    expect(first.retry_in_ms).toBeGreaterThan(0)
    while (!startup.done) await tick(10)
    expect(at).toHaveLength(4)
    const gaps = at.slice(1).map((t, i) => t - at[i]!)
    // 40, 80, 160 ms: each wait at least its delay (timers never fire early).
    expect(gaps[0]).toBeGreaterThanOrEqual(39)
    expect(gaps[1]).toBeGreaterThanOrEqual(79)
    expect(gaps[2]).toBeGreaterThanOrEqual(159)
    startup.close()
  })

  it('while a retry runs, the step still says why the last attempt failed; success forgets it', async () => {
    let attempt = 0
    let release!: () => void
    const startup = new Startup<string>({ firstRetryMs: 5, maxRetryMs: 5 })
    startup.add({
      name: 'store', doing: 'connecting', required: true,
      run: async () => {
        attempt += 1
        if (attempt === 1) throw new Error('3 masters have no replica')
        await new Promise<void>((r) => { release = r })
        return 'connected'
      }
    })
    startup.start()
    while (attempt < 2) await tick(2)
    expect(startup.report().steps[0]).toEqual({ name: 'store', state: 'running', detail: 'connecting, again; the last attempt failed: 3 masters have no replica', attempts: 2 })
    expect(startup.blocking(['store']).map((s) => s.detail)).toEqual(['connecting, again; the last attempt failed: 3 masters have no replica'])
    release()
    while (!startup.done) await tick(2)
    expect(startup.report().steps[0]).toEqual({ name: 'store', state: 'done', detail: 'connected', attempts: 2 })
    startup.close()
  })

  it('holds requests back during a first attempt; afterwards only for required steps', async () => {
    const startup = new Startup<string>({ firstRetryMs: 60_000 })
    let failOptional!: (e: Error) => void
    let failRequired!: (e: Error) => void
    startup.add({ name: 'optional', doing: 'loading', run: () => new Promise((_, reject) => { failOptional = reject }) })
    startup.add({ name: 'required', doing: 'opening', required: true, run: () => new Promise((_, reject) => { failRequired = reject }) })
    // Before start nothing has been tried: both hold requests back.
    expect(startup.blocking(['optional', 'required', 'unknown']).map((s) => s.name)).toEqual(['optional', 'required'])
    startup.start()
    await tick()
    expect(startup.blocking(['optional', 'required']).map((s) => s.name)).toEqual(['optional', 'required'])
    failOptional(new Error('down'))
    failRequired(new Error('down'))
    await startup.settled()
    expect(startup.blocking(['optional', 'required']).map((s) => s.name)).toEqual(['required'])
    expect(startup.blocking(['optional'])).toEqual([])
    startup.close()
  })

  it('settled() does not wait for a step whose predecessor keeps failing, and such a step holds nothing back', async () => {
    const startup = new Startup<string>({ firstRetryMs: 60_000 })
    startup.add({ name: 'store', doing: 'connecting', run: async () => { throw new Error('refused') } })
    startup.add({ name: 'demo', doing: 'loading', after: ['store'], run: async () => undefined })
    startup.add({ name: 'names', doing: 'indexing', after: ['demo'], run: async () => undefined })
    expect(startup.blocking(['demo', 'names']).map((s) => s.name)).toEqual(['demo', 'names'])
    startup.start()
    await startup.settled()
    expect(startup.report().steps.map((s) => s.state)).toEqual(['retrying', 'pending', 'pending'])
    expect(startup.blocking(['store', 'demo', 'names'])).toEqual([])
    // Nothing is at work: the steps wait for a retry of the store.
    expect(startup.working).toBe(false)
    startup.close()
  })

  it('settled() resolves after close(), even for steps that never ran (it spun on their ended first attempts)', async () => {
    // In a child process: a spinning settled() holds the event loop, so only a kill from outside can end it.
    const out = await new Promise<string>((resolve) => {
      execFile(process.execPath, ['--import', 'tsx', CLOSED_SETTLED], { timeout: 20_000, killSignal: 'SIGKILL' }, (error, stdout) => {
        resolve(error ? `failed: ${error.killed ? 'killed after 20 s' : error.message}` : stdout.trim())
      })
    })
    expect(out).toBe('settled')
  }, 30_000)
})

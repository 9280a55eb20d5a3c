/**
 * A `first` step (the check that no other process writes the same stores) comes before any other work: the
 * others start once it has succeeded or failed in a way retrying may fix, never after a fatal failure; and
 * `close()` awaits each step's `stop` (a registration released before the process exits).
 */
import { describe, expect, it } from 'vitest'
import { Startup } from '../src/startup.js'

const tick = (ms = 0) => new Promise((r) => setTimeout(r, ms))
const fatal = (message: string) => Object.assign(new Error(message), { fatal: true })

describe('a first step', () => {
  it('holds every other step, also one added before it, until it has succeeded', async () => {
    const order: string[] = []
    let pass!: () => void
    const startup = new Startup<string>()
    startup.add({ name: 'library', doing: 'opening', run: async () => { order.push('library') } })
    startup.add({ name: 'check', doing: 'checking', first: true, run: () => new Promise<void>((r) => { pass = r }).then(() => { order.push('check') }) })
    startup.start()
    await tick(20)
    expect(order).toEqual([])
    expect(startup.report().steps[0]).toMatchObject({ name: 'library', state: 'pending', detail: 'waiting for check', attempts: 0 })
    pass()
    await startup.settled()
    expect(order).toEqual(['check', 'library'])
  })

  it('lets the others go on after an attempt that failed in a way retrying may fix', async () => {
    const startup = new Startup<string>({ firstRetryMs: 60_000 })
    startup.add({ name: 'check', doing: 'checking', first: true, run: async () => { throw new Error('registry unreachable') } })
    startup.add({ name: 'library', doing: 'opening', run: async () => 'opened' })
    startup.start()
    await startup.settled()
    expect(startup.report().steps.map((s) => [s.name, s.state])).toEqual([['check', 'retrying'], ['library', 'done']])
    await startup.close()
  })

  it('starts no other step after a fatal failure, with or without onFatal', async () => {
    for (const onFatal of [undefined, () => undefined]) {
      let ran = false
      const startup = new Startup<string>({ firstRetryMs: 60_000, ...(onFatal ? { onFatal } : {}) })
      startup.add({ name: 'check', doing: 'checking', first: true, run: async () => { throw fatal('another writer') } })
      startup.add({ name: 'library', doing: 'opening', run: async () => { ran = true } })
      startup.start()
      await startup.settled()
      await tick(20)
      expect(ran).toBe(false)
      expect(startup.report().steps[1]).toMatchObject({ state: 'pending', attempts: 0 })
      await startup.close()
    }
  })
})

describe('close', () => {
  it('resolves once every step\'s stop has', async () => {
    let stopped = false
    const startup = new Startup<string>()
    startup.add({ name: 'check', doing: 'checking', run: async () => {}, stop: () => tick(50).then(() => { stopped = true }) })
    startup.start()
    await startup.settled()
    await startup.close()
    expect(stopped).toBe(true)
  })
})

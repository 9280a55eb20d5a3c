import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'
import { compactionWaits, TaskQueue } from '../../../src/providers/embedded/task-queue.js'

/** A promise and its resolver, so a task holds the queue until the test lets it go. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void
  const opened = new Promise<void>((resolve) => (open = resolve))
  return { opened, open }
}

const counted = () => ({ ...compactionWaits, maxMsByStore: { ...compactionWaits.maxMsByStore } })

describe('TaskQueue', () => {
  it('runs tasks one after another in the order queued, a failed one not stopping those behind it', async () => {
    const queue = new TaskQueue('test')
    const order: string[] = []
    const first = gate()
    const a = queue.run(async () => { order.push('a start'); await first.opened; order.push('a end') })
    const b = queue.run(async () => { order.push('b'); throw new Error('b failed') })
    const c = queue.run(async () => { order.push('c'); return 3 })
    await sleep(5)
    expect(order).toEqual(['a start'])
    first.open()
    await a
    await expect(b).rejects.toThrow('b failed')
    await expect(c).resolves.toBe(3)
    expect(order).toEqual(['a start', 'a end', 'b', 'c'])
    await queue.tail
  })

  it('counts what a task waited behind a compaction step, and nothing for a wait behind other tasks', async () => {
    const queue = new TaskQueue('test')
    const held = gate()
    const before = counted()
    const write = queue.run(() => held.opened)
    const step = gate()
    let stepRan = 0
    const compaction = queue.runCompaction(async () => {
      const t = performance.now()
      await step.opened
      stepRan = performance.now() - t
    })
    const queuedAt = performance.now()
    let startedAt = 0
    const behind = queue.run(async () => { startedAt = performance.now() })
    // behind an ordinary task: no compaction wait yet
    await sleep(30)
    held.open()
    await write
    await sleep(40)
    step.open()
    await compaction
    await behind
    const after = counted()
    expect(stepRan).toBeGreaterThanOrEqual(35)
    expect(after.tasks - before.tasks).toBe(1)
    const waited = after.totalMs - before.totalMs
    // the whole step, and not the time spent behind the ordinary task before it
    expect(waited).toBeGreaterThanOrEqual(stepRan - 1)
    expect(waited).toBeLessThanOrEqual(stepRan + 1)
    expect(waited).toBeLessThan(startedAt - queuedAt - 25)
    expect(after.maxMs).toBeGreaterThanOrEqual(waited - 1)
    expect(compactionWaits.maxMsByStore['test']).toBeGreaterThanOrEqual(waited - 1)
  })

  it('counts only the rest of a step already running when the task was queued, and nothing once it is over', async () => {
    const queue = new TaskQueue('test')
    const step = gate()
    const stepStarted = performance.now()
    const compaction = queue.runCompaction(() => step.opened)
    await sleep(40)
    const before = counted()
    const queuedAt = performance.now()
    const behind = queue.run(async () => undefined)
    await sleep(20)
    step.open()
    await compaction
    await behind
    const waitedMs = compactionWaits.totalMs - before.totalMs
    const whole = performance.now() - stepStarted
    expect(compactionWaits.tasks - before.tasks).toBe(1)
    expect(waitedMs).toBeGreaterThanOrEqual(15)
    expect(waitedMs).toBeLessThanOrEqual(performance.now() - queuedAt)
    expect(waitedMs).toBeLessThan(whole - 35)

    const later = counted()
    await queue.run(async () => undefined)
    expect(compactionWaits.tasks).toBe(later.tasks)
    expect(compactionWaits.totalMs).toBe(later.totalMs)
  })

  it('does not count a compaction step that waited behind another as a task that waited', async () => {
    const queue = new TaskQueue('test')
    const before = counted()
    const first = gate()
    const one = queue.runCompaction(() => first.opened)
    const two = queue.runCompaction(async () => undefined)
    await sleep(10)
    first.open()
    await Promise.all([one, two])
    expect(compactionWaits.tasks).toBe(before.tasks)
  })
})

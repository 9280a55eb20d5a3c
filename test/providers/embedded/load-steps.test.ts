/**
 * A load's steps run at once (`runSteps`) or with the event loop given turns between them (`runStepsYielding`): the
 * same value either way; a turn whenever a slice has passed (every step for a slice of 0, none for a slice longer than
 * the load), never inside a step; a step that throws rejects the load and runs no step after it.
 */
import { describe, expect, it } from 'vitest'
import { runSteps, runStepsYielding, type LoadSteps } from '../../../src/providers/embedded/load-steps.js'

/** Five steps summing 1..5, noting which tick of the event loop each ran in. */
function* summing(ticks: { now: number }, ranAt: number[], failAt?: number): LoadSteps<number> {
  let sum = 0
  for (let i = 1; i <= 5; i++) {
    if (i === failAt) throw new Error(`step ${i} failed`)
    ranAt.push(ticks.now)
    sum += i
    yield
  }
  return sum
}

/** Counts the event loop's turns (a setImmediate chain) until stopped. */
function countTurns(): { ticks: { now: number }; stop: () => void } {
  const ticks = { now: 0 }
  let going = true
  const turn = () => {
    if (!going) return
    ticks.now += 1
    setImmediate(turn)
  }
  setImmediate(turn)
  return { ticks, stop: () => { going = false } }
}

describe('a load run in steps', () => {
  it('gives the same value at once and in turns', async () => {
    expect(runSteps(summing({ now: 0 }, []))).toBe(15)
    expect(await runStepsYielding(summing({ now: 0 }, []), 0)).toBe(15)
  })

  it('gives the event loop a turn between steps once a slice has passed, and none for a slice longer than the load', async () => {
    const every = countTurns()
    const ranAt: number[] = []
    await runStepsYielding(summing(every.ticks, ranAt), 0)
    every.stop()
    // each step after the first ran after a turn of its own
    for (let i = 1; i < ranAt.length; i++) expect(ranAt[i]).toBeGreaterThan(ranAt[i - 1]!)

    const none = countTurns()
    const together: number[] = []
    await runStepsYielding(summing(none.ticks, together), 60_000)
    none.stop()
    expect(new Set(together).size).toBe(1)
  })

  it('rejects with a step\'s failure and runs no step after it', async () => {
    const ranAt: number[] = []
    await expect(runStepsYielding(summing({ now: 0 }, ranAt, 3), 0)).rejects.toThrow('step 3 failed')
    expect(ranAt).toHaveLength(2)
    expect(() => runSteps(summing({ now: 0 }, [], 1))).toThrow('step 1 failed')
  })
})

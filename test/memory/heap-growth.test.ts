import { describe, expect, it } from 'vitest'
import { MemoryBudget, MemoryBudgetError, type MemoryProbe } from '../../src/memory/budget.js'
import { growingPercentFor, heapHeadroom, MIN_GROWING_PERCENT, startGrowingPercent } from '../../src/memory/heap-growth.js'

const MiB = 2 ** 20
const GiB = 2 ** 30

describe('the heap\'s growth', () => {
  it('is held to the room left, between 10% and the percentage the process started with', () => {
    expect(MIN_GROWING_PERCENT).toBe(10)
    // 1 GiB of room over a 4 GiB live heap: a quarter of it
    expect(growingPercentFor(GiB, 4 * GiB)).toBe(25)
    expect(growingPercentFor(3 * GiB, 2 * GiB)).toBe(50)
    expect(growingPercentFor(3 * GiB, 2 * GiB, 30)).toBe(30)
    expect(growingPercentFor(0, 2 * GiB)).toBe(10)
    expect(growingPercentFor(-GiB, 2 * GiB)).toBe(10)
    expect(growingPercentFor(GiB, 0)).toBe(50)
  })

  it('may still take its growth limit (live heap grown by the percentage) less what it has committed', () => {
    expect(heapHeadroom(2 * GiB, 2.5 * GiB, 50)).toBe(0.5 * GiB)
    expect(heapHeadroom(2 * GiB, 2 * GiB, 10)).toBe(Math.floor(0.1 * 2 * GiB))
    expect(heapHeadroom(2 * GiB, 3.5 * GiB, 50)).toBe(0)
  })

  it('is fixed only when the process was started with a growing percentage', () => {
    expect(startGrowingPercent(['--max-old-space-size=4608', '--heap-growing-percent=50', '--import', 'tsx'])).toBe(50)
    expect(startGrowingPercent(['--heap_growing_percent=30'])).toBe(30)
    expect(startGrowingPercent(['--heap-growing-percent=0'])).toBeUndefined()
    expect(startGrowingPercent(['--import', 'tsx'])).toBeUndefined()
  })
})

describe('MemoryBudget and the heap\'s growth', () => {
  /** A process whose figures the test sets; `gc()` is a full collection that kept `heapUsed`. */
  function process(figures: { rss: number; heapUsed: number; committed: number }) {
    const probe: MemoryProbe = { rss: () => figures.rss, heapUsed: () => figures.heapUsed, heapLimit: () => 4 * GiB, heapCommitted: () => figures.committed }
    const set: number[] = []
    const told: number[] = []
    const budget = new MemoryBudget({ bytes: 1000 * MiB, source: 'MEMORY_LIMIT' }, probe, {
      growingPercent: 50, setGrowingPercent: (p) => set.push(p), headroom: (bytes) => told.push(bytes)
    })
    return { figures, budget, set, told }
  }
  const noSizes = async () => []

  it('counts what the heap may still take before its next collection with resident memory against the 90% mark', async () => {
    const { figures, budget, set, told } = process({ rss: 750 * MiB, heapUsed: 200 * MiB, committed: 200 * MiB })
    // before any full collection nothing is known of the live heap
    expect(budget.usage()).toMatchObject({ heap_headroom_bytes: 0, heap_growing_percent: 50 })
    budget.fullCollectionEnded()
    // room 150 MiB under the mark allows 75%: the start's 50 stands, and may take 100 MiB (200 × 1.5 − 200)
    expect(set).toEqual([])
    expect(budget.usage()).toMatchObject({ heap_headroom_bytes: 100 * MiB, rss_refuse_at_bytes: 900 * MiB, refusing_writes: false })
    expect(told.at(-1)).toBe(100 * MiB)
    await expect(budget.assertRoom(noSizes)).resolves.toBeUndefined()
    // the heap took 60 MiB of it: 40 left, 810 + 40 under 900
    Object.assign(figures, { rss: 810 * MiB, committed: 260 * MiB })
    expect(budget.usage()).toMatchObject({ heap_headroom_bytes: 40 * MiB, refusing_writes: false })
    // 870 resident is under the mark alone, not with the 40 MiB
    figures.rss = 870 * MiB
    const refused = await budget.assertRoom(noSizes).catch((e: unknown) => e)
    expect(refused).toBeInstanceOf(MemoryBudgetError)
    expect((refused as Error).message).toContain('the process holds 870.0 MiB resident, and its heap may take 40.0 MiB more before it is collected, of MEMORY_LIMIT 1000.0 MiB')
    budget.close()
  })

  it('holds V8\'s growth to the room under the mark after each full collection, counting the old percentage until the next', async () => {
    const { figures, budget, set } = process({ rss: 850 * MiB, heapUsed: 200 * MiB, committed: 200 * MiB })
    budget.fullCollectionEnded()
    // 50 MiB of room over a 200 MiB live heap: 25%, for the limit V8 computes at its next collection
    expect(set).toEqual([25])
    expect(budget.usage()).toMatchObject({ heap_growing_percent: 25, heap_headroom_bytes: 100 * MiB, refusing_writes: true })
    // at the next collection V8 computed the limit with 25%: 850 + 50 reaches the mark
    figures.rss = 840 * MiB
    budget.fullCollectionEnded()
    expect(set).toEqual([25, 30])
    expect(budget.usage()).toMatchObject({ heap_headroom_bytes: 50 * MiB, refusing_writes: false })
    await expect(budget.assertRoom(noSizes)).resolves.toBeUndefined()
    // 10 MiB of room: never below 10%
    figures.rss = 890 * MiB
    budget.fullCollectionEnded()
    expect(set).toEqual([25, 30, 10])
    // free space in the committed heap is room too: 100 MiB committed beyond the live heap lets it grow 55%, held to 50
    figures.committed = 300 * MiB
    budget.fullCollectionEnded()
    expect(set).toEqual([25, 30, 10, 50])
    figures.committed = 200 * MiB
    budget.fullCollectionEnded()
    expect(set).toEqual([25, 30, 10, 50, 10])
    // the close sets back what the process started with
    budget.close()
    expect(set).toEqual([25, 30, 10, 50, 10, 50])
  })

  it('counts the heap limits of the fold threads running as held, naming them when it refuses', async () => {
    let reserved = 200 * MiB
    const budget = new MemoryBudget({ bytes: 1000 * MiB, source: 'MEMORY_LIMIT' },
      { rss: () => 750 * MiB, heapUsed: () => 200 * MiB, heapLimit: () => 4 * GiB, heapCommitted: () => 300 * MiB }, { foldHeapsReserved: () => reserved, foldWaitMs: 0 })
    // 750 resident and 200 kept for a fold's heap reach the 900 MiB mark
    expect(budget.usage()).toMatchObject({ fold_heaps_reserved_bytes: 200 * MiB, refusing_writes: true })
    const refused = await budget.assertRoom(noSizes).catch((e: unknown) => e)
    expect((refused as Error).message).toContain('(writes stop at 90%, 900.0 MiB with 200.0 MiB kept for the heaps of the graphs\' fold threads running)')
    // the fold ended
    reserved = 0
    expect(budget.usage()).toMatchObject({ fold_heaps_reserved_bytes: 0, refusing_writes: false })
    await expect(budget.assertRoom(noSizes)).resolves.toBeUndefined()
    budget.close()
  })

  it('neither counts nor changes the growth of a process that V8 sizes itself (no fixed percentage at start)', async () => {
    const set: number[] = []
    const budget = new MemoryBudget({ bytes: 1000 * MiB, source: 'MEMORY_LIMIT' },
      { rss: () => 850 * MiB, heapUsed: () => 200 * MiB, heapLimit: () => 4 * GiB, heapCommitted: () => 200 * MiB }, { setGrowingPercent: (p) => set.push(p) })
    budget.fullCollectionEnded()
    expect(budget.usage()).toMatchObject({ heap_headroom_bytes: 0, heap_growing_percent: null, refusing_writes: false })
    await expect(budget.assertRoom(noSizes)).resolves.toBeUndefined()
    budget.close()
    expect(set).toEqual([])
  })
})

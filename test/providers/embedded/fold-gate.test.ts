/**
 * Fold threads at once (`fold-gate.ts`, `FOLD_THREADS`): a fold past the limit waits for a turn, counted across the
 * process's threads, a store in a thread of its own included.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { foldRuns } from '../../../src/providers/embedded/fold-client.js'
import { foldHeapsReserved, foldThreadsRunning, foldTurn, setFoldHeapHeadroom, setFoldMemoryLimit, setFoldThreadsAtOnce } from '../../../src/providers/embedded/fold-gate.js'
import { EmbeddedKnowledgeGraphStore } from '../../../src/providers/knowledge-graph/embedded.js'
import { ThreadedKnowledgeGraphStore } from '../../../src/providers/knowledge-graph/threaded.js'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const entity = (i: number) => ({ id: `e${i}`, name: `实体${i}`, aliases: [], source_chunk_ids: [] })

afterEach(() => {
  setFoldThreadsAtOnce(0)
  setFoldMemoryLimit(0)
  setFoldHeapHeadroom(0)
})

/** Runs `test` with a new folder, removed after it. */
async function inTempDir(prefix: string, test: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), prefix))
  try {
    await test(dir)
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

/** Whether `promise` has settled within `ms`. */
async function settledWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let settled = false
  void promise.then(() => { settled = true }, () => { settled = true })
  await sleep(ms)
  return settled
}

describe('fold threads at once', () => {
  it('gives a turn at once below the limit, and the next one only when a turn is released', async () => {
    setFoldThreadsAtOnce(2)
    const first = await foldTurn()
    const second = await foldTurn()
    expect(foldThreadsRunning()).toBe(2)
    const third = foldTurn()
    expect(await settledWithin(third, 100)).toBe(false)
    first()
    first() // a second release of the same turn gives nothing back
    const released = await third
    expect(foldThreadsRunning()).toBe(2)
    const fourth = foldTurn()
    expect(await settledWithin(fourth, 100)).toBe(false)
    second()
    released()
    ;(await fourth)()
    expect(foldThreadsRunning()).toBe(0)
  })

  it('gives any number of turns with 0, and a raised limit lets a waiting fold go', async () => {
    setFoldThreadsAtOnce(0)
    const turns = await Promise.all(Array.from({ length: 5 }, () => foldTurn()))
    expect(foldThreadsRunning()).toBe(5)
    setFoldThreadsAtOnce(5)
    const sixth = foldTurn()
    expect(await settledWithin(sixth, 100)).toBe(false)
    setFoldThreadsAtOnce(6)
    turns.push(await sixth)
    for (const release of turns) release()
    expect(foldThreadsRunning()).toBe(0)
    expect(() => setFoldThreadsAtOnce(-1)).toThrow(RangeError)
  })

  it('waits for memory: a fold whose heap would take resident memory past the limit starts once it fits, and a signal gives the wait up', async () => {
    const MiB = 2 ** 20
    const resident = process.memoryUsage.rss()
    // resident memory and 100 MiB do not fit in what is resident now
    setFoldMemoryLimit(resident)
    const waiting = foldTurn(100)
    expect(await settledWithin(waiting, 600)).toBe(false)
    expect(foldThreadsRunning()).toBe(0)
    // room for it: the next look (every 250 ms) takes the turn
    setFoldMemoryLimit(resident + 4096 * MiB)
    ;(await waiting)()
    // a fold without a heap limit (run again after it ran out) is not held
    setFoldMemoryLimit(resident)
    ;(await foldTurn())()
    const controller = new AbortController()
    const given = foldTurn(100, controller.signal)
    expect(await settledWithin(given, 300)).toBe(false)
    controller.abort()
    await expect(given).rejects.toMatchObject({ name: 'AbortError' })
    expect(foldThreadsRunning()).toBe(0)
  })

  it('counts the main heap\'s headroom as held: a fold that fits beside resident memory waits while the heap may still grow past the limit', async () => {
    const MiB = 2 ** 20
    // 1 GiB over what is resident now: room for a 100 MiB fold, not with 2 GiB the heap may still take
    setFoldMemoryLimit(process.memoryUsage.rss() + 1024 * MiB)
    setFoldHeapHeadroom(2048 * MiB)
    const waiting = foldTurn(100)
    expect(await settledWithin(waiting, 600)).toBe(false)
    setFoldHeapHeadroom(0)
    ;(await waiting)()
    expect(foldThreadsRunning()).toBe(0)
  })

  it('keeps the heap limits of the folds running reserved until they end, and counts them before the next fold starts', async () => {
    const MiB = 2 ** 20
    setFoldThreadsAtOnce(2)
    // room for 1 GiB of fold heaps beside what is resident now: a 600 MiB fold, then not a second
    setFoldMemoryLimit(process.memoryUsage.rss() + 1024 * MiB)
    const first = await foldTurn(600)
    expect(foldHeapsReserved()).toBe(600 * MiB)
    const second = foldTurn(600)
    expect(await settledWithin(second, 600)).toBe(false)
    first()
    first()
    const secondRelease = await second
    expect(foldHeapsReserved()).toBe(600 * MiB)
    secondRelease()
    expect(foldHeapsReserved()).toBe(0)
    // a fold without a heap limit reserves nothing
    ;(await foldTurn())()
    expect(foldHeapsReserved()).toBe(0)
  })

  it('puts off a store\'s fold that waits for memory when the store closes: the close does not wait for memory, and every write is read back', async () => {
    await inTempDir('recall-fold-memory-', async (dir) => {
      setFoldMemoryLimit(process.memoryUsage.rss())
      const here = foldRuns.length
      const store = new EmbeddedKnowledgeGraphStore({ dir, compactionFloorBytes: 0 })
      for (let i = 0; i < 4; i++) await store.upsert('default', { entities: [entity(i)] })
      await sleep(500)
      expect(foldRuns.length).toBe(here)
      const closing = store.close()
      expect(await settledWithin(closing, 3000)).toBe(true)
      await closing
      expect(foldRuns.length).toBe(here)
      setFoldMemoryLimit(0)
      const reopened = new EmbeddedKnowledgeGraphStore({ dir })
      expect(await reopened.count('default')).toEqual({ entities: 4, relations: 0 })
      await reopened.close()
    })
  }, 60_000)

  it('holds a store\'s fold until a turn is free, and the store\'s writes go on meanwhile', async () => {
    await inTempDir('recall-fold-gate-', async (dir) => {
      setFoldThreadsAtOnce(1)
      const held = await foldTurn()
      const here = foldRuns.length
      const store = new EmbeddedKnowledgeGraphStore({ dir, compactionFloorBytes: 0 })
      for (let i = 0; i < 3; i++) await store.upsert('default', { entities: [entity(i)] })
      // a fold is due after the writes above; it waits for the turn this test holds
      await sleep(500)
      expect(foldRuns.length).toBe(here)
      await store.upsert('default', { entities: [entity(3)] })
      expect(await store.count('default')).toEqual({ entities: 4, relations: 0 })
      const heldFor = 500
      held()
      for (let i = 0; i < 200 && foldRuns.length === here; i++) await sleep(25)
      const run = foldRuns.at(-1)!
      expect(foldRuns.length).toBeGreaterThan(here)
      expect(run.kind).toBe('knowledge-graph')
      expect(run.waitedMs).toBeGreaterThanOrEqual(heldFor - 50)
      expect(run.wallMs).toBeGreaterThanOrEqual(run.waitedMs)
      await store.close()
      const reopened = new EmbeddedKnowledgeGraphStore({ dir })
      expect(await reopened.count('default')).toEqual({ entities: 4, relations: 0 })
      await reopened.close()
    })
  }, 60_000)

  it('counts a store thread\'s folds with the process\'s: its fold waits for a turn held here and gives its turn back to the shared count', async () => {
    await inTempDir('recall-fold-gate-thread-', async (dir) => {
      setFoldThreadsAtOnce(1)
      const held = await foldTurn()
      const store = new ThreadedKnowledgeGraphStore({ dir, compactionFloorBytes: 0 })
      for (let i = 0; i < 3; i++) await store.upsert('default', { entities: [entity(i)] })
      await sleep(800)
      // the thread's fold is due and waits: nothing folded in the thread
      expect((await store.threadCounters(true)).foldRuns).toEqual([])
      held()
      let runs = (await store.threadCounters(true)).foldRuns
      for (let i = 0; i < 200 && runs.length === 0; i++) {
        await sleep(25)
        runs = (await store.threadCounters(true)).foldRuns
      }
      expect(runs.map((run) => run.kind)).toEqual(['knowledge-graph'])
      expect(runs[0]!.waitedMs).toBeGreaterThanOrEqual(700)
      // every turn is back: the count in shared memory is the thread's too
      expect(foldThreadsRunning()).toBe(0)
      await store.close()
    })
  }, 60_000)
})

import { describe, expect, it } from 'vitest'
import { RunQueue, type RunSlot } from '../../src/providers/embedder/run-queue.js'

/** A session whose runs finish when the test says: records which texts it was given. */
class HeldSlot implements RunSlot {
  readonly taken: string[] = []
  readonly #open: Array<() => void> = []
  constructor(readonly name: string) {}
  run(texts: readonly string[]): Promise<Float32Array[]> {
    this.taken.push(...texts)
    return new Promise((resolve) => this.#open.push(() => resolve(texts.map(() => new Float32Array([1])))))
  }
  finish(): void {
    this.#open.shift()?.()
  }
}

const tick = () => new Promise((r) => setImmediate(r))

describe('the run queue with a session for lone runs', () => {
  it('gives a lone run to the in-process session while every session process is free', async () => {
    const pool = [new HeldSlot('p1'), new HeldSlot('p2')]
    const alone = new HeldSlot('alone')
    const queue = new RunQueue(pool, alone)
    const a = queue.submit(['a'])
    expect(alone.taken).toEqual(['a'])
    alone.finish()
    await a
    const b = queue.submit(['b'])
    expect(alone.taken).toEqual(['a', 'b'])
    expect(pool.flatMap((p) => p.taken)).toEqual([])
    alone.finish()
    await b
  })

  it('sends a run that arrives while another is out to the session processes', async () => {
    const pool = [new HeldSlot('p1'), new HeldSlot('p2')]
    const alone = new HeldSlot('alone')
    const queue = new RunQueue(pool, alone)
    const runs = [queue.submit(['a']), queue.submit(['b']), queue.submit(['c']), queue.submit(['d'])]
    // a alone; b and c on the two processes; d waits for a process (the lone session takes only lone runs).
    expect(alone.taken).toEqual(['a'])
    expect(pool.flatMap((p) => p.taken).sort()).toEqual(['b', 'c'])
    expect(queue.busy).toBe(3)
    expect(queue.backlog().queued).toBe(1)
    alone.finish()
    await tick()
    expect(alone.taken).toEqual(['a'])
    expect(queue.backlog().queued).toBe(1)
    pool[0]!.finish()
    await tick()
    expect(pool.flatMap((p) => p.taken).sort()).toEqual(['b', 'c', 'd'])
    pool[0]!.finish()
    pool[1]!.finish()
    await Promise.all(runs)
    expect(queue.busy).toBe(0)
  })

  it('does not take a lone run in process while a session process still runs', async () => {
    const pool = [new HeldSlot('p1'), new HeldSlot('p2')]
    const alone = new HeldSlot('alone')
    const queue = new RunQueue(pool, alone)
    const first = [queue.submit(['a']), queue.submit(['b'])]
    alone.finish()
    await tick()
    // b still runs on a process: the next run goes to the other process, not in process.
    const c = queue.submit(['c'])
    expect(alone.taken).toEqual(['a'])
    expect(pool.flatMap((p) => p.taken).sort()).toEqual(['b', 'c'])
    pool[0]!.finish()
    pool[1]!.finish()
    await Promise.all([...first, c])
  })

  it('without a lone-run session, every run goes to the sessions in turn', async () => {
    const pool = [new HeldSlot('p1')]
    const queue = new RunQueue(pool)
    const runs = [queue.submit(['a']), queue.submit(['b'])]
    expect(pool[0]!.taken).toEqual(['a'])
    pool[0]!.finish()
    await tick()
    expect(pool[0]!.taken).toEqual(['a', 'b'])
    pool[0]!.finish()
    await Promise.all(runs)
  })
})

describe('the run queue with pipelining', () => {
  const texts = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `${tag}${i}`)

  it('hands a short run to a session still running a short run once every session is busy, one at most', async () => {
    const pool = [new HeldSlot('s1'), new HeldSlot('s2')]
    const queue = new RunQueue(pool, undefined, { pipeline: true })
    const runs = ['a', 'b', 'c', 'd', 'e'].map((t) => queue.submit([t]))
    // a and b start on the two sessions; c and d go behind them; e waits in the queue.
    expect(pool.map((p) => p.taken.length)).toEqual([2, 2])
    expect(queue.backlog().queued).toBe(1)
    expect(queue.busy).toBe(2)
    pool[0]!.finish()
    await tick()
    // s1 now runs its second run, which is short: it takes e behind it.
    expect(queue.backlog().queued).toBe(0)
    expect(pool[0]!.taken).toHaveLength(3)
    for (let i = 0; i < 3; i++) pool.forEach((p) => p.finish())
    await Promise.all(runs)
    expect(queue.busy).toBe(0)
  })

  it('puts nothing behind a long run, and a long run behind nothing', async () => {
    const pool = [new HeldSlot('s1')]
    const queue = new RunQueue(pool, undefined, { pipeline: true })
    const long = queue.submit(texts(32, 'p'))
    const short = queue.submit(['q'])
    expect(pool[0]!.taken).toHaveLength(32)
    expect(queue.backlog().queued).toBe(1)
    pool[0]!.finish()
    await tick()
    expect(pool[0]!.taken.at(-1)).toBe('q')
    // the session runs a short run now; a long one still waits for it to be free.
    const longAgain = queue.submit(texts(8, 'r'))
    expect(queue.backlog().queued).toBe(1)
    pool[0]!.finish()
    await tick()
    expect(pool[0]!.taken.at(-1)).toBe('r7')
    pool[0]!.finish()
    await Promise.all([long, short, longAgain])
  })

  it('without pipelining, a busy session takes nothing more', async () => {
    const pool = [new HeldSlot('s1')]
    const queue = new RunQueue(pool)
    const runs = [queue.submit(['a']), queue.submit(['b'])]
    expect(pool[0]!.taken).toEqual(['a'])
    expect(queue.backlog().queued).toBe(1)
    pool[0]!.finish()
    await tick()
    pool[0]!.finish()
    await Promise.all(runs)
  })
})

describe('the run queue with a session on this thread for overflow', () => {
  it('gives an inline run to the overflow session only when no other session can take it, and keeps the last session for the rest', async () => {
    const pool = [new HeldSlot('s1'), new HeldSlot('s2')]
    const overflow = new HeldSlot('here')
    const queue = new RunQueue(pool, undefined, { pipeline: true, overflow })
    const runs = ['a', 'b', 'c', 'd'].map((t) => queue.submit([t], undefined, true))
    // a on s1 (a lone query goes to a session thread), b behind it, c here, d waits: s2 takes no inline run.
    expect(pool[0]!.taken).toEqual(['a', 'b'])
    expect(overflow.taken).toEqual(['c'])
    expect(pool[1]!.taken).toEqual([])
    expect(queue.backlog().queued).toBe(1)
    expect(queue.busy).toBe(2)
    overflow.finish()
    await tick()
    expect(overflow.taken).toEqual(['c', 'd'])
    overflow.finish()
    pool[0]!.finish()
    pool[0]!.finish()
    await Promise.all(runs)
    expect(queue.busy).toBe(0)
  })

  it('never gives a run that is not inline to the overflow session; such runs take the kept session too', async () => {
    const pool = [new HeldSlot('s1'), new HeldSlot('s2')]
    const overflow = new HeldSlot('here')
    const queue = new RunQueue(pool, undefined, { pipeline: true, overflow })
    const long = (tag: string) => Array.from({ length: 8 }, (_, i) => `${tag}${i}`)
    const runs = [queue.submit(long('p')), queue.submit(long('q')), queue.submit(long('r'))]
    expect(pool.map((p) => p.taken.length).sort()).toEqual([8, 8])
    expect(overflow.taken).toEqual([])
    expect(queue.backlog().queued).toBe(1)
    pool[0]!.finish()
    pool[1]!.finish()
    await tick()
    expect(overflow.taken).toEqual([])
    pool.forEach((p) => p.finish())
    await Promise.all(runs)
  })

  it('with one session, inline runs use it and the overflow session, nothing kept', async () => {
    const pool = [new HeldSlot('s1')]
    const overflow = new HeldSlot('here')
    const queue = new RunQueue(pool, undefined, { overflow })
    const runs = ['a', 'b', 'c'].map((t) => queue.submit([t], undefined, true))
    expect(pool[0]!.taken).toEqual(['a'])
    expect(overflow.taken).toEqual(['b'])
    expect(queue.backlog().queued).toBe(1)
    pool[0]!.finish()
    await tick()
    expect(pool[0]!.taken).toEqual(['a', 'c'])
    pool[0]!.finish()
    overflow.finish()
    await Promise.all(runs)
  })
})

import { randomUUID } from 'node:crypto'
import { Redis } from 'ioredis'
import { afterAll, describe, expect, inject, it } from 'vitest'
import { LeaseLostError, RedisWriteLock, type Lease } from '../../src/corpus/write-lock.js'
import { BackendTimeoutError } from '../../src/providers/errors.js'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

// The lease lock over the run's real Redis: renewed while its write runs, and a lost lease stops the write.
describe('RedisWriteLock', () => {
  const raw = new Redis(inject('redisUrl'))
  const keyPrefix = `test:lock:${randomUUID()}:`
  const lock = (leaseMs: number, waitMs: number) => new RedisWriteLock({ client: raw, leaseMs, waitMs, keyPrefix })
  afterAll(async () => { await raw.quit() })

  it('a write four leases long keeps the lock: no other holder gets in, the key never expires meanwhile', async () => {
    const leaseMs = 300
    const events: string[] = []
    let ttlSeen = Number.POSITIVE_INFINITY
    const long = lock(leaseMs, 100).exclusive('long', async (lease) => {
      events.push('long:start')
      for (let t = 0; t < 4 * leaseMs; t += 50) {
        await sleep(50)
        ttlSeen = Math.min(ttlSeen, await raw.pttl(`${keyPrefix}long`))
        lease.assertHeld()
      }
      events.push('long:end')
      return 'done'
    })
    let settled = false
    void long.finally(() => { settled = true }).catch(() => undefined)
    await sleep(20)
    // Rivals each wait 100 ms at most, one after another, over the whole write: none may get in before it ends.
    let refused = 0
    while (!settled) {
      await lock(leaseMs, 100).exclusive('long', async () => { events.push('rival') }).catch((error: unknown) => {
        expect(error).toBeInstanceOf(BackendTimeoutError)
        refused += 1
      })
    }
    expect(await long).toBe('done')
    expect(events.slice(0, 2)).toEqual(['long:start', 'long:end'])
    expect(refused).toBeGreaterThanOrEqual(6) // 1.2 s of 100 ms waits, on a busy machine
    // Renewed every 100 ms to 300 ms: the remaining time never fell to 0 (-2 would mean the key was gone).
    expect(ttlSeen).toBeGreaterThan(0)
    expect(await raw.exists(`${keyPrefix}long`)).toBe(0) // released at the end
  })

  it('a lease taken over by another holder is detected: the write stops with a 503 before its next store write', async () => {
    const leaseMs = 300
    const writes: number[] = []
    const run = lock(leaseMs, 100).exclusive('stolen', async (lease: Lease) => {
      for (let i = 0; i < 20; i++) {
        lease.assertHeld()
        writes.push(i)
        await sleep(50)
      }
    })
    await sleep(120)
    await raw.set(`${keyPrefix}stolen`, 'someone-else', 'PX', 5_000) // as if the lease had run out and another replica took it
    const error = await run.then(() => undefined, (e: unknown) => e)
    expect(error).toBeInstanceOf(LeaseLostError)
    expect((error as Error).message).toMatch(/lost the write lock of stolen/)
    // Detected at the next renewal (every 100 ms), so at most ~3 more 50 ms steps ran after the theft at ~120 ms.
    expect(writes.length).toBeLessThan(8)
    // The new holder's lock is untouched by the old holder's release.
    expect(await raw.get(`${keyPrefix}stolen`)).toBe('someone-else')
    await raw.del(`${keyPrefix}stolen`)
  })

  it('a lease that ran out with no successful renewal is lost even if nobody took it', async () => {
    const leaseMs = 300
    const run = lock(leaseMs, 100).exclusive('expired', async (lease) => {
      await raw.del(`${keyPrefix}expired`) // the key vanished (eviction, flush): renewal finds no token
      await sleep(200)
      lease.assertHeld()
      return 'should not get here'
    })
    await expect(run).rejects.toBeInstanceOf(LeaseLostError)
  })
})

import { randomUUID } from 'node:crypto'
import { once } from 'node:events'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { commandTimedOut, LeaseLostError, RedisWriteLock, type Lease } from '../../src/corpus/write-lock.js'
import { createRedisClient } from '../../src/providers/cache/redis.js'
import type { RedisClient } from '../../src/providers/redis-client.js'
import { BackendTimeoutError, BackendUnavailableError } from '../../src/providers/errors.js'
import { REDIS_CLUSTER_SKIP } from '../helpers/redis-cluster.js'
import { startRedis, type RedisServer } from '../helpers/redis-server.js'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

// The lease lock over the run's real Redis, and over its Redis Cluster (the lock is one key: any master may hold
// it): renewed while its write runs, and a lost lease stops the write.
const clusterUrl = inject('redisClusterUrl')
if (!clusterUrl) console.warn(`the write lock on a Redis Cluster: ${REDIS_CLUSTER_SKIP}`)
for (const [server, open] of [
  ['one redis-server', () => new Redis(inject('redisUrl'))],
  ...(clusterUrl ? [['a Redis Cluster', () => createRedisClient(clusterUrl, { commandTimeoutMs: 2_000 })] as const] : [])
] as const) {
  describe(`RedisWriteLock on ${server}`, () => {
    let raw: RedisClient
    beforeAll(async () => {
      raw = open()
      raw.on('error', () => undefined)
      if (raw.status !== 'ready') await once(raw, 'ready')
    })
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
}

describe('RedisWriteLock', () => {
  const keyPrefix = `test:lock:${randomUUID()}:`
  // The production client (50 ms command timeout) over a Redis that stops serving writes for a while: CLIENT PAUSE
  // from another connection holds every write command (EVAL included) of every client until it ends, as a Redis
  // starved of CPU would, so the lock's commands time out on the client while Redis still runs them afterwards.
  // A real redis-server of these tests' own, so that the pauses hold up no other test file sharing the run's.
  describe('over a Redis too slow for the command timeout', () => {
    let server: RedisServer
    let slow: RedisClient
    let pauser: Redis
    beforeAll(async () => {
      server = await startRedis()
      slow = createRedisClient(server.url, { commandTimeoutMs: 50 })
      slow.on('error', () => undefined)
      pauser = new Redis(server.url)
      await once(slow, 'ready') // it queues nothing while connecting
    })
    afterAll(async () => {
      slow?.disconnect()
      await pauser?.quit()
      await server?.stop()
    })
    const slowLock = (leaseMs: number, waitMs: number) => new RedisWriteLock({ client: slow, leaseMs, waitMs, keyPrefix })
    const pauseWrites = async (ms: number) => {
      await slow.ping() // answered before the pause: what times out below is the pause, not the connection
      expect(await pauser.client('PAUSE', String(ms), 'WRITE')).toBe('OK')
      return performance.now()
    }

    it('a pause of 200 ms while a write takes the lock: the write waits it out, holds the lock, and releases it', async () => {
      const key = `${keyPrefix}paused`
      const paused = await pauseWrites(200)
      let held = -3
      const result = await slowLock(5_000, 2_000).exclusive('paused', async (lease) => {
        lease.assertHeld()
        held = await pauser.pttl(key)
        return 'written'
      })
      expect(result).toBe('written')
      expect(performance.now() - paused).toBeGreaterThanOrEqual(190) // it did wait for the pause (CLIENT PAUSE's own clock)
      expect(held).toBeGreaterThan(0) // the key was there, with a lease, while the write ran
      expect(await pauser.exists(key)).toBe(0)
    })

    it('a pause longer than the wait budget: a 503 saying Redis was slow, and no lock left behind by the late commands', async () => {
      const key = `${keyPrefix}too-slow`
      const paused = await pauseWrites(300)
      let ran = false
      const error = await slowLock(10_000, 100).exclusive('too-slow', async () => { ran = true }).catch((e: unknown) => e)
      expect(ran).toBe(false)
      expect(error).toBeInstanceOf(BackendTimeoutError)
      expect((error as Error).message).toMatch(/cannot take the write lock of too-slow within 100 ms: Redis was too slow to answer \(Command timed out\)/)
      // Once the pause ends Redis runs the queued commands in order: the SETs (one of which takes the key) and
      // then the release sent on giving up. Else the key would block every writer for the 10 s lease.
      await sleep(Math.max(0, 300 - (performance.now() - paused)) + 100)
      expect(await pauser.exists(key)).toBe(0)
      // and the next write gets the lock at once
      expect(await slowLock(10_000, 100).exclusive('too-slow', async () => 'next')).toBe('next')
    })

    it('renewals that time out during a 250 ms pause within a 600 ms lease: the lease is kept and the write ends', async () => {
      const key = `${keyPrefix}renewed`
      const result = await slowLock(600, 1_000).exclusive('renewed', async (lease) => {
        await sleep(100)
        await pauseWrites(250)
        for (let t = 0; t < 900; t += 50) {
          await sleep(50)
          lease.assertHeld()
        }
        return 'done'
      })
      expect(result).toBe('done')
      expect(await pauser.exists(key)).toBe(0)
    })

    it('only a timeout is retried: a refused connection fails the write at once', async () => {
      const gone = createRedisClient('redis://127.0.0.1:1', { commandTimeoutMs: 50, connectTimeoutMs: 50 })
      gone.on('error', () => undefined)
      try {
        const started = performance.now()
        const error = await new RedisWriteLock({ client: gone, leaseMs: 1_000, waitMs: 5_000, keyPrefix })
          .exclusive('gone', async () => undefined).catch((e: unknown) => e)
        expect(error).toBeInstanceOf(BackendUnavailableError)
        expect(commandTimedOut((error as Error).cause)).toBe(false) // ioredis's own refusal, not a timeout
        expect((error as Error).message).toMatch(/^cannot take the write lock of gone: /)
        expect(performance.now() - started).toBeLessThan(1_000) // not the 5 s wait budget
      } finally {
        gone.disconnect()
      }
    })
  })
})

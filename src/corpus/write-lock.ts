import { randomBytes } from 'node:crypto'
import type { Redis } from 'ioredis'
import { BackendTimeoutError, BackendUnavailableError, errorMessage } from '../providers/errors.js'

/** What a write holding the lock checks before each store write: it throws (a 503) once the lock is lost. */
export interface Lease {
  assertHeld(): void
}

/** Runs a write alone among every replica holding the same lock name. */
export interface WriteLock {
  exclusive<T>(name: string, write: (lease: Lease) => Promise<T>): Promise<T>
}

const ALWAYS_HELD: Lease = { assertHeld: () => undefined }

/** No lock at all: each write runs as it comes (the control run of the concurrent-writer tests). */
export const NO_LOCK: WriteLock = { exclusive: (_name, write) => write(ALWAYS_HELD) }

/** One process: writes of one name take turns in this process (no other writes the same stores). */
export class InProcessWriteLock implements WriteLock {
  readonly #tails = new Map<string, Promise<unknown>>()

  async exclusive<T>(name: string, write: (lease: Lease) => Promise<T>): Promise<T> {
    const before = this.#tails.get(name) ?? Promise.resolve()
    const run = before.then(() => write(ALWAYS_HELD))
    const tail = run.catch(() => undefined)
    this.#tails.set(name, tail)
    try {
      return await run
    } finally {
      if (this.#tails.get(name) === tail) this.#tails.delete(name)
    }
  }
}

export interface RedisWriteLockOptions {
  client: Redis
  /** How long a held lock lasts if its holder dies, in ms; renewed every third of it while the write runs. */
  leaseMs: number
  /** Longest wait for a lock another replica holds, in ms; then the write fails with 503. */
  waitMs: number
  keyPrefix?: string
}

// Released or renewed only by its holder: the token must still be the one it set (a lease that ran out may be someone else's now).
const RELEASE = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end"
const RENEW = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) else return 0 end"

/** The lock was lost while its write ran (the lease ran out or another holder took it): a 503, the write stops. */
export class LeaseLostError extends BackendUnavailableError {}

/**
 * A lease lock in Redis (SET NX PX with a random token), so that two replicas writing the same namespace
 * never interleave their store writes (docs/scale-out-state.md, item 6). While the write runs the lease is
 * renewed every `leaseMs / 3`; once a renewal finds another token (or none), or no renewal has succeeded for
 * a whole lease, the lease is lost and `assertHeld` throws, so the write stops before its next store write.
 */
export class RedisWriteLock implements WriteLock {
  readonly #options: RedisWriteLockOptions

  constructor(options: RedisWriteLockOptions) {
    this.#options = options
  }

  async exclusive<T>(name: string, write: (lease: Lease) => Promise<T>): Promise<T> {
    const { client, leaseMs } = this.#options
    const key = `${this.#options.keyPrefix ?? 'recall:write-lock:'}${name}`
    const token = randomBytes(8).toString('hex')
    // Counted from when the winning SET was sent: the lease in Redis cannot end earlier than this.
    let heldUntil = (await this.#acquire(key, token, name)) + leaseMs
    let lost: string | undefined
    const renew = async (): Promise<void> => {
      const sent = performance.now()
      try {
        const renewed = await client.eval(RENEW, 1, key, token, String(leaseMs))
        if (renewed === 1) heldUntil = sent + leaseMs
        else lost ??= 'another replica holds it now (the lease ran out)'
      } catch (error) {
        // One failed renewal is not a loss yet: the lease still runs until `heldUntil`.
        if (performance.now() >= heldUntil) lost ??= `it could not be renewed: ${errorMessage(error)}`
      }
    }
    let renewing: Promise<void> = Promise.resolve()
    const timer = setInterval(() => { renewing = renewing.then(renew) }, Math.max(1, Math.floor(leaseMs / 3)))
    const lease: Lease = {
      assertHeld() {
        if (lost === undefined && performance.now() >= heldUntil) lost = `no renewal succeeded within the ${leaseMs} ms lease`
        if (lost !== undefined) throw new LeaseLostError('write-lock:redis', `lost the write lock of ${name}: ${lost}; retry the write`)
      }
    }
    try {
      const result = await write(lease)
      lease.assertHeld()
      return result
    } finally {
      clearInterval(timer)
      await renewing
      await client.eval(RELEASE, 1, key, token).catch(() => undefined) // else the lease ends it
    }
  }

  /** Takes the lock; answers when the SET that took it was sent (performance.now()). */
  async #acquire(key: string, token: string, name: string): Promise<number> {
    const deadline = performance.now() + this.#options.waitMs
    for (let pause = 5; ; pause = Math.min(pause * 2, 100)) {
      let acquired: string | null
      const sent = performance.now()
      try {
        acquired = await this.#options.client.set(key, token, 'PX', this.#options.leaseMs, 'NX')
      } catch (error) {
        throw new BackendUnavailableError('write-lock:redis', `cannot take the write lock of ${name}: ${errorMessage(error)}`, { cause: error })
      }
      if (acquired === 'OK') return sent
      if (performance.now() >= deadline) {
        throw new BackendTimeoutError('write-lock:redis', `another replica held the write lock of ${name} for over ${this.#options.waitMs} ms`)
      }
      await new Promise((resolve) => setTimeout(resolve, pause))
    }
  }
}

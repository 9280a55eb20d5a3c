import { randomBytes } from 'node:crypto'
import type { Redis } from 'ioredis'
import { BackendTimeoutError, BackendUnavailableError, errorMessage } from '../providers/errors.js'

/** Runs a write alone among every replica holding the same lock name. */
export interface WriteLock {
  exclusive<T>(name: string, write: () => Promise<T>): Promise<T>
}

/** One process: its document libraries already serialise their writes, so nothing more is needed. */
export const IN_PROCESS_LOCK: WriteLock = { exclusive: (_name, write) => write() }

export interface RedisWriteLockOptions {
  client: Redis
  /** How long a held lock lasts if its holder dies, in ms (it is released at once otherwise). */
  leaseMs: number
  /** Longest wait for a lock another replica holds, in ms; then the write fails with 503. */
  waitMs: number
  keyPrefix?: string
}

// Released only by its holder: the token must still be the one it set (a lease that ran out may be someone else's now).
const RELEASE = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end"

/**
 * A lease lock in Redis (SET NX PX with a random token), so that two replicas writing the same namespace's
 * documents never interleave their point writes (docs/scale-out-state.md, item 6).
 */
export class RedisWriteLock implements WriteLock {
  readonly #options: RedisWriteLockOptions

  constructor(options: RedisWriteLockOptions) {
    this.#options = options
  }

  async exclusive<T>(name: string, write: () => Promise<T>): Promise<T> {
    const key = `${this.#options.keyPrefix ?? 'recall:write-lock:'}${name}`
    const token = randomBytes(8).toString('hex')
    const deadline = performance.now() + this.#options.waitMs
    for (let pause = 5; ; pause = Math.min(pause * 2, 100)) {
      let acquired: string | null
      try {
        acquired = await this.#options.client.set(key, token, 'PX', this.#options.leaseMs, 'NX')
      } catch (error) {
        throw new BackendUnavailableError('write-lock:redis', `cannot take the write lock of ${name}: ${errorMessage(error)}`, { cause: error })
      }
      if (acquired === 'OK') break
      if (performance.now() >= deadline) {
        throw new BackendTimeoutError('write-lock:redis', `another replica held the write lock of ${name} for over ${this.#options.waitMs} ms`)
      }
      await new Promise((resolve) => setTimeout(resolve, pause))
    }
    try {
      return await write()
    } finally {
      await this.#options.client.eval(RELEASE, 1, key, token).catch(() => undefined) // else the lease ends it
    }
  }
}

import { randomBytes } from 'node:crypto'
import { evalConfirmed, UnconfirmedWriteError, type RedisClient, type ReplicaAcknowledgement } from '../providers/redis-client.js'
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

/**
 * The store part of one write, run alone among the writers of its namespace and kind (the write path hands it
 * to the applier); the write checks `lease.assertHeld()` before each shared-store write.
 */
export type Exclusive = <T>(write: (lease: Lease) => Promise<T>) => Promise<T>

/** The lock `name` of `lock`, as the `Exclusive` a writer takes (names are `<kind>:<namespace>`). */
export function exclusiveOf(lock: WriteLock, name: string): Exclusive {
  return (write) => lock.exclusive(name, write)
}

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

/**
 * The Redis keys one lock name is held under, taken in this order (released in the reverse one). `acknowledged`: a
 * key whose take and renewals replicas must confirm (`acknowledgement`); the others are taken without `WAIT`.
 */
export interface LockKey {
  key: string
  acknowledged: boolean
}

export interface LockKeyOptions {
  /** A Redis Cluster: the namespace's part of the key is its hash tag, so the lock sits on its generations' master. */
  cluster: boolean
  /**
   * Also take the untagged key of recall before the tag (`REDIS_UNTAGGED_WRITE_LOCK`), first and without `WAIT`,
   * so that replicas of both versions side by side during an upgrade exclude each other. Only on a cluster: on one
   * server and under Sentinel both names are the same key.
   */
  untagged: boolean
  keyPrefix?: string
}

/**
 * The keys of the lock `<kind>:<namespace>`: `recall:write-lock:<kind>:{<namespace>}` on a cluster (the slot of
 * `recall:generations:{<namespace>}`, so the lock, the generations, the change log and the write window of a
 * namespace live on one master), `recall:write-lock:<kind>:<namespace>` elsewhere, as always. During an upgrade of a
 * cluster the untagged key is taken first (docs/deployment.md, "Upgrading the write lock key").
 */
export function lockKeys(name: string, options: LockKeyOptions): LockKey[] {
  const prefix = options.keyPrefix ?? 'recall:write-lock:'
  const colon = name.indexOf(':')
  const untagged = `${prefix}${name}`
  if (!options.cluster || colon < 0) return [{ key: untagged, acknowledged: true }]
  const tagged = { key: `${prefix}${name.slice(0, colon)}:{${name.slice(colon + 1)}}`, acknowledged: true }
  return options.untagged ? [{ key: untagged, acknowledged: false }, tagged] : [tagged]
}

export interface RedisWriteLockOptions {
  client: RedisClient
  /** How long a held lock lasts if its holder dies, in ms; renewed every third of it while the write runs. */
  leaseMs: number
  /** Longest wait for a lock another replica holds, in ms; then the write fails with 503. */
  waitMs: number
  keyPrefix?: string
  /** The keys a lock name is held under; default the name after `keyPrefix`, one key (a single server's). */
  keys?: (name: string) => LockKey[]
  /**
   * Replicas that must confirm a lock taken or renewed (`WAIT`), so that a failover cannot hand the lock to a second
   * writer: a lock they did not confirm is given back and the write fails with 503; a renewal they did not confirm
   * does not count. Default none. The client's command timeout must exceed its wait.
   */
  acknowledgement?: ReplicaAcknowledgement
}

// Taken when free, or when it holds this token already: a SET of this token that timed out may have run in Redis after all.
const ACQUIRE = "if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) return 1 end " +
  "if redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX') then return 1 else return 0 end"
// Released or renewed only by its holder: the token must still be the one it set (a lease that ran out may be someone else's now).
const RELEASE = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end"
const RENEW = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) else return 0 end"

/** The lock was lost while its write ran (the lease ran out or another holder took it): a 503, the write stops. */
export class LeaseLostError extends BackendUnavailableError {}

/**
 * Whether a command failed only because no answer came within the client's `commandTimeout` (ioredis's own
 * error): Redis was slow, not gone, and may still run it. Any other failure (disconnected, refused) is not this.
 */
export function commandTimedOut(error: unknown): boolean {
  return error instanceof Error && error.message === 'Command timed out'
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * A lease lock in Redis (SET NX PX with a random token), so that two replicas writing the same namespace
 * never interleave their store writes (docs/scale-out-state.md, "Concurrent writers"). While the write runs the lease is
 * renewed every `leaseMs / 3`; once a renewal finds another token (or none), or no renewal has succeeded for
 * a whole lease, the lease is lost and `assertHeld` throws, so the write stops before its next store write.
 * A command that timed out (a slow RedisClient, not a lost one) is tried again: taking the lock, until `waitMs`;
 * renewing it, until the lease would end. A name held under several keys (`keys`: an upgrade's untagged key beside
 * the tagged one) takes them in order, each with its own lease, and is held while every one of them is.
 */
export class RedisWriteLock implements WriteLock {
  readonly #options: RedisWriteLockOptions

  constructor(options: RedisWriteLockOptions) {
    this.#options = options
  }

  async exclusive<T>(name: string, write: (lease: Lease) => Promise<T>): Promise<T> {
    const keys = this.#options.keys?.(name) ?? [{ key: `${this.#options.keyPrefix ?? 'recall:write-lock:'}${name}`, acknowledged: true }]
    // Each key is held inside the one before it, so a write holds all of them or none and gives them back in reverse.
    const hold = (index: number, leases: Lease[]): Promise<T> => {
      const next = keys[index]
      if (!next) return write(leases.length === 1 ? leases[0]! : { assertHeld: () => { for (const lease of leases) lease.assertHeld() } })
      return this.#hold(next, name, (lease) => hold(index + 1, [...leases, lease]))
    }
    return hold(0, [])
  }

  async #hold<T>({ key, acknowledged }: LockKey, name: string, write: (lease: Lease) => Promise<T>): Promise<T> {
    const { client, leaseMs } = this.#options
    const acknowledgement = acknowledged ? this.#options.acknowledgement : undefined
    const token = randomBytes(8).toString('hex')
    // Counted from when the winning SET was sent: the lease in Redis cannot end earlier than this.
    let heldUntil = (await this.#acquire(key, token, name, acknowledgement)) + leaseMs
    let lost: string | undefined
    let finished = false
    const renew = async (): Promise<void> => {
      for (;;) {
        const sent = performance.now()
        try {
          const renewed = await evalConfirmed(client, acknowledgement, RENEW, [key], [token, String(leaseMs)])
          if (renewed === 1) heldUntil = sent + leaseMs
          else lost ??= 'another replica holds it now (the lease ran out)'
          return
        } catch (error) {
          // One failed renewal is not a loss yet: the lease still runs until `heldUntil`.
          if (performance.now() >= heldUntil) {
            lost ??= `it could not be renewed: ${errorMessage(error)}`
            return
          }
          // A slow Redis is asked again at once rather than at the next tick; another failure waits for that tick.
          if (!commandTimedOut(error) || finished) return
          await sleep(5)
        }
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
      finished = true
      clearInterval(timer)
      await renewing
      await client.eval(RELEASE, 1, key, token).catch(() => undefined) // else the lease ends it
    }
  }

  /**
   * Takes the lock; answers when the command that took it was sent (performance.now()). A command that timed
   * out is tried again within `waitMs`; giving up right after one, the token is removed in case it landed late.
   */
  async #acquire(key: string, token: string, name: string, acknowledgement: ReplicaAcknowledgement | undefined): Promise<number> {
    const { client, leaseMs, waitMs } = this.#options
    const deadline = performance.now() + waitMs
    let timedOut: unknown
    for (let pause = 5; ; pause = Math.min(pause * 2, 100)) {
      let acquired = false
      const sent = performance.now()
      try {
        acquired = await evalConfirmed(client, acknowledgement, ACQUIRE, [key], [token, String(leaseMs)]) === 1
        timedOut = undefined // answered: an earlier SET that timed out has run by now (one connection keeps the order)
      } catch (error) {
        if (error instanceof UnconfirmedWriteError) {
          await client.eval(RELEASE, 1, key, token).catch(() => undefined) // else the lease ends it
          throw new BackendUnavailableError('write-lock:redis', `the write lock of ${name} was not confirmed: ${error.message}; it was given back, retry the write`, { cause: error })
        }
        if (!commandTimedOut(error)) {
          throw new BackendUnavailableError('write-lock:redis', `cannot take the write lock of ${name}: ${errorMessage(error)}`, { cause: error })
        }
        timedOut = error
      }
      if (acquired) return sent
      if (performance.now() >= deadline) {
        if (timedOut === undefined) {
          throw new BackendTimeoutError('write-lock:redis', `another replica held the write lock of ${name} for over ${waitMs} ms`)
        }
        await client.eval(RELEASE, 1, key, token).catch(() => undefined) // else the lease ends it
        throw new BackendTimeoutError('write-lock:redis',
          `cannot take the write lock of ${name} within ${waitMs} ms: Redis was too slow to answer (${errorMessage(timedOut)})`, { cause: timedOut })
      }
      await sleep(pause)
    }
  }
}

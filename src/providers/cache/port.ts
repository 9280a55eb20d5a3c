import type { BackendHealth } from '../errors.js'

/**
 * A string key-value cache with per-entry expiry, used for query embeddings and whole responses.
 *
 * A cache is an optimisation, never a dependency: no method of this port throws because the
 * backend is slow, down or answers something unusable. Such a failure costs a miss (or a lost
 * write) and a log line, and the caller carries on as if the entry had never been cached.
 */
export interface Cache {
  /** Backend name as reported by `health()` (`memory` or `redis`). */
  readonly backend: string

  /**
   * The value last stored under `key`, or `undefined` when there is none, it has expired, the
   * stored bytes are not a value this cache wrote, or the backend failed or did not answer in
   * time. Never throws; never returns a value whose TTL has passed.
   */
  get(key: string): Promise<string | undefined>

  /**
   * Stores `value` under `key` for `ttlSeconds` seconds, replacing any earlier value and its TTL.
   * A `ttlSeconds` that is not a positive finite number stores nothing. Never throws: a backend
   * failure loses the write and logs it.
   */
  set(key: string, value: string, ttlSeconds: number): Promise<void>

  /** Whether the backend answers now, and how long a round trip took. Never throws. */
  health(): Promise<BackendHealth>

  /** Releases connections and timers. Afterwards `get` misses and `set` does nothing. */
  close(): Promise<void>
}

/** The part of a pino/Fastify logger a cache uses to report a failure it swallowed. */
export interface CacheLogger {
  warn(obj: object, msg: string): void
}

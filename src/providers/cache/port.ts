import type { BackendHealth } from '../errors.js'

/**
 * A byte-valued key-value cache with per-entry expiry, used for query embeddings and whole responses.
 * Values are bytes because both users want bytes: an embedding is float32s, and a cached response
 * goes to the socket as UTF-8 without being decoded and encoded again on every hit.
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
   * time. Never throws; never returns a value whose TTL has passed. The bytes may be shared with
   * the cache (the in-process one returns what it holds), so callers read them and never write.
   */
  get(key: string): Promise<Buffer | undefined>

  /**
   * Stores `value` under `key` for `ttlSeconds` seconds, replacing any earlier value and its TTL;
   * a string is stored as its UTF-8 bytes. The caller must not change the bytes afterwards.
   * A `ttlSeconds` that is not a positive finite number stores nothing. Never throws: a backend
   * failure loses the write and logs it.
   */
  set(key: string, value: Uint8Array | string, ttlSeconds: number): Promise<void>

  /** Whether the backend answers now, and how long a round trip took; not ok after `close()` (detail `closed`). Never throws. */
  health(): Promise<BackendHealth>

  /** Releases connections and timers. Afterwards `get` misses and `set` does nothing. */
  close(): Promise<void>
}

/** The part of a pino/Fastify logger a cache uses to report a failure it swallowed. */
export interface CacheLogger {
  warn(obj: object, msg: string): void
}

/** The bytes a cache stores for `value`: a string's UTF-8, a Uint8Array's own bytes (not copied). */
export function toBuffer(value: Uint8Array | string): Buffer {
  if (typeof value === 'string') return Buffer.from(value, 'utf8')
  return Buffer.isBuffer(value) ? value : Buffer.from(value.buffer, value.byteOffset, value.byteLength)
}

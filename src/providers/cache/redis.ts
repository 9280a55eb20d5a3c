import { createHash } from 'node:crypto'
import { createRedisClient, type RedisClient, type RedisClientOptions } from '../redis-client.js'
import { backendName, errorMessage, probeHealth, type BackendHealth } from '../errors.js'
import { toBuffer, type Cache, type CacheLogger } from './port.js'

export { createRedisClient,  }

export interface RedisCacheOptions extends RedisClientOptions {
  /** `redis://`, `rediss://` or `redis+cluster://` URL; ignored when `client` is given. */
  url?: string
  /** An existing client (e.g. from `createRedisClient`); the cache then leaves closing it to its owner. */
  client?: RedisClient
  /** Prepended to every key so several services can share one Redis. Default `recall:cache:`. */
  keyPrefix?: string
  /** Where swallowed failures are reported. Default: nowhere. */
  logger?: CacheLogger
  /** At most one log line per this many milliseconds; the rest are counted in `suppressed`. Default 1,000. */
  logIntervalMs?: number
  /** Called on every failed get or set (metrics); reconnect attempts are not calls and are not reported. */
  onFailure?: () => void
}

// Values are stored as `r1:<first 16 hex of sha256(value)>:<value bytes>`, so anything this cache
// did not write (another program's key, a truncated or corrupted value) reads as a miss, not as data.
const ENVELOPE_VERSION = 'r1:'
const DIGEST_LENGTH = 16
const BODY_START = ENVELOPE_VERSION.length + DIGEST_LENGTH + 1

function digest(value: Uint8Array): string {
  return createHash('sha256').update(value).digest('hex').slice(0, DIGEST_LENGTH)
}

function sealValue(value: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`${ENVELOPE_VERSION}${digest(value)}:`, 'latin1'), value])
}

function openValue(stored: Buffer): Buffer | undefined {
  if (stored.length < BODY_START || stored[BODY_START - 1] !== 0x3a) return undefined
  if (stored.toString('latin1', 0, ENVELOPE_VERSION.length) !== ENVELOPE_VERSION) return undefined
  const value = stored.subarray(BODY_START)
  return digest(value) === stored.toString('latin1', ENVELOPE_VERSION.length, BODY_START - 1) ? value : undefined
}

/** Shared cache on Redis (`REDIS_URL`). Every failure is a miss plus a (rate-limited) log line. */
export class RedisCache implements Cache {
  readonly backend = 'redis'
  readonly #client: RedisClient
  readonly #ownsClient: boolean
  readonly #prefix: string
  readonly #logger: CacheLogger | undefined
  readonly #logIntervalMs: number
  readonly #onFailure: (() => void) | undefined
  readonly #onError = (err: Error): void => this.#report('connection', err)
  #lastLogAt = Number.NEGATIVE_INFINITY
  #suppressed = 0
  #closed = false

  constructor(options: RedisCacheOptions) {
    if (options.client === undefined && options.url === undefined) {
      throw new TypeError('RedisCache needs a url or a client')
    }
    this.#ownsClient = options.client === undefined
    this.#client = options.client ?? createRedisClient(options.url as string, options)
    this.#prefix = options.keyPrefix ?? 'recall:cache:'
    this.#logger = options.logger
    this.#logIntervalMs = options.logIntervalMs ?? 1_000
    this.#onFailure = options.onFailure
    this.#client.on('error', this.#onError)
  }

  /**
   * Resolves `true` once the connection is ready, or `false` after `timeoutMs` milliseconds.
   * Until then every command misses (the offline queue is off), so the app may await this at boot
   * to start with working hits; it never has to.
   */
  async waitUntilReady(timeoutMs: number): Promise<boolean> {
    if (this.#client.status === 'ready') return true
    if (this.#closed) return false
    return new Promise((resolve) => {
      const done = (ready: boolean): void => {
        clearTimeout(timer)
        this.#client.off('ready', onReady)
        resolve(ready)
      }
      const onReady = (): void => done(true)
      const timer = setTimeout(() => done(false), timeoutMs)
      timer.unref()
      this.#client.once('ready', onReady)
    })
  }

  async get(key: string): Promise<Buffer | undefined> {
    if (this.#closed) return undefined
    let stored: Buffer | null
    try {
      stored = await this.#client.getBuffer(this.#prefix + key)
    } catch (err) {
      this.#onFailure?.()
      this.#report('get', err)
      return undefined
    }
    if (stored === null) return undefined
    const value = openValue(stored)
    if (value === undefined) this.#report('get', new Error(`value under ${this.#prefix}${key} was not written by this cache`))
    return value
  }

  async set(key: string, value: Uint8Array | string, ttlSeconds: number): Promise<void> {
    if (this.#closed || !(ttlSeconds > 0) || !Number.isFinite(ttlSeconds)) return
    try {
      // PX rather than EX keeps fractional TTLs; at least 1 ms, as Redis refuses 0.
      await this.#client.set(this.#prefix + key, sealValue(toBuffer(value)), 'PX', Math.max(1, Math.round(ttlSeconds * 1000)))
    } catch (err) {
      this.#onFailure?.()
      this.#report('set', err)
    }
  }

  health(): Promise<BackendHealth> {
    return probeHealth(backendName('cache', this.backend), async () => {
      // A cache closed on a shared client still sees a ready connection, but serves nothing.
      if (this.#closed) throw new Error('closed')
      if (this.#client.status !== 'ready') throw new Error(`connection ${this.#client.status}`)
      await this.#client.ping()
    })
  }

  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    if (!this.#ownsClient) {
      this.#client.off('error', this.#onError)
      return
    }
    try {
      if (this.#client.status === 'ready') await this.#client.quit()
    } catch {
      // quit failing means the connection is already gone; disconnect below ends retries either way.
    }
    this.#client.disconnect()
    this.#client.off('error', this.#onError)
  }

  #report(operation: string, err: unknown): void {
    if (this.#closed || this.#logger === undefined) return
    const now = performance.now()
    if (now - this.#lastLogAt < this.#logIntervalMs) {
      this.#suppressed += 1
      return
    }
    this.#logger.warn(
      { backend: backendName('cache', this.backend), operation, err: errorMessage(err), suppressed: this.#suppressed },
      'redis cache failure treated as a miss'
    )
    this.#lastLogAt = now
    this.#suppressed = 0
  }
}

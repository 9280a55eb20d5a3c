import { backendName, type BackendHealth } from '../errors.js'
import { toBuffer, type Cache } from './port.js'

export interface MemoryCacheOptions {
  /** Most entries kept; storing one more evicts the least recently used. Default 10,000. */
  maxEntries?: number
  /** Clock in milliseconds, replaceable in tests. Default `Date.now`. */
  now?: () => number
}

interface Entry {
  value: Buffer
  expiresAt: number
}

/**
 * In-process LRU cache with per-entry TTL, the default when no Redis is configured.
 * A `Map` iterates in insertion order, so re-inserting an entry on every hit keeps the least
 * recently used one first, where eviction takes it.
 */
export class MemoryCache implements Cache {
  readonly backend = 'memory'
  readonly #maxEntries: number
  readonly #now: () => number
  readonly #entries = new Map<string, Entry>()
  #closed = false

  constructor(options: MemoryCacheOptions = {}) {
    const maxEntries = options.maxEntries ?? 10_000
    if (!Number.isInteger(maxEntries) || maxEntries < 1) {
      throw new RangeError(`maxEntries must be a positive integer, got ${maxEntries}`)
    }
    this.#maxEntries = maxEntries
    this.#now = options.now ?? Date.now
  }

  /** Number of entries held, expired ones included until they are touched or evicted. */
  get size(): number {
    return this.#entries.size
  }

  async get(key: string): Promise<Buffer | undefined> {
    const entry = this.#entries.get(key)
    if (entry === undefined) return undefined
    this.#entries.delete(key)
    if (entry.expiresAt <= this.#now()) return undefined
    this.#entries.set(key, entry)
    return entry.value
  }

  async set(key: string, value: Uint8Array | string, ttlSeconds: number): Promise<void> {
    if (this.#closed || !(ttlSeconds > 0) || !Number.isFinite(ttlSeconds)) return
    this.#entries.delete(key)
    this.#entries.set(key, { value: toBuffer(value), expiresAt: this.#now() + ttlSeconds * 1000 })
    while (this.#entries.size > this.#maxEntries) {
      const oldest = this.#entries.keys().next()
      if (oldest.done === true) break
      this.#entries.delete(oldest.value)
    }
  }

  async health(): Promise<BackendHealth> {
    return { backend: backendName('cache', this.backend), ok: !this.#closed, latency_ms: 0, detail: this.#closed ? 'closed' : `${this.#entries.size} entries` }
  }

  async close(): Promise<void> {
    this.#closed = true
    this.#entries.clear()
  }
}

import type { BackendHealth } from '../errors.js'
import type { Embedder, EmbeddingBacklog } from '../embedder/port.js'
import { embeddingCacheKey } from './keys.js'
import type { Cache } from './port.js'

/** A vector as the bytes of its float32 values, little-endian whatever the platform. */
export function encodeVector(vector: Float32Array): Buffer {
  const bytes = Buffer.alloc(vector.length * 4)
  for (let i = 0; i < vector.length; i++) bytes.writeFloatLE(vector[i] as number, i * 4)
  return bytes
}

/** The vector `encodeVector` wrote, or `undefined` when `bytes` are not `dimensions` finite floats. */
export function decodeVector(bytes: Buffer, dimensions: number): Float32Array | undefined {
  if (bytes.length !== dimensions * 4) return undefined
  const vector = new Float32Array(dimensions)
  for (let i = 0; i < dimensions; i++) {
    const component = bytes.readFloatLE(i * 4)
    if (!Number.isFinite(component)) return undefined
    vector[i] = component
  }
  return vector
}

export interface CachedEmbedderOptions {
  /** How long a query vector stays cached, in seconds. */
  ttlSeconds: number
  /** Called once per distinct query text looked up, with whether the cache had it (metrics). */
  onLookup?: (hit: boolean) => void
}

/**
 * An `Embedder` that serves query vectors from a cache, keyed by model and text, and embeds only
 * the misses. Passages go straight to the model: they are embedded once, at ingest, so caching them
 * would only fill the cache. The vectors are exactly the model's (float32 round-trips losslessly).
 */
export class CachedEmbedder implements Embedder {
  readonly model: string
  readonly dimensions: number
  readonly #inner: Embedder
  readonly #cache: Cache
  readonly #options: CachedEmbedderOptions

  constructor(inner: Embedder, cache: Cache, options: CachedEmbedderOptions) {
    this.#inner = inner
    this.#cache = cache
    this.#options = options
    this.model = inner.model
    this.dimensions = inner.dimensions
  }

  async embedQueries(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]> {
    if (texts.length === 0) return []
    const distinct = [...new Set(texts)]
    const found = new Map<string, Float32Array>()
    await Promise.all(
      distinct.map(async (text) => {
        const stored = await this.#cache.get(embeddingCacheKey(this.model, text))
        const vector = stored === undefined ? undefined : decodeVector(stored, this.dimensions)
        this.#options.onLookup?.(vector !== undefined)
        if (vector !== undefined) found.set(text, vector)
      })
    )
    const missing = distinct.filter((text) => !found.has(text))
    if (missing.length > 0) {
      const embedded = await this.#inner.embedQueries(missing, signal)
      missing.forEach((text, i) => {
        const vector = embedded[i] as Float32Array
        found.set(text, vector)
        // Not awaited: the caller has its vector; a slow or failed write only costs a later miss.
        void this.#cache.set(embeddingCacheKey(this.model, text), encodeVector(vector), this.#options.ttlSeconds)
      })
    }
    return texts.map((text) => Float32Array.from(found.get(text) as Float32Array))
  }

  embedPassages(texts: readonly string[]): Promise<Float32Array[]> {
    return this.#inner.embedPassages(texts)
  }

  backlog(): EmbeddingBacklog | undefined {
    return this.#inner.backlog?.()
  }

  health(): Promise<BackendHealth> {
    return this.#inner.health()
  }

  /** Closes the model; the cache belongs to whoever created it and is closed by them. */
  close(): Promise<void> {
    return this.#inner.close()
  }
}

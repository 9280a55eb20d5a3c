/**
 * An `Embedder` that remembers, within one scope (`within`), the vectors of the passages embedded in it, so that a
 * later step of the same write finds a text's vector instead of embedding it again: derived Episodes reuse the
 * vectors of the chunks the same write embedded (docs/derivation.md, "Derived Episodes"). Outside a scope it only
 * passes calls on; a scope's vectors go with it.
 */
import { AsyncLocalStorage } from 'node:async_hooks'
import type { BackendHealth } from '../errors.js'
import type { Embedder, EmbeddingBacklog } from './port.js'

export class PassageMemo implements Embedder {
  readonly model: string
  readonly dimensions: number
  readonly #inner: Embedder
  readonly #scope = new AsyncLocalStorage<Map<string, Float32Array>>()

  constructor(inner: Embedder) {
    this.#inner = inner
    this.model = inner.model
    this.dimensions = inner.dimensions
  }

  /** Runs `work` in a scope of its own: passages embedded in it are remembered until it ends. */
  within<T>(work: () => Promise<T>): Promise<T> {
    return this.#scope.run(new Map(), work)
  }

  /** The vector a passage embedded earlier in the current scope got, if any. */
  vectorOf(text: string): Float32Array | undefined {
    return this.#scope.getStore()?.get(text)
  }

  embedQueries(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]> {
    return this.#inner.embedQueries(texts, signal)
  }

  async embedPassages(texts: readonly string[]): Promise<Float32Array[]> {
    const vectors = await this.#inner.embedPassages(texts)
    const memo = this.#scope.getStore()
    if (memo) texts.forEach((t, i) => memo.set(t, vectors[i]!))
    return vectors
  }

  backlog(): EmbeddingBacklog | undefined {
    return this.#inner.backlog?.()
  }

  health(): Promise<BackendHealth> {
    return this.#inner.health()
  }

  close(): Promise<void> {
    return this.#inner.close()
  }
}

/**
 * Keeps each namespace's in-process document catalog (and lexical index) up to the shared stores when other
 * replicas write: the vector store is the source of truth, the hybrid index version (shared through the
 * generation store) says when to read it again. See docs/scale-out-state.md.
 */
import type { DocumentLibraries } from './libraries.js'

export interface SharedCatalogOptions {
  /** With no version known (the generation store is down), read the stores again at most this often, in ms. Default 1,000. */
  unknownVersionRefreshMs?: number
}

export class SharedCatalog {
  readonly #libraries: DocumentLibraries
  readonly #unknownRefreshMs: number
  /** The version each namespace's catalog was last read at. */
  readonly #synced = new Map<string, string | undefined>()
  readonly #lastUnknown = new Map<string, number>()
  readonly #inFlight = new Map<string, Promise<void>>()

  constructor(libraries: DocumentLibraries, options: SharedCatalogOptions = {}) {
    this.#libraries = libraries
    this.#unknownRefreshMs = options.unknownVersionRefreshMs ?? 1_000
  }

  /**
   * Resolves once the namespace's catalog was read from the stores at `version` (the hybrid version a
   * request read before this call) or later; at once when it already was. `undefined` (no version known)
   * reads the stores again when the last such read is older than `unknownVersionRefreshMs`.
   */
  async catchUp(namespace: string, version: string | undefined): Promise<void> {
    for (;;) {
      if (version !== undefined && this.#synced.has(namespace) && this.#synced.get(namespace) === version) return
      if (version === undefined && performance.now() - (this.#lastUnknown.get(namespace) ?? -Infinity) < this.#unknownRefreshMs) return
      const running = this.#inFlight.get(namespace)
      if (running) {
        await running
        // a refresh started before `version` was read may have missed its write: check again
        continue
      }
      const refresh = this.#refresh(namespace, version).finally(() => this.#inFlight.delete(namespace))
      this.#inFlight.set(namespace, refresh)
      await refresh
      return
    }
  }

  async #refresh(namespace: string, version: string | undefined): Promise<void> {
    if (version === undefined) this.#lastUnknown.set(namespace, performance.now())
    await this.#libraries.refresh(namespace)
    this.#synced.set(namespace, version)
  }
}

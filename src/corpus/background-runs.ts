/**
 * Background work per namespace that must not hold a write's answer (the entity-names applier): at most one run of a
 * namespace at a time, and asking while one runs asks for one more run after it, so that a burst of writes costs two
 * runs, not one each.
 */
export class BackgroundRuns {
  readonly #running = new Map<string, Promise<void>>()
  readonly #again = new Set<string>()
  readonly #run: (namespace: string, signal: AbortSignal) => Promise<void>
  readonly #stop = new AbortController()

  /** `run` reports its own failures: a rejection here is dropped. It should stop soon once `signal` aborts. */
  constructor(run: (namespace: string, signal: AbortSignal) => Promise<void>) {
    this.#run = run
  }

  schedule(namespace: string): void {
    if (this.#stop.signal.aborted) return
    if (this.#running.has(namespace)) {
      this.#again.add(namespace)
      return
    }
    const loop = (async () => {
      do {
        this.#again.delete(namespace)
        await this.#run(namespace, this.#stop.signal).catch(() => undefined)
      } while (this.#again.has(namespace) && !this.#stop.signal.aborted)
    })().finally(() => this.#running.delete(namespace))
    this.#running.set(namespace, loop)
  }

  /** Asks the runs under way to stop and starts no other; resolves once they stopped (what they left is asked for again at start-up). */
  async stop(): Promise<void> {
    this.#stop.abort()
    await this.idle()
  }

  /** Resolves once no run of this namespace is under way or asked for. */
  async settled(namespace: string): Promise<void> {
    for (let run = this.#running.get(namespace); run; run = this.#running.get(namespace)) await run
  }

  /** Resolves once no run is under way or asked for (the benches and tests wait on it). */
  async idle(): Promise<void> {
    while (this.#running.size > 0) await Promise.all(this.#running.values())
  }
}

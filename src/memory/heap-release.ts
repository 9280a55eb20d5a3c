/**
 * Gives back the memory an ingest left resident once writes have gone quiet (issue 44). A full collection frees the
 * heap's garbage, but V8 keeps the pages it freed in its page pool, resident, for reuse; only a collection that aims at
 * memory (the memory reducer's, or a last-resort one) gives them back. The memory reducer waits for a low allocation
 * rate that an idle process does not always report (bench/results/memory.log.md, "What an ingest leaves resident"), so a
 * service that ingested and then went quiet kept its peak heap. This asks V8 once for that collection, `quietMs` after
 * the last write that adds ended, while no such write is running.
 */
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'

/** One release, as the service logs it. */
export interface HeapReleased {
  ms: number
  rss_before_bytes: number
  rss_after_bytes: number
}

type Collect = () => Promise<void>

/**
 * V8's last-resort collection (full collections until nothing more is freed, then the page pool given back), through
 * the gc function V8 installs in a new context while `--expose-gc` is set; the flag is set back at once, so no other
 * code sees a `gc` it did not ask for.
 */
function lastResortCollection(): Collect {
  const wasExposed = process.execArgv.includes('--expose-gc')
  setFlagsFromString('--expose-gc')
  const gc = runInNewContext('gc') as (options: { type: string; execution: string; flavor: string }) => Promise<void>
  if (!wasExposed) setFlagsFromString('--no-expose-gc')
  return () => gc({ type: 'major', execution: 'async', flavor: 'last-resort' })
}

export class HeapRelease {
  readonly #quietMs: number
  readonly #collect: () => Collect
  readonly #released: (report: HeapReleased) => void
  #run: Collect | undefined
  #writing = 0
  #wroteSinceRelease = false
  #timer: NodeJS.Timeout | undefined
  #releases = 0

  /** `quietMs` 0 turns it off. */
  constructor(quietMs: number, released: (report: HeapReleased) => void = () => {}, collect: () => Collect = lastResortCollection) {
    this.#quietMs = quietMs
    this.#released = released
    this.#collect = collect
  }

  /** Releases run since start. */
  get releases(): number {
    return this.#releases
  }

  /** A write that adds begins; call what it returns when it ends (failed or not). */
  writeBegins(): () => void {
    this.#writing += 1
    this.#wroteSinceRelease = true
    clearTimeout(this.#timer)
    let ended = false
    return () => {
      if (ended) return
      ended = true
      this.#writing -= 1
      if (this.#writing === 0 && this.#quietMs > 0) this.#timer = setTimeout(() => void this.#release(), this.#quietMs).unref()
    }
  }

  async #release(): Promise<void> {
    if (this.#writing > 0 || !this.#wroteSinceRelease) return
    this.#wroteSinceRelease = false
    this.#run ??= this.#collect()
    const before = process.memoryUsage.rss()
    const started = performance.now()
    await this.#run()
    this.#releases += 1
    this.#released({ ms: Math.round(performance.now() - started), rss_before_bytes: before, rss_after_bytes: process.memoryUsage.rss() })
  }

  close(): void {
    clearTimeout(this.#timer)
  }
}

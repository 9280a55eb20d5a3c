/**
 * Gives back the memory an ingest left resident once writes have gone quiet (issue 44). A full collection frees the
 * heap's garbage, but V8 keeps the pages it freed in its page pool, resident, for reuse; only a collection that aims at
 * memory (the memory reducer's, or a last-resort one) gives them back. The memory reducer waits for a low allocation
 * rate that an idle process does not always report (bench/results/memory.log.md, "What an ingest leaves resident"), so a
 * service that ingested and then went quiet kept its peak heap. This asks V8 for that collection, `quietMs` after the
 * last write that adds ended, while no such write runs.
 *
 * The collection pauses the whole process, reads included, for longer the larger the live heap (several full
 * collections of it), whatever it gives back; so it runs only when it is worth it: when the heap in use is at most
 * `maxHeapBytes` (above it the pause is many seconds: never paid unless configured); when the pages it would give back,
 * predicted from what V8 and the kernel report (`predictedGain`), reach a threshold; while no request is in flight; and
 * never sooner than `minIntervalMs` after the last one (bench/results/memory.log.md, "The heap release's pause", and
 * "The heap release's predictor and its cap").
 */
import { readFile } from 'node:fs/promises'
import { getHeapSpaceStatistics, getHeapStatistics, setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'

/** One release, as the service logs it and `/readyz` shows the last. */
export interface HeapReleased {
  /** When it ended (ISO 8601). */
  at: string
  /** How long the process was paused, in milliseconds. */
  ms: number
  rss_before_bytes: number
  rss_after_bytes: number
  /** What the prediction said it would give back. */
  predicted_gain_bytes: number
  /** The heap in use before it (what the collection had to mark). */
  heap_used_bytes: number
}

/** The releases since start, for `/readyz` and `/metrics`. */
export interface HeapReleaseState {
  releases: number
  /** … of them, those run for a write the budget would have refused (`releaseForRoom`). */
  for_room: number
  /** Quiet times that ran no release: the predicted gain was below the threshold, or the heap above the cap. */
  skipped: number
  /** … of them, those skipped because the heap in use was above `max_heap_bytes`. */
  skipped_heap: number
  /** What a release was predicted to give back at the last quiet time (after a release: what it left). */
  predicted_gain_bytes: number
  /** A release gives back at least this much or is not run (the larger of the fixed threshold and the heap's share). */
  min_gain_bytes: number
  /** No release runs while the heap in use is above this (its pause grows with the heap). */
  max_heap_bytes: number
  last: HeapReleased | null
}

/** Why a quiet time ran no release: the predicted gain was below the threshold, or the heap in use above the cap. */
export type HeapReleaseSkip = 'gain' | 'heap'

export interface HeapReleaseOptions {
  /** The quiet time after the last write that adds, in milliseconds; 0 turns releases off. */
  quietMs: number
  /** A release runs only when it is predicted to give back at least this many bytes. Default 0. */
  minGainBytes?: number
  /**
   * … and at least this share of the heap in use, which the release marks and compacts: its pause grows with the heap,
   * so a large heap must give back more to be worth pausing. Default 0.
   */
  minGainShareOfHeap?: number
  /** Never two releases closer than this, in milliseconds. Default 0. */
  minIntervalMs?: number
  /** No release while the heap in use is above this many bytes: its pause would be many seconds. Default no cap. */
  maxHeapBytes?: number
}

type Collect = () => Promise<void>

/** What V8 and the kernel report, read in a few milliseconds: enough to predict a release's gain before paying for it. */
export interface HeapReading {
  rss: number
  /** Committed bytes of the heap's paged spaces (large objects aside). */
  pagedCommitted: number
  /** Committed but unused bytes of the heap's paged spaces: what a compaction frees. */
  pagedUnused: number
  /** Bytes of the mappings the size of a V8 page (`/proc/self/maps`): every isolate's pages and the pool; absent off Linux. */
  v8Pages?: number
  heapUsed: number
}

/** V8 maps each page of a heap on its own, 256 KiB (252 KiB of it readable beside a guard page). */
const V8_PAGE_MAPPING = { min: 248 * 1024, max: 256 * 1024 }

async function v8PageBytes(): Promise<number | undefined> {
  let text: string
  try {
    text = await readFile('/proc/self/maps', 'latin1')
  } catch {
    return undefined
  }
  let bytes = 0
  for (const line of text.split('\n')) {
    const dash = line.indexOf('-')
    const space = line.indexOf(' ', dash)
    // anonymous: no path after the five fields
    if (dash < 0 || line.trimEnd().split(/\s+/).length > 5) continue
    const size = parseInt(line.slice(dash + 1, space), 16) - parseInt(line.slice(0, dash), 16)
    if (size >= V8_PAGE_MAPPING.min && size <= V8_PAGE_MAPPING.max) bytes += V8_PAGE_MAPPING.max
  }
  return bytes
}

export async function readHeap(): Promise<HeapReading> {
  const v8Pages = await v8PageBytes()
  const rss = process.memoryUsage.rss()
  const heap = getHeapStatistics()
  let pagedCommitted = 0
  let pagedUnused = 0
  for (const space of getHeapSpaceStatistics()) {
    if (space.space_name.includes('lo_space')) continue
    pagedCommitted += space.space_size
    pagedUnused += space.space_size - space.space_used_size
  }
  return { rss, pagedCommitted, pagedUnused, heapUsed: heap.used_heap_size, ...(v8Pages === undefined ? {} : { v8Pages }) }
}

/**
 * What a release would give back: the page pool, i.e. the V8 pages mapped beyond the main heap's committed paged
 * spaces, and the unused part of those spaces, which the release compacts away. A worker thread's heap counts as pool
 * (it errs high by that); off Linux the pool cannot be read and only the unused heap counts. Resident memory outside
 * V8 (glibc's arenas, the model's runtime) is not counted: a collection does not give it back. Nor is garbage no
 * collection has found yet, which the release's own collections free too: V8's next collections move it to the pool
 * (bench/results/memory.log.md, "The heap release's predictor and its cap").
 */
export function predictedGain(now: HeapReading): number {
  const pool = now.v8Pages === undefined ? 0 : Math.max(0, now.v8Pages - now.pagedCommitted)
  return pool + now.pagedUnused
}

/**
 * V8's last-resort collection (full collections until nothing more is freed, then the page pool given back), through
 * the gc function V8 installs in a new context while `--expose-gc` is set; the flag is set back at once, so no other
 * code sees a `gc` it did not ask for.
 */
export function lastResortCollection(): Collect {
  const wasExposed = process.execArgv.includes('--expose-gc')
  setFlagsFromString('--expose-gc')
  const gc = runInNewContext('gc') as (options: { type: string; execution: string; flavor: string }) => Promise<void>
  if (!wasExposed) setFlagsFromString('--no-expose-gc')
  return () => gc({ type: 'major', execution: 'async', flavor: 'last-resort' })
}

export interface HeapReleaseHooks {
  released?: (report: HeapReleased) => void
  skipped?: (because: HeapReleaseSkip, predictedGainBytes: number) => void
  /** Tests give their own collection and readings. */
  collect?: () => Collect
  read?: () => Promise<HeapReading>
}

export class HeapRelease {
  readonly #quietMs: number
  readonly #minGain: number
  readonly #minGainShareOfHeap: number
  readonly #minIntervalMs: number
  readonly #maxHeap: number
  readonly #hooks: HeapReleaseHooks
  readonly #read: () => Promise<HeapReading>
  #run: Collect | undefined
  #writing = 0
  #requests = 0
  #wroteSinceRelease = false
  /** Quiet long enough, waiting for the requests in flight to end. */
  #due = false
  #timer: NodeJS.Timeout | undefined
  #releasing = false
  #lastEndedAt = -Infinity
  #lastPredicted = 0
  #lastThreshold: number
  #releases = 0
  #skipped = 0
  #skippedHeap = 0
  #last: HeapReleased | null = null
  #closed = false
  #forRoom: Promise<boolean> | undefined
  #forRoomRuns = 0

  constructor(options: HeapReleaseOptions, hooks: HeapReleaseHooks = {}) {
    this.#quietMs = options.quietMs
    this.#minGain = options.minGainBytes ?? 0
    this.#minGainShareOfHeap = options.minGainShareOfHeap ?? 0
    this.#minIntervalMs = options.minIntervalMs ?? 0
    this.#maxHeap = options.maxHeapBytes ?? Number.MAX_SAFE_INTEGER
    this.#hooks = hooks
    this.#read = hooks.read ?? readHeap
    this.#lastThreshold = this.#minGain
  }

  /** Releases run since start. */
  get releases(): number {
    return this.#releases
  }

  /** As of the last quiet time (the prediction and threshold then: reading the maps is not for every scrape). */
  state(): HeapReleaseState {
    return {
      releases: this.#releases, for_room: this.#forRoomRuns, skipped: this.#skipped, skipped_heap: this.#skippedHeap, predicted_gain_bytes: this.#lastPredicted,
      min_gain_bytes: this.#lastThreshold, max_heap_bytes: this.#maxHeap, last: this.#last
    }
  }

  #threshold(now: HeapReading): number {
    return Math.max(this.#minGain, Math.floor(now.heapUsed * this.#minGainShareOfHeap))
  }

  /** A write that adds begins; call what it returns when it ends (failed or not). */
  writeBegins(): () => void {
    this.#writing += 1
    this.#wroteSinceRelease = true
    this.#due = false
    clearTimeout(this.#timer)
    return this.#once(() => {
      this.#writing -= 1
      if (this.#writing === 0) this.#schedule(this.#quietMs)
    })
  }

  /** A request begins (reads included); call what it returns when it ends. A release waits for none to be in flight. */
  requestBegins(): () => void {
    this.#requests += 1
    return this.#once(() => {
      this.#requests -= 1
      if (this.#requests === 0 && this.#due) this.#schedule(0)
    })
  }

  #once(end: () => void): () => void {
    let ended = false
    return () => {
      if (ended) return
      ended = true
      end()
    }
  }

  #schedule(ms: number): void {
    if (this.#quietMs <= 0 || this.#closed) return
    clearTimeout(this.#timer)
    this.#timer = setTimeout(() => void this.#release(), ms).unref()
  }

  async #release(): Promise<void> {
    if (this.#writing > 0 || !this.#wroteSinceRelease || this.#releasing) return
    if (this.#requests > 0) {
      this.#due = true
      return
    }
    this.#due = false
    const wait = this.#lastEndedAt + this.#minIntervalMs - performance.now()
    if (wait > 0) {
      this.#schedule(wait)
      return
    }
    this.#releasing = true
    const before = await this.#read().finally(() => { this.#releasing = false })
    // a write or a request may have begun while the maps were read, or a release for a write's room
    if (this.#writing > 0 || this.#closed || this.#forRoom) return
    if (this.#requests > 0) {
      this.#due = true
      return
    }
    const predicted = predictedGain(before)
    this.#wroteSinceRelease = false
    this.#lastPredicted = predicted
    this.#lastThreshold = this.#threshold(before)
    const skip: HeapReleaseSkip | undefined = before.heapUsed > this.#maxHeap ? 'heap' : predicted < this.#lastThreshold ? 'gain' : undefined
    if (skip !== undefined) {
      this.#skipped += 1
      if (skip === 'heap') this.#skippedHeap += 1
      this.#hooks.skipped?.(skip, predicted)
      return
    }
    await this.#collect(before, predicted)
  }

  /**
   * A release now, for a write the budget would refuse (`MemoryBudget.assertRoom`): run when resident memory less what it
   * is predicted to give back (and `moreBytes`, garbage the prediction cannot see) is under `markBytes`, whatever the heap
   * in use (its pause is paid instead of a refusal), unless releases are off, one runs, or one ended less than
   * `minIntervalMs` ago. Writes that ask meanwhile share it. Answers whether it ran.
   */
  releaseForRoom(markBytes: number, moreBytes = 0): Promise<boolean> {
    this.#forRoom ??= this.#releaseForRoom(markBytes, moreBytes).finally(() => { this.#forRoom = undefined })
    return this.#forRoom
  }

  async #releaseForRoom(markBytes: number, moreBytes: number): Promise<boolean> {
    if (this.#quietMs <= 0 || this.#closed || this.#releasing) return false
    if (performance.now() < this.#lastEndedAt + this.#minIntervalMs) return false
    this.#releasing = true
    const before = await this.#read().finally(() => { this.#releasing = false })
    const predicted = predictedGain(before)
    if (this.#closed || this.#releasing || before.rss - predicted - moreBytes >= markBytes) return false
    this.#forRoomRuns += 1
    await this.#collect(before, predicted)
    return true
  }

  async #collect(before: HeapReading, predicted: number): Promise<void> {
    this.#releasing = true
    try {
      this.#run ??= (this.#hooks.collect ?? lastResortCollection)()
      const started = performance.now()
      await this.#run()
      this.#lastEndedAt = performance.now()
      const after = await this.#read()
      this.#lastPredicted = predictedGain(after)
      this.#releases += 1
      this.#last = {
        at: new Date().toISOString(), ms: Math.round(this.#lastEndedAt - started), rss_before_bytes: before.rss, rss_after_bytes: after.rss,
        predicted_gain_bytes: predicted, heap_used_bytes: before.heapUsed
      }
      this.#hooks.released?.(this.#last)
    } finally {
      this.#releasing = false
    }
  }

  close(): void {
    this.#closed = true
    clearTimeout(this.#timer)
  }
}

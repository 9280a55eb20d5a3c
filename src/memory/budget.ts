/**
 * The memory budget: what the process holds against its limit (`MEMORY_LIMIT`, src/memory/limit.ts), and the refusal
 * of writes that would grow it once it is nearly spent. Reads are never refused; deletes and namespace drops are taken
 * (they are how an operator makes room). Resident memory counts what V8's heap may still take before its next full
 * collection (src/memory/heap-growth.ts), whose growth is held to the room left. A write that would be refused on
 * resident memory first waits for the fold threads running (their heaps go when they end), then gets one heap release
 * when it is predicted to make the room (`HeapRelease.releaseForRoom`): an ingesting process holds V8's freed pages and
 * garbage that a release gives back, and a pause beats a refusal.
 */
import { constants, PerformanceObserver } from 'node:perf_hooks'
import { getHeapStatistics } from 'node:v8'
import type { NamespaceCounts } from '../corpus/namespaces.js'
import { growingPercentFor, heapHeadroom, setHeapGrowingPercent, startGrowingPercent } from './heap-growth.js'
import { HeapRelease, type HeapReleaseHooks, type HeapReleaseState } from './heap-release.js'
import { formatBytes, type MemoryLimit } from './limit.js'

/** Writes stop once resident memory reaches this share of the limit: the rest is room for the writes in flight. */
const REFUSE_RSS_SHARE = 0.9
/** … or once the heap that outlived the last full collection reaches this share of V8's heap limit. */
const REFUSE_HEAP_SHARE = 0.85
/**
 * A heap release must be predicted to give back at least this share of the limit (beside `MEMORY_RELEASE_MIN_GAIN`):
 * its pause grows with the live heap, not with what it gives back (bench/results/memory.log.md, "The heap release's pause").
 */
const RELEASE_MIN_GAIN_SHARE = 0.02
/** … and this share of the heap in use: the pause is a few full collections of it (55.7 s at a 1.8 GiB heap under load ~25, same log). */
const RELEASE_MIN_GAIN_SHARE_OF_HEAP = 0.25
/** The longest a write over the mark waits for the fold threads running to end (a knowledge-graph fold took 60–73 s at 500k chunks). */
const FOLD_WAIT_MS = 180_000
const FOLD_POLL_MS = 250

/** The limit and how the heap release is paced (src/config.ts `memory`). */
export interface BudgetSettings extends MemoryLimit {
  /** `MEMORY_RELEASE_AFTER_MS`: the quiet time after writes before the ingest's pages are given back; 0 or unset is off. */
  releaseAfterMs?: number
  /** `MEMORY_RELEASE_MIN_GAIN` in bytes. */
  releaseMinGainBytes?: number
  /** `MEMORY_RELEASE_INTERVAL_MS`. */
  releaseIntervalMs?: number
  /** `MEMORY_RELEASE_MAX_HEAP` in bytes: no release while the heap in use is above it; unset, no cap. */
  releaseMaxHeapBytes?: number
}

/** The budget in use, as `/readyz` and `/metrics` show it. */
export interface MemoryUsage {
  limit_bytes: number
  limit_source: MemoryLimit['source']
  rss_bytes: number
  /** What the heap may still take before V8's next full collection, counted with `rss_bytes` against the mark. */
  heap_headroom_bytes: number
  /** V8's heap growing percentage from the next full collection on, held to the room left; null when V8 picks its own. */
  heap_growing_percent: number | null
  /** The heap limits of the fold threads running, counted with `rss_bytes` until they end. */
  fold_heaps_reserved_bytes: number
  /** Writes are refused once resident memory, the heap's headroom and the folds' reserved heaps reach this. */
  rss_refuse_at_bytes: number
  /** The heap in use: what the last full collection kept, or less when the heap is smaller now. */
  heap_used_bytes: number
  /** V8's heap limit in this process (`--max-old-space-size`, which the start script sets from the limit). */
  heap_limit_bytes: number
  heap_refuse_at_bytes: number
  refusing_writes: boolean
  /** Writes refused since start. */
  refused_writes: number
  /** Writes over the mark that waited for the fold threads running to end before they were taken or refused. */
  fold_waits: number
  /** The heap release (`MEMORY_RELEASE_AFTER_MS`): what one would give back now, the last one and its pause. */
  release: HeapReleaseState
}

/** A write refused because the budget is spent: 507, with what the process holds and what to do. */
export class MemoryBudgetError extends Error {
  readonly statusCode = 507
  readonly code = 'RECALL_MEMORY_BUDGET'
  constructor(message: string) {
    super(message)
    this.name = 'MemoryBudgetError'
  }
}

/** How a budget reads the process; tests give their own figures. */
export interface MemoryProbe {
  rss(): number
  heapUsed(): number
  heapLimit(): number
  /** The heap's committed pages (V8's `total_heap_size`); the heap in use when absent. */
  heapCommitted?(): number
}

const processProbe: MemoryProbe = {
  rss: () => process.memoryUsage.rss(),
  heapUsed: () => getHeapStatistics().used_heap_size,
  heapLimit: () => getHeapStatistics().heap_size_limit,
  heapCommitted: () => getHeapStatistics().total_heap_size
}

export interface BudgetHooks extends HeapReleaseHooks {
  /** The fold threads running now in the process (`foldThreadsRunning`), whose heaps a write over the mark waits for. */
  foldsRunning?: () => number
  /** How long such a write waits at most; default 3 min. */
  foldWaitMs?: number
  /** The heap limits of the fold threads running (`foldHeapsReserved`), counted as held until they end. */
  foldHeapsReserved?: () => number
  /**
   * The growing percentage the process started with; with the process's probe, `--heap-growing-percent` from its
   * options. Unset, the heap's growth is neither counted nor held.
   */
  growingPercent?: number
  /** Sets V8's growing percentage; tests give their own. */
  setGrowingPercent?: (percent: number) => void
  /** Told the heap's headroom whenever the budget reads it (the fold gate counts it before a fold thread starts). */
  headroom?: (bytes: number) => void
}

export class MemoryBudget {
  readonly #limit: MemoryLimit
  readonly #probe: MemoryProbe
  #heapAfterFullGc: number | undefined
  #refused = 0
  #foldWaits = 0
  readonly #foldsRunning: () => number
  readonly #foldWaitMs: number
  readonly #foldHeapsReserved: () => number
  readonly #observer: PerformanceObserver | undefined
  readonly #release: HeapRelease
  readonly #startPercent: number | undefined
  readonly #setGrowingPercent: (percent: number) => void
  readonly #headroomHook: ((bytes: number) => void) | undefined
  /** The growing percentage V8 computed its limit with at the last full collection, and the one set for the next. */
  #percentAtGc: number | undefined
  #percentNext: number | undefined

  /** `limit.release*`: how the pages an ingest left resident are given back once writes are quiet (src/memory/heap-release.ts). */
  constructor(limit: BudgetSettings, probe: MemoryProbe = processProbe, hooks: BudgetHooks = {}) {
    this.#limit = limit
    this.#probe = probe
    this.#foldsRunning = hooks.foldsRunning ?? (() => 0)
    this.#foldWaitMs = hooks.foldWaitMs ?? FOLD_WAIT_MS
    this.#foldHeapsReserved = hooks.foldHeapsReserved ?? (() => 0)
    this.#startPercent = hooks.growingPercent ?? (probe === processProbe ? startGrowingPercent() : undefined)
    this.#percentAtGc = this.#startPercent
    this.#percentNext = this.#startPercent
    this.#setGrowingPercent = hooks.setGrowingPercent ?? setHeapGrowingPercent
    this.#headroomHook = hooks.headroom
    this.#release = new HeapRelease({
      quietMs: limit.releaseAfterMs ?? 0,
      minGainBytes: Math.max(limit.releaseMinGainBytes ?? 0, Math.floor(limit.bytes * RELEASE_MIN_GAIN_SHARE)),
      minGainShareOfHeap: RELEASE_MIN_GAIN_SHARE_OF_HEAP,
      minIntervalMs: limit.releaseIntervalMs ?? 0,
      ...(limit.releaseMaxHeapBytes === undefined ? {} : { maxHeapBytes: limit.releaseMaxHeapBytes })
    }, hooks)
    if (probe === processProbe) {
      // The heap in use counts garbage too until it is collected: what a full collection keeps is what the process holds.
      this.#observer = new PerformanceObserver((list) => {
        if (list.getEntries().some((e) => (e as unknown as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR)) {
          this.fullCollectionEnded()
        }
      })
      this.#observer.observe({ entryTypes: ['gc'] })
    }
  }

  /**
   * A full collection ended (the process's own are observed; tests call it): what it kept is the live heap, and V8's
   * growth from it is held to the room left under the mark for the next one. V8 computed the limit that stands now
   * with the percentage in force before, so the headroom counts that one until the next collection.
   */
  fullCollectionEnded(): void {
    const live = this.#probe.heapUsed()
    this.#heapAfterFullGc = live
    if (this.#startPercent === undefined) return
    this.#percentAtGc = this.#percentNext
    // the heap reuses its committed free space and grows past it into the room
    const committed = this.#probe.heapCommitted?.() ?? live
    const room = this.#rssRefuseAt() - this.#probe.rss() + Math.max(0, committed - live)
    const percent = growingPercentFor(room, live, this.#startPercent)
    if (percent !== this.#percentNext) {
      this.#percentNext = percent
      this.#setGrowingPercent(percent)
    }
    this.#headroomHook?.(this.#headroom())
  }

  #rssRefuseAt(): number {
    return Math.floor(this.#limit.bytes * REFUSE_RSS_SHARE)
  }

  #headroom(): number {
    if (this.#percentAtGc === undefined || this.#heapAfterFullGc === undefined) return 0
    return heapHeadroom(this.#heapAfterFullGc, this.#probe.heapCommitted?.() ?? this.#probe.heapUsed(), this.#percentAtGc)
  }

  usage(): MemoryUsage {
    const rss = this.#probe.rss()
    const current = this.#probe.heapUsed()
    const heapUsed = Math.min(current, this.#heapAfterFullGc ?? current)
    const heapLimit = this.#probe.heapLimit()
    const rssRefuseAt = this.#rssRefuseAt()
    const heapRefuseAt = Math.floor(heapLimit * REFUSE_HEAP_SHARE)
    const headroom = this.#headroom()
    const reserved = this.#foldHeapsReserved()
    this.#headroomHook?.(headroom)
    return {
      limit_bytes: this.#limit.bytes,
      limit_source: this.#limit.source,
      rss_bytes: rss,
      heap_headroom_bytes: headroom,
      heap_growing_percent: this.#percentNext ?? null,
      fold_heaps_reserved_bytes: reserved,
      rss_refuse_at_bytes: rssRefuseAt,
      heap_used_bytes: heapUsed,
      heap_limit_bytes: heapLimit,
      heap_refuse_at_bytes: heapRefuseAt,
      refusing_writes: rss + headroom + reserved >= rssRefuseAt || heapUsed >= heapRefuseAt,
      refused_writes: this.#refused,
      fold_waits: this.#foldWaits,
      release: this.#release.state()
    }
  }

  /**
   * Throws `MemoryBudgetError` when the budget is spent, naming the limit, what each namespace holds (`sizes`, read
   * only then) and what to do; else returns, at once unless it first waited for running folds (`#afterFolds`) or a heap
   * release to make the room.
   */
  async assertRoom(sizes: () => Promise<NamespaceCounts[]>): Promise<void> {
    let usage = this.usage()
    if (!usage.refusing_writes) return
    const onResident = () => usage.heap_used_bytes < usage.heap_refuse_at_bytes
    if (onResident() && this.#foldsRunning() > 0) {
      usage = await this.#afterFolds()
      if (!usage.refusing_writes) return
    }
    // after a release the heap may grow again from what it kept, by the percentage set for it
    const live = this.#heapAfterFullGc ?? 0
    const regrowth = heapHeadroom(live, live, this.#percentNext ?? 0)
    if (onResident() && await this.#release.releaseForRoom(usage.rss_refuse_at_bytes - regrowth, this.#garbage())) {
      usage = this.usage()
      if (!usage.refusing_writes) return
    }
    this.#refused += 1
    throw new MemoryBudgetError(refusalMessage(usage, await sizes().catch(() => [])))
  }

  /**
   * Waits while fold threads run and resident memory is over the mark, at most `foldWaitMs`: a fold's heap (~0.5 GiB for
   * the knowledge graph at 1M chunks) is given back when it ends, and under a budget it was what pushed an ingest over
   * the mark (bench/results/memory.log.md, "Fold threads one at a time under a budget"). Answers the usage then.
   */
  async #afterFolds(): Promise<MemoryUsage> {
    this.#foldWaits += 1
    const until = performance.now() + this.#foldWaitMs
    let usage = this.usage()
    while (usage.refusing_writes && this.#foldsRunning() > 0 && performance.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, FOLD_POLL_MS))
      usage = this.usage()
    }
    return usage
  }

  /**
   * The heap's garbage a collection would free beyond what `predictedGain` sees (it counts unused pages, not dead
   * objects): the heap in use now less what the last full collection kept, when one ran.
   */
  #garbage(): number {
    return this.#heapAfterFullGc === undefined ? 0 : Math.max(0, this.#probe.heapUsed() - this.#heapAfterFullGc)
  }

  /** A write that adds begins; call what it returns when it ended. */
  writeBegins(): () => void {
    return this.#release.writeBegins()
  }

  /** A request begins; call what it returns when it ends. The heap release waits for none to be in flight. */
  requestBegins(): () => void {
    return this.#release.requestBegins()
  }

  close(): void {
    this.#observer?.disconnect()
    this.#release.close()
    if (this.#startPercent !== undefined && this.#percentNext !== this.#startPercent) this.#setGrowingPercent(this.#startPercent)
  }
}

const LISTED_NAMESPACES = 5

function refusalMessage(usage: MemoryUsage, namespaces: NamespaceCounts[]): string {
  const limitName = usage.limit_source === 'MEMORY_LIMIT' ? 'MEMORY_LIMIT' : `the limit taken from the ${usage.limit_source === 'cgroup' ? "container's cgroup" : 'machine'} (MEMORY_LIMIT unset)`
  const growth = usage.heap_headroom_bytes > 0 ? `, and its heap may take ${formatBytes(usage.heap_headroom_bytes)} more before it is collected,` : ''
  const folds = usage.fold_heaps_reserved_bytes > 0 ? ` with ${formatBytes(usage.fold_heaps_reserved_bytes)} kept for the heaps of the graphs' fold threads running` : ''
  const held = usage.rss_bytes + usage.heap_headroom_bytes + usage.fold_heaps_reserved_bytes >= usage.rss_refuse_at_bytes
    ? `the process holds ${formatBytes(usage.rss_bytes)} resident${growth} of ${limitName} ${formatBytes(usage.limit_bytes)} (writes stop at ${Math.round(REFUSE_RSS_SHARE * 100)}%, ${formatBytes(usage.rss_refuse_at_bytes)}${folds})`
    : `the heap holds ${formatBytes(usage.heap_used_bytes)} of its limit ${formatBytes(usage.heap_limit_bytes)} (writes stop at ${Math.round(REFUSE_HEAP_SHARE * 100)}%; ${limitName} is ${formatBytes(usage.limit_bytes)})`
  const largest = [...namespaces].sort((a, b) => b.chunks - a.chunks || b.entities - a.entities)
  const listed = largest.slice(0, LISTED_NAMESPACES).map((n) =>
    `${n.namespace}: ${n.documents} documents, ${n.chunks} chunks, ${n.entities} entities, ${n.relations} relations, ${n.episodes} Episodes`)
  const more = largest.length > LISTED_NAMESPACES ? `; and ${largest.length - LISTED_NAMESPACES} smaller` : ''
  return `memory budget spent, write refused (nothing of it was written): ${held}. ` +
    `Namespaces: ${listed.length > 0 ? listed.join('; ') : 'none'}${more}. ` +
    'Reads are still answered, deletes still taken. To write more: raise MEMORY_LIMIT and restart; or move to Qdrant + Neo4j ' +
    '(VECTOR_BACKEND=qdrant, GRAPH_BACKEND=neo4j), which hold the chunks and graphs outside this process; or turn derivation off ' +
    '(DERIVED_GRAPH=false, DERIVED_EPISODES=false) and drop the derived part; or delete documents or namespaces you no longer need.'
}

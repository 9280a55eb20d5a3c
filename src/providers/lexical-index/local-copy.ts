import { rm } from 'node:fs/promises'
import { errorMessage } from '../errors.js'
import type { ServiceAnalyzer } from '../../kernel/analyzers.js'
import { EmbeddedLexicalIndex } from './embedded.js'
import type { LexicalChange, LexicalDocument, LexicalHit, LexicalSearchOptions } from './port.js'

/**
 * A replica's own copy of one namespace's lexical leg (docs/scale-out.md, "The local copy"): an embedded index
 * fed the same documents as the Qdrant points, by the same calls. It is a cache, never a source: it answers
 * only while it has applied every change it was handed since a whole sync succeeded (`ready`), and the caller
 * decides besides whether those changes are all the namespace's (the stamp check in `QdrantLexicalIndex`).
 * A change it fails to apply breaks it until the next whole sync; it never fails the write that fed it.
 */
export class LocalLexicalCopy {
  private index: EmbeddedLexicalIndex
  /** A whole sync succeeded since the copy was made (or last broke). */
  private complete = false
  private broken = false
  /** Changes handed over and not yet applied (or failed). */
  private readonly inFlight = new Set<Promise<void>>()
  /** Whole syncs handed over and not yet done: while one runs, a write is not waited for (it queues behind it). */
  private syncing = 0
  lastError: string | undefined

  /** `waitMs`: how long a write waits for the copy to apply its change (see `write`); `analyzer`: the collection's. */
  constructor(private readonly dir: string, private readonly waitMs = 20, private readonly analyzer: ServiceAnalyzer = 'cjk-bigram') {
    this.index = new EmbeddedLexicalIndex({ dir, analyzer })
  }

  /** Whether a search may be answered here: every change handed over is applied, after a whole sync. */
  get ready(): boolean {
    return this.complete && !this.broken && this.inFlight.size === 0
  }

  /** Whether its counts (size, total length) are worth reading: a whole sync succeeded and nothing failed since (changes may be pending). */
  get counted(): boolean {
    return this.complete && !this.broken
  }

  get size(): number { return this.index.size }

  get totalLength(): number { return this.index.totalLength }

  /** Bytes of the copy's typed arrays in memory (benchmarks). */
  get memoryBytes(): number { return this.index.memoryBytes }

  /** Makes the copy hold exactly `documents`, in the background: the copy is not ready until it is done. */
  sync(documents: readonly LexicalDocument[]): Promise<void> {
    this.syncing += 1
    return this.track(this.index.sync(documents), true).finally(() => { this.syncing -= 1 })
  }

  /**
   * Applies one change, waited for at most `waitMs`, and not at all while a whole sync runs ahead of it: the copy is
   * not ready until it is applied (searches rank on Qdrant meanwhile), so waiting only saves those searches. The
   * bound matters when the change queues behind a merge of large segments in the lexical worker (hundreds of ms).
   */
  async write(change: LexicalChange): Promise<void> {
    const applied = this.track(this.index.write(change), false)
    if (this.syncing > 0) return
    let timer: NodeJS.Timeout | undefined
    await Promise.race([applied, new Promise<void>((resolve) => { timer = setTimeout(resolve, this.waitMs) })])
    clearTimeout(timer)
  }

  /**
   * Whether the copy may answer a search starting now: it is ready, or every change handed over before now gets
   * applied within `ms` (changes handed meanwhile are not waited for: each lands whole, and the copy then holds a
   * later state still). False at once when no whole sync succeeded or a change failed, and after `ms`.
   */
  async settled(ms: number): Promise<boolean> {
    if (this.ready) return true
    if (!this.counted) return false
    const handed = [...this.inFlight]
    let applied = false
    let timer: NodeJS.Timeout | undefined
    await Promise.race([
      Promise.all(handed).then(() => { applied = true }),
      new Promise<void>((resolve) => { timer = setTimeout(resolve, ms) })
    ])
    clearTimeout(timer)
    return applied && this.counted
  }

  search(query: string, limit: number, options?: LexicalSearchOptions): Promise<LexicalHit[]> {
    return this.index.search(query, limit, options)
  }

  /** Empties the copy (its namespace was dropped): its files go, and a new index starts, not complete. */
  async drop(): Promise<void> {
    const old = this.index
    this.index = new EmbeddedLexicalIndex({ dir: this.dir, analyzer: this.analyzer })
    this.complete = false
    this.broken = false
    await old.close().catch(() => undefined)
    await rm(this.dir, { recursive: true, force: true })
  }

  async close(): Promise<void> {
    await this.index.close()
  }

  /** Resolves once nothing handed over is pending (tests and benchmarks). */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all(this.inFlight)
    await this.index.idle()
  }

  private track(work: Promise<void>, whole: boolean): Promise<void> {
    // a drop meanwhile replaces the index: what the old one did no longer says anything of the new one
    const target = this.index
    const done: Promise<void> = work.then(
      () => {
        if (whole && this.index === target) {
          this.complete = true
          this.broken = false
        }
      },
      (error: unknown) => {
        if (this.index === target) this.broken = true
        this.lastError = errorMessage(error)
      }
    ).finally(() => { this.inFlight.delete(done) })
    this.inFlight.add(done)
    return done
  }
}

import { ANALYZERS, analyzerTag, type AnalyzerName } from '../../kernel/analyzers.js'
import { backendName, errorMessage, type BackendHealth } from '../errors.js'
import { TaskQueue } from '../embedded/task-queue.js'
import { pickMerge } from './merge-policy.js'
import type { LexicalChange, LexicalDocument, LexicalHit, LexicalIndex, LexicalSearchOptions } from './port.js'
import { searchSegments, type LiveSegment } from './scorer.js'
import { ContentDigest } from './content-digest.js'
import { contentHash, docId, findDoc, type SegmentData } from './segment.js'
import { lexicalWorker } from './worker-client.js'
import type { LoadResult, Manifest, MergeResult, WriteResult } from './worker-protocol.js'

const BACKEND = backendName('lexical-index', 'bm25')

export interface EmbeddedLexicalIndexOptions {
  /** Folder of this index's segment files and manifest (one folder per index); created on the first write. */
  dir: string
  /** Default `cjk-bigram`, the service's analyzer (`cjk-bigram-english` with stemming); `whitespace` exists for comparisons in bench/. */
  analyzer?: AnalyzerName
  /** Documents per segment built by `sync` from scratch (default 20,000): bounds the worker's memory. */
  syncBatch?: number
}

/** A segment held by the index: the search view plus the removed ordinals, in removal order. */
interface HeldSegment extends LiveSegment {
  removed: number[]
}

const SLICE_MS = 8
const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve))

/**
 * BM25 over segments, as search engines do it: immutable segments (typed arrays) built and merged by the
 * shared worker thread, tombstones for removed documents, and statistics kept exact for the live documents
 * after every write. Every write becomes a small segment file plus a new manifest (the commit point);
 * segments are merged in the background (merge-policy.ts). The main thread only searches, installs
 * finished segments and keeps the tombstones; see the README's architecture section.
 *
 * Nothing is read until the first call (an index is cheap to create). `sync` reconciles the files with the
 * source of truth by id and content hash, so files left behind by a crash, another analyzer version or a
 * corrupt write are repaired rather than trusted.
 */
export class EmbeddedLexicalIndex implements LexicalIndex {
  private segments: HeldSegment[] = []
  private nextSegment = 1
  private loading: Promise<void> | undefined
  private readonly queue = new TaskQueue('lexical-index')
  private generation = 0
  private merging = false
  private closed = false
  private acquired = false
  private lastMergeError: string | undefined
  /** Segments to merge next whatever the policy says (those a bulk sync built). */
  private forcedMerge: HeldSegment[] | undefined
  private readonly analyzer: AnalyzerName

  constructor(private readonly options: EmbeddedLexicalIndexOptions) {
    this.analyzer = options.analyzer ?? 'cjk-bigram'
  }

  get size(): number {
    let n = 0
    for (const s of this.segments) n += s.liveDocs
    return n
  }

  get version(): number { return this.generation }

  /** Tokens in the live documents (BM25's total length). */
  get totalLength(): number {
    let n = 0
    for (const s of this.segments) n += s.liveLength
    return n
  }

  /** Segments now searched (for health and benchmarks). */
  get segmentCount(): number { return this.segments.length }

  /** Bytes of the typed arrays held in memory (segments, tombstones, removed-term counts). */
  get memoryBytes(): number {
    let n = 0
    for (const s of this.segments) {
      for (const a of Object.values(s.data)) if (ArrayBuffer.isView(a)) n += a.byteLength
      n += (s.deleted?.byteLength ?? 0) + (s.deletedDf?.byteLength ?? 0)
    }
    return n
  }

  async sync(documents: Iterable<LexicalDocument>): Promise<void> {
    await this.load()
    return this.queue.run(async () => {
      // The comparison runs on the main thread in slices of SLICE_MS, so that requests keep being answered.
      let sliceStart = performance.now()
      const maybeYield = async () => {
        if (performance.now() - sliceStart < SLICE_MS) return
        await yieldToLoop()
        sliceStart = performance.now()
      }
      const wanted = new Map<string, string>()
      for (const d of documents) {
        wanted.set(d.id, d.text)
        if ((wanted.size & 0x3ff) === 0) await maybeYield()
      }
      const live = new Map<string, { seg: HeldSegment; d: number }>()
      for (const seg of this.segments) {
        for (let d = 0; d < seg.data.docCount; d++) {
          if (seg.deleted === null || seg.deleted[d] === 0) live.set(docId(seg.data, d), { seg, d })
          if ((d & 0x3ff) === 0) await maybeYield()
        }
      }
      const removals: { seg: HeldSegment; d: number }[] = []
      const upserts: LexicalDocument[] = []
      let i = 0
      for (const [id, text] of wanted) {
        const held = live.get(id)
        if (held) {
          live.delete(id)
          const [h1, h2] = contentHash(text)
          const hashes = held.seg.data.hashes
          if (hashes[2 * held.d] !== h1 || hashes[2 * held.d + 1] !== h2) {
            removals.push(held)
            upserts.push({ id, text })
          }
        } else {
          upserts.push({ id, text })
        }
        if ((++i & 0xff) === 0) await maybeYield()
      }
      for (const held of live.values()) removals.push(held)
      const batch = this.options.syncBatch ?? 20_000
      const before = new Set(this.segments)
      let first = true
      for (let at = 0; first || at < upserts.length; at += batch) {
        await this.apply(first ? removals : [], upserts.slice(at, at + batch))
        first = false
      }
      // a large sync built several segments: merge them into one, as after a bulk load (fewer segments to search)
      const built = this.segments.filter((seg) => !before.has(seg))
      if (built.length > 1) {
        this.forcedMerge = built
        this.maybeMerge()
      }
    })
  }

  async write(change: LexicalChange): Promise<void> {
    await this.load()
    const upserts = [...(change.upsert ?? [])]
    const ids = new Set([...(change.delete ?? []), ...upserts.map((d) => d.id)])
    return this.queue.run(async () => {
      const removals: { seg: HeldSegment; d: number }[] = []
      for (const id of ids) {
        const held = this.find(id)
        if (held) removals.push(held)
      }
      await this.apply(removals, upserts)
    })
  }

  async holding(ids: readonly string[]): Promise<Set<string>> {
    await this.load()
    // behind the writes already queued, as a search after them would see
    return this.queue.run(async () => new Set(ids.filter((id) => this.find(id) !== undefined)))
  }

  digest(documents: Iterable<LexicalDocument>): string {
    const digest = new ContentDigest()
    for (const d of documents) digest.add(d.id, d.text)
    return digest.value
  }

  async holds(expected: string): Promise<boolean> {
    await this.load()
    // behind the writes already queued, from the ids and content hashes the segments keep (no text is read)
    return this.queue.run(async () => {
      const digest = new ContentDigest()
      for (const { data, deleted } of this.segments) {
        for (let d = 0; d < data.docCount; d++) {
          if (deleted === null || deleted[d] === 0) digest.addUnits(data.idChars, data.idStarts[d]!, data.idStarts[d + 1]!, data.hashes[2 * d]!, data.hashes[2 * d + 1]!)
        }
      }
      return digest.value === expected
    })
  }

  async search(query: string, limit: number, options: LexicalSearchOptions = {}): Promise<LexicalHit[]> {
    await this.load()
    // The scan itself is synchronous and bounded; a search whose caller already gave up is not started.
    options.signal?.throwIfAborted()
    return searchSegments(this.segments, ANALYZERS[this.analyzer](query), limit, options.filter)
  }

  async health(): Promise<BackendHealth> {
    const detail = `${this.size} documents in ${this.segments.length} segments${this.merging ? ', merging' : ''}` +
      (this.lastMergeError ? `; last merge failed: ${this.lastMergeError}` : '')
    return { backend: BACKEND, ok: !this.closed, latency_ms: 0, detail }
  }

  /** Resolves once no write and no merge is pending (for tests and benchmarks). */
  async idle(): Promise<void> {
    for (;;) {
      await this.queue.tail
      if (!this.merging) return
      await new Promise((r) => setTimeout(r, 10))
    }
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    await this.idle()
    if (this.acquired) await lexicalWorker.release()
  }

  /** Reads the folder once; unusable files are set aside (the next write's manifest no longer names them). */
  private load(): Promise<void> {
    if (this.closed) return Promise.reject(new Error('lexical index is closed'))
    if (!this.acquired) {
      lexicalWorker.acquire()
      this.acquired = true
    }
    this.loading ??= (async () => {
      const result = await lexicalWorker.call<LoadResult>('load', { dir: this.options.dir, analyzer: this.analyzerTag() })
      if (result.manifest) {
        this.nextSegment = result.manifest.nextSegment
        this.segments = result.segments.map((data, i) => {
          const seg = this.hold(data, result.manifest!.segments[i]!.deleted)
          // tombstones loaded from the manifest need their terms to keep document frequencies exact
          countRemovedTerms(seg, result.deletedTerms[i]!)
          return seg
        })
      }
      this.generation += 1
    })()
    this.loading.catch(() => { this.loading = undefined })
    return this.loading
  }

  private analyzerTag(): string {
    return analyzerTag(this.analyzer)
  }

  private hold(data: SegmentData, removed: readonly number[] = []): HeldSegment {
    const seg: HeldSegment = { data, deleted: null, deletedDf: null, liveDocs: data.docCount, liveLength: data.totalLength, removed: [] }
    for (const d of removed) markRemoved(seg, d)
    return seg
  }

  /** The live copy of `id`, if any (at most one segment holds it live). */
  private find(id: string): { seg: HeldSegment; d: number } | undefined {
    for (const seg of this.segments) {
      const d = findDoc(seg.data, id)
      if (d >= 0 && (seg.deleted === null || seg.deleted[d] === 0)) return { seg, d }
    }
    return undefined
  }

  /** The manifest of the held segments less `without`, each with its removals plus those `pending` for it, then `extra`. */
  private manifest(
    extra: Manifest['segments'] = [], without: ReadonlySet<HeldSegment> = new Set(), pending?: ReadonlyMap<HeldSegment, number[]>
  ): Manifest {
    return {
      format: 1,
      analyzer: this.analyzerTag(),
      nextSegment: this.nextSegment,
      segments: [
        ...this.segments.filter((s) => !without.has(s)).map((s) => ({ name: s.data.name, deleted: [...s.removed, ...(pending?.get(s) ?? [])] })),
        ...extra
      ]
    }
  }

  /** One write through the worker; installed in memory only once the worker has committed it to disk. */
  private async apply(removals: readonly { seg: HeldSegment; d: number }[], upserts: readonly LexicalDocument[]): Promise<void> {
    if (removals.length === 0 && upserts.length === 0) return
    const bySegment = new Map<HeldSegment, number[]>()
    for (const { seg, d } of removals) {
      const list = bySegment.get(seg)
      if (list) list.push(d)
      else bySegment.set(seg, [d])
    }
    // the name is taken now: a merge may start while this write is in the worker
    const name = upserts.length > 0 ? `seg-${this.nextSegment++}` : undefined
    const manifest = this.manifest(name ? [{ name, deleted: [] }] : [], undefined, bySegment)
    const deletions = [...bySegment].map(([seg, ordinals]) => ({ segment: seg.data.name, ordinals }))
    const result = await lexicalWorker.call<WriteResult>('write', {
      dir: this.options.dir, manifest, deletions,
      ...(name ? { build: { name, analyzer: this.analyzer, docs: upserts.map((d) => ({ id: d.id, text: d.text })) } } : {})
    })
    // from here on, synchronous: searches see the whole write or none of it
    let i = 0
    for (const [seg, ordinals] of bySegment) {
      for (const d of ordinals) markRemoved(seg, d)
      countRemovedTerms(seg, result.deletedTerms[i++]!)
    }
    if (result.segment) this.segments.push(this.hold(result.segment))
    this.generation += 1
    this.maybeMerge()
  }

  private maybeMerge(): void {
    if (this.merging || this.closed) return
    const forced = this.forcedMerge?.filter((seg) => this.segments.includes(seg))
    this.forcedMerge = undefined
    const picked = forced && forced.length > 1 ? forced : pickMerge(this.segments)
    if (!picked) return
    this.merging = true
    const name = `seg-${this.nextSegment++}`
    const snapshot = picked.map((s) => ({ seg: s, removedBefore: s.removed.length }))
    void lexicalWorker.call<MergeResult>('merge', {
      dir: this.options.dir, name,
      inputs: picked.map((s) => ({ segment: s.data.name, deleted: s.deleted }))
    })
      .then((merged) => this.queue.runCompaction(() => this.commitMerge(snapshot, merged)))
      .then(() => { this.lastMergeError = undefined }, (error: unknown) => { this.lastMergeError = errorMessage(error) })
      .finally(() => {
        this.merging = false
        if (!this.lastMergeError) this.maybeMerge()
      })
  }

  private async commitMerge(snapshot: { seg: HeldSegment; removedBefore: number }[], merged: MergeResult): Promise<void> {
    if (this.closed) return
    // documents removed from the inputs while the merge ran are removed from its result too
    const removedSince: number[] = []
    snapshot.forEach(({ seg, removedBefore }, i) => {
      for (const d of seg.removed.slice(removedBefore)) removedSince.push(merged.maps[i]![d]!)
    })
    const inputs = new Set(snapshot.map((s) => s.seg))
    const keep = merged.segment.docCount > 0
    const manifest = this.manifest(keep ? [{ name: merged.segment.name, deleted: removedSince }] : [], inputs)
    const terms = removedSince.length > 0
      ? await lexicalWorker.call<Uint32Array>('terms', { dir: this.options.dir, segment: merged.segment.name, ordinals: removedSince })
      : undefined
    await lexicalWorker.call('commit', {
      dir: this.options.dir, manifest, drop: [...snapshot.map((s) => s.seg.data.name), ...(keep ? [] : [merged.segment.name])]
    })
    const next = this.segments.filter((s) => !inputs.has(s))
    if (keep) {
      const held = this.hold(merged.segment, removedSince)
      if (terms) countRemovedTerms(held, terms)
      next.push(held)
    }
    this.segments = next
  }

}

function markRemoved(seg: HeldSegment, d: number): void {
  seg.deleted ??= new Uint8Array(seg.data.docCount)
  if (seg.deleted[d] === 1) return
  seg.deleted[d] = 1
  seg.removed.push(d)
  seg.liveDocs -= 1
  seg.liveLength -= seg.data.lengths[d]!
}

/** `terms`: the term ids of newly removed documents, one entry per document containing the term. */
function countRemovedTerms(seg: HeldSegment, terms: Uint32Array): void {
  if (terms.length === 0) return
  seg.deletedDf ??= new Uint32Array(seg.data.termCount)
  for (let i = 0; i < terms.length; i++) seg.deletedDf[terms[i]!]! += 1
}

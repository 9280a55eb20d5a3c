/** One partition of the embedded vector store in memory: its records' ids, payloads and rows of a shared pool, and search. */
import type { FileHandle } from 'node:fs/promises'
import { compileFilter } from './filter.js'
import { HeldPayloads, type StoredPayloads } from './held-payloads.js'
import { RecordIds, type FrozenIds, type IdList } from './record-ids.js'
import { RecordsByDoc } from './records-by-doc.js'
import { copyPayload } from './payload.js'
import type { VectorFilter, VectorHit, VectorPayload, VectorRank } from './port.js'
import { UncheckedShares, type SharedRows } from './shared-rows.js'

export interface DecodedWrite {
  seq: number
  deleteDocIds: string[]
  records: [string, VectorPayload][]
  /** `records.length * dims` floats, unit-norm rows in record order. */
  vectors: Float32Array
}

/**
 * One collection held in memory: record `i` is `ids.at(i)` (record-ids.ts, which also finds a record by id), its payload
 * (`payloads`, held-payloads.ts), and the pool row `rows[i]` holding its vector (the namespace's pool, shared with its
 * other collections: a vector several records have is held once).
 */
export class Collection {
  readonly ids = new RecordIds()
  readonly payloads = new HeldPayloads()
  readonly rows: number[] = []
  readonly recordsOfDoc = new RecordsByDoc()
  /** Sequence number of the last write applied (from the snapshot or the log). */
  seq = 0
  snapshotBytes = 0
  logBytes = 0
  log: FileHandle | undefined
  /** Set when a failed append could not be rolled back: the log may hold garbage, so no more writes. */
  broken: Error | undefined
  /** A log set aside for a compaction (`<collection>.fold.log`) holds writes no snapshot holds yet. */
  foldPending = false
  /** While a snapshot is written from a copy of this partition (frozen.ts): the ids upserted since the copy was taken. */
  changedSinceFold: Set<string> | undefined
  /** While a log is replayed: the records whose row was shared unchecked ({@link SharedRows.acquireUnchecked}), by id. */
  private unchecked: { byId: Map<string, number>; shares: UncheckedShares } | undefined

  constructor(
    readonly dims: number,
    readonly pool: SharedRows
  ) {}

  /** Makes room for `records` more records' vectors; throws RangeError when WebAssembly memory cannot grow. */
  reserve(records: number): void {
    this.pool.reserve(records)
  }

  get size(): number {
    return this.ids.length
  }

  /** The stored vector of record `index`, a copy. */
  vectorAt(index: number): Float32Array {
    return this.pool.row(this.rows[index]!).slice()
  }

  deleteDoc(docId: string): void {
    // each delete renumbers the last record, so take one of the document's records at a time
    for (let n = this.recordsOfDoc.anyOf(docId); n !== undefined; n = this.recordsOfDoc.anyOf(docId)) this.deleteAt(n)
  }

  deleteId(id: string): void {
    const index = this.ids.indexOf(id)
    if (index >= 0) this.deleteAt(index)
  }

  /** Swap-remove: the last record moves into the hole so the arrays stay dense. */
  private deleteAt(index: number): void {
    this.recordsOfDoc.remove(this.ids.docAt(index), index)
    this.pool.release(this.rows[index]!)
    const last = this.ids.length - 1
    if (index !== last) {
      this.rows[index] = this.rows[last]!
      this.recordsOfDoc.renumber(this.ids.docAt(last), last, index)
    }
    this.payloads.moveLastTo(index)
    this.ids.removeAt(index)
    this.rows.pop()
  }

  /**
   * The record number `id` of document `docId` now holds pool row `row` at: a new one, or its old one with its old row
   * and document let go.
   */
  private place(id: string, docId: string, row: number): number {
    const index = this.ids.indexOf(id)
    if (index < 0) {
      this.rows.push(row)
      return this.ids.push(id, docId)
    }
    this.recordsOfDoc.remove(this.ids.docAt(index), index)
    this.pool.release(this.rows[index]!)
    this.rows[index] = row
    this.ids.refile(index, id, docId)
    return index
  }

  /** Inserts or replaces `id`; `source[offset .. offset + dims)` must already be unit norm. */
  upsert(id: string, payload: VectorPayload, source: Float32Array, offset: number): void {
    this.changedSinceFold?.add(id)
    let row: number
    if (this.unchecked) {
      const taken = this.pool.acquireUnchecked(source, offset, this.pool.hashOf(source, offset), payload.text)
      row = taken < 0 ? ~taken : taken
      if (taken >= 0) this.unchecked.byId.delete(id)
      else {
        this.unchecked.byId.set(id, this.unchecked.shares.size)
        this.unchecked.shares.add(row, source, offset)
      }
    } else row = this.pool.acquire(source, offset, payload.text)
    // the document's id as its other records hold it: one string for all of them
    const other = this.recordsOfDoc.anyOf(payload.doc_id)
    const docId = other === undefined ? payload.doc_id : this.ids.docAt(other)
    const index = this.place(id, docId, row)
    this.recordsOfDoc.add(docId, index)
    this.payloads.set(index, payload, docId, this.pool.textOf(row))
  }

  /**
   * Fills this empty partition with `ids.length` records: record `i` is `ids[i]` of document `docs[docOf[i]]`, with payload
   * number `i` of the JSON {@link HeldPayloads.holdStored} holds and the vector at `vectors[i × dims ..]` whose pool hash
   * is `hashes[i]` (as the snapshot recorded them). False, and nothing held, when an id comes twice.
   */
  fillStored(ids: readonly string[], docs: readonly string[], docOf: Uint32Array, vectors: Float32Array, hashes: Uint32Array): boolean {
    if (this.ids.length > 0) throw new Error('fillStored needs an empty partition')
    return this.placeStored(ids, docs, docOf, this.pool.acquireAll(vectors, ids.length, hashes))
  }

  /**
   * {@link fillStored} with the vectors already taken into the pool, record `i`'s as `rows[i]` (a snapshot read a slice
   * at a time, `snapshot-codec.ts`): false, with every row let go and the partition still empty, when an id comes twice.
   */
  placeStored(ids: readonly string[], docs: readonly string[], docOf: Uint32Array, rows: Int32Array): boolean {
    if (this.ids.length > 0) throw new Error('placeStored needs an empty partition')
    const count = ids.length
    for (let i = 0; i < count; i++) {
      const docId = docs[docOf[i]!]!
      if (this.ids.push(ids[i]!, docId) < 0) {
        rows.forEach((row) => this.pool.release(row))
        this.ids.clear()
        this.recordsOfDoc.clear()
        return false
      }
      this.recordsOfDoc.add(docId, i)
    }
    for (let i = 0; i < count; i++) {
      this.rows.push(rows[i]!)
      this.payloads.setStored(i, docs[docOf[i]!]!, i)
    }
    return true
  }

  /**
   * Record `index`'s payload as a copy made later whatever writes come between (a scroll): read now when it is still
   * JSON in the snapshot's file (and not kept: a reader that keeps it holds the only copy), else the one held.
   */
  pinPayload(index: number): () => VectorPayload {
    if (this.payloads.unparsedAt(index)) {
      const payload = this.payloads.peek(index)
      return () => payload
    }
    const payload = this.payloads.peek(index)
    return () => copyPayload(payload)
  }

  /**
   * The snapshot written from a copy taken at `frozenIds` (record `n` of the copy is payload `n` of `next`) is in place:
   * every record not upserted since reads its payload from `next`; those upserted since keep theirs (`next` holds an
   * older one, or none).
   */
  payloadsStoredAgain(frozenIds: FrozenIds, next: StoredPayloads | undefined): void {
    const changed = this.changedSinceFold
    const indexOf = new Int32Array(frozenIds.length)
    for (let n = 0; n < frozenIds.length; n++) {
      // most records are where they were; a delete since moved the last record into its hole
      const index = frozenIds.sameAt(n, this.ids) ? n : this.ids.indexOf(frozenIds.at(n))
      indexOf[n] = index < 0 || (changed !== undefined && changed.size > 0 && changed.has(frozenIds.at(n))) ? -1 : index
    }
    this.payloads.storedAgain(next, indexOf)
  }

  /** Gives every row back to the pool (the partition is dropped). */
  releaseAll(): void {
    for (const row of this.rows) this.pool.release(row)
    this.ids.clear()
    this.payloads.clear()
    this.rows.length = 0
    this.recordsOfDoc.clear()
  }

  /** The rows `filter` keeps: from the documents' own rows when it names documents only, else by a pass over the payloads. */
  private rowsKept(filter: VectorFilter): Int32Array {
    const out: number[] = []
    if (filter.doc_ids && (filter.metadata ?? []).length === 0) {
      for (const docId of new Set(filter.doc_ids)) for (const n of this.recordsOfDoc.numbersOf(docId)) out.push(n)
    } else {
      const keep = compileFilter(filter)
      this.payloads.inOrder(() => {
        for (let row = 0; row < this.payloads.length; row++) if (keep(this.payloads.peek(row))) out.push(row)
      })
    }
    return Int32Array.from(out)
  }

  /**
   * Applies `writes` (a log's, at open) as {@link apply} does one by one, but compares the rows they share with other
   * records only once all are applied, together (see {@link SharedRows.acquireUnchecked}).
   */
  applyAll(writes: Iterable<DecodedWrite>): void {
    const shares = new UncheckedShares()
    this.unchecked = { byId: new Map(), shares }
    let byId: Map<string, number>
    try {
      for (const write of writes) this.apply(write)
    } finally {
      byId = this.unchecked.byId
      this.unchecked = undefined
    }
    // the shares of records still holding them: a later write of a record replaced its share, a delete dropped it
    const current = new UncheckedShares()
    const indexOf: number[] = []
    for (const [id, k] of byId) {
      const index = this.ids.indexOf(id)
      if (index < 0) continue
      current.add(this.rows[index]!, shares.sources[shares.sourceOf[k]!]!, shares.offsets[k]!)
      indexOf.push(index)
    }
    for (const k of this.pool.differing(current)) {
      const index = indexOf[k]!
      this.rows[index] = this.pool.retake(this.rows[index]!, current.sources[current.sourceOf[k]!]!, current.offsets[k]!)
    }
  }

  apply(write: DecodedWrite): void {
    for (const docId of write.deleteDocIds) this.deleteDoc(docId)
    write.records.forEach(([id, payload], i) => this.upsert(id, payload, write.vectors, i * this.dims))
    this.seq = write.seq
  }

  /**
   * Exact top-k by dot product (= cosine for unit rows), via a min-heap whose root is the worst kept hit.
   * With a filter, only the rows it keeps enter the heap: when they are few, only their dot products are
   * computed (one kernel call per row); otherwise the whole matrix is, as without a filter. On an int8 pool the heap
   * keeps `limit × oversample` candidates by the int8 estimate, and they are ranked again by their exact float32 scores.
   */
  search(query: Float32Array, limit: number, filter?: VectorFilter): VectorHit[] {
    return this.top(query, limit, filter).map((hit) => ({ id: hit.id, score: hit.score, payload: this.payloads.copy(hit.row) }))
  }

  /** {@link search} without the payloads (nothing cloned). */
  rank(query: Float32Array, limit: number, filter?: VectorFilter): VectorRank[] {
    return this.top(query, limit, filter).map((hit) => ({ id: hit.id, score: hit.score }))
  }

  private top(query: Float32Array, limit: number, filter?: VectorFilter): { id: string; score: number; row: number }[] {
    const kept = filter ? this.rowsKept(filter) : undefined
    const n = kept ? kept.length : this.ids.length
    const k = Math.min(Math.floor(limit), n)
    if (!(k >= 1)) return [] // also NaN
    const poolRows = kept ? Array.from(kept, (index) => this.rows[index]!) : this.rows
    this.pool.score(query, poolRows)
    const scores = this.pool.scores
    const rescore = this.pool.estimates
    const best = topOf(this.ids, rescore ? Math.min(n, Math.ceil(k * this.pool.oversample)) : k, n, kept, poolRows, scores)
    if (rescore) {
      const exact = this.pool.exactScores(query, best.map((hit) => this.rows[hit.row]!))
      best.forEach((hit, i) => (hit.score = exact[i]!))
      best.sort((a, b) => (worse(this.ids, a.score, a.row, b.score, b.row) ? 1 : -1))
      best.length = k
    }
    return best.map(({ row, score }) => ({
      id: this.ids.at(row),
      // float32 rounding can push a unit-vector dot product a hair past ±1
      score: Math.max(-1, Math.min(1, score)),
      row
    }))
  }
}

/** `a` is worse than `b` when it scores lower, or equal and its id sorts later. */
function worse(ids: IdList, sa: number, ra: number, sb: number, rb: number): boolean {
  return sa < sb || (sa === sb && ids.at(ra) > ids.at(rb))
}

/** The best `k` of `n` candidates, best first: candidate `at` is record `kept[at]` (or `at`), scored `scores[poolRows[at]]`. */
function topOf(ids: IdList, k: number, n: number, kept: Int32Array | undefined, poolRows: ArrayLike<number>, scores: Float32Array): { row: number; score: number }[] {
  const heapScore = new Float64Array(k)
  const heapRow = new Int32Array(k)
  let size = 0
  const swap = (i: number, j: number): void => {
    const s = heapScore[i]!
    const r = heapRow[i]!
    heapScore[i] = heapScore[j]!
    heapRow[i] = heapRow[j]!
    heapScore[j] = s
    heapRow[j] = r
  }
  for (let at = 0; at < n; at++) {
    const row = kept ? kept[at]! : at
    const score = scores[poolRows[at]!]!
    if (size < k) {
      let i = size++
      heapScore[i] = score
      heapRow[i] = row
      while (i > 0) {
        const p = (i - 1) >> 1
        if (!worse(ids, heapScore[i]!, heapRow[i]!, heapScore[p]!, heapRow[p]!)) break
        swap(i, p)
        i = p
      }
    } else if (worse(ids, heapScore[0]!, heapRow[0]!, score, row)) {
      heapScore[0] = score
      heapRow[0] = row
      let i = 0
      for (;;) {
        const l = 2 * i + 1
        if (l >= size) break
        const r = l + 1
        const w = r < size && worse(ids, heapScore[r]!, heapRow[r]!, heapScore[l]!, heapRow[l]!) ? r : l
        if (!worse(ids, heapScore[w]!, heapRow[w]!, heapScore[i]!, heapRow[i]!)) break
        swap(i, w)
        i = w
      }
    }
  }
  const order = Array.from({ length: size }, (_, i) => i)
  order.sort((a, b) => (worse(ids, heapScore[a]!, heapRow[a]!, heapScore[b]!, heapRow[b]!) ? 1 : -1))
  return order.map((i) => ({ row: heapRow[i]!, score: heapScore[i]! }))
}

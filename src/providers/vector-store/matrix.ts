/** One partition of the embedded vector store in memory: its matrix of unit vectors, ids, payloads and search. */
import type { FileHandle } from 'node:fs/promises'
import { instantiateDotKernel, pagesFor, wasm, WASM_PAGE_BYTES, type DotKernel, type WasmMemory } from './dot-kernel.js'
import { compileFilter } from './filter.js'
import type { VectorFilter, VectorHit, VectorPayload, VectorRank } from './port.js'

// Small, since every namespace's partition starts with it: 16 rows of 512 floats fit one WebAssembly page.
const INITIAL_ROWS = 16

export interface DecodedWrite {
  seq: number
  deleteDocIds: string[]
  records: [string, VectorPayload][]
  /** `records.length * dims` floats, unit-norm rows in record order. */
  vectors: Float32Array
}

/** One collection held in memory: a row-major matrix of unit vectors in WebAssembly memory, grown by doubling. */
export class Collection {
  /** Floats per row: `dims` rounded up to 8 so the kernel's two 4-lane accumulators need no tail loop. */
  readonly stride: number
  capacity: number
  readonly memory: WasmMemory
  private readonly kernel: DotKernel
  /** Layout of `memory`: the query row, then `capacity` matrix rows, then one f32 score per row. */
  query!: Float32Array
  matrix!: Float32Array
  scores!: Float32Array
  readonly ids: string[] = []
  readonly payloads: VectorPayload[] = []
  readonly rowOf = new Map<string, number>()
  readonly idsOfDoc = new Map<string, Set<string>>()
  /** Sequence number of the last write applied (from the snapshot or the log). */
  seq = 0
  snapshotBytes = 0
  logBytes = 0
  log: FileHandle | undefined
  /** Set when a failed append could not be rolled back: the log may hold garbage, so no more writes. */
  broken: Error | undefined

  constructor(
    readonly dims: number,
    rows: number
  ) {
    this.stride = Math.ceil(dims / 8) * 8
    this.capacity = Math.max(rows, INITIAL_ROWS)
    this.memory = new wasm.Memory({ initial: pagesFor(this.stride, this.capacity) })
    this.kernel = instantiateDotKernel(this.memory)
    this.mapViews()
  }

  private mapViews(): void {
    const rowBytes = this.stride * 4
    this.query = new Float32Array(this.memory.buffer, 0, this.stride)
    this.matrix = new Float32Array(this.memory.buffer, rowBytes, this.capacity * this.stride)
    this.scores = new Float32Array(this.memory.buffer, rowBytes * (1 + this.capacity), this.capacity)
  }

  /** Grows (by doubling) until `rows` rows fit; throws RangeError when WebAssembly memory cannot grow. */
  reserve(rows: number): void {
    let capacity = this.capacity
    while (capacity < rows) capacity *= 2
    if (capacity === this.capacity) return
    const pages = pagesFor(this.stride, capacity)
    this.memory.grow(pages - this.memory.buffer.byteLength / WASM_PAGE_BYTES)
    this.capacity = capacity
    // growing detaches the old buffer; the rows keep their offsets, the score area moves behind them
    this.mapViews()
  }

  get size(): number {
    return this.ids.length
  }

  deleteDoc(docId: string): void {
    const ids = this.idsOfDoc.get(docId)
    if (!ids) return
    for (const id of [...ids]) this.deleteId(id)
  }

  /** Swap-remove: the last row moves into the hole so the matrix stays contiguous. */
  deleteId(id: string): void {
    const row = this.rowOf.get(id)
    if (row === undefined) return
    this.unlinkDoc(id, this.payloads[row]!.doc_id)
    const last = this.ids.length - 1
    if (row !== last) {
      const d = this.stride
      this.matrix.copyWithin(row * d, last * d, last * d + d)
      const moved = this.ids[last]!
      this.ids[row] = moved
      this.payloads[row] = this.payloads[last]!
      this.rowOf.set(moved, row)
    }
    this.ids.pop()
    this.payloads.pop()
    this.rowOf.delete(id)
  }

  /** Inserts or replaces `id`; `source[offset .. offset + dims)` must already be unit norm. */
  upsert(id: string, payload: VectorPayload, source: Float32Array, offset: number): void {
    let row = this.rowOf.get(id)
    if (row === undefined) {
      row = this.ids.length
      if (row >= this.capacity) this.reserve(row + 1)
      this.ids.push(id)
      this.payloads.push(payload)
      this.rowOf.set(id, row)
    } else {
      this.unlinkDoc(id, this.payloads[row]!.doc_id)
      this.payloads[row] = payload
    }
    this.matrix.set(source.subarray(offset, offset + this.dims), row * this.stride)
    let ids = this.idsOfDoc.get(payload.doc_id)
    if (!ids) this.idsOfDoc.set(payload.doc_id, (ids = new Set()))
    ids.add(id)
  }

  /** The rows `filter` keeps: from the documents' own rows when it names documents only, else by a pass over the payloads. */
  private rowsKept(filter: VectorFilter): Int32Array {
    const out: number[] = []
    if (filter.doc_ids && (filter.metadata ?? []).length === 0) {
      for (const docId of new Set(filter.doc_ids)) for (const id of this.idsOfDoc.get(docId) ?? []) out.push(this.rowOf.get(id)!)
    } else {
      const keep = compileFilter(filter)
      for (let row = 0; row < this.payloads.length; row++) if (keep(this.payloads[row]!)) out.push(row)
    }
    return Int32Array.from(out)
  }

  apply(write: DecodedWrite): void {
    for (const docId of write.deleteDocIds) this.deleteDoc(docId)
    write.records.forEach(([id, payload], i) => this.upsert(id, payload, write.vectors, i * this.dims))
    this.seq = write.seq
  }

  private unlinkDoc(id: string, docId: string): void {
    const ids = this.idsOfDoc.get(docId)
    if (!ids) return
    ids.delete(id)
    if (ids.size === 0) this.idsOfDoc.delete(docId)
  }

  /**
   * Exact top-k by dot product (= cosine for unit rows), via a min-heap whose root is the worst kept hit.
   * With a filter, only the rows it keeps enter the heap: when they are few, only their dot products are
   * computed (one kernel call per row); otherwise the whole matrix is, as without a filter.
   */
  search(query: Float32Array, limit: number, filter?: VectorFilter): VectorHit[] {
    return this.top(query, limit, filter).map((hit) => ({ id: hit.id, score: hit.score, payload: structuredClone(this.payloads[hit.row]!) }))
  }

  /** {@link search} without the payloads (nothing cloned). */
  rank(query: Float32Array, limit: number, filter?: VectorFilter): VectorRank[] {
    return this.top(query, limit, filter).map((hit) => ({ id: hit.id, score: hit.score }))
  }

  private top(query: Float32Array, limit: number, filter?: VectorFilter): { id: string; score: number; row: number }[] {
    const rows = filter ? this.rowsKept(filter) : undefined
    const n = rows ? rows.length : this.ids.length
    const k = Math.min(Math.floor(limit), n)
    if (!(k >= 1)) return [] // also NaN
    this.query.set(query)
    const rowBytes = this.stride * 4
    const scoresAt = rowBytes * (1 + this.capacity)
    if (rows && rows.length * 4 < this.ids.length) {
      for (const row of rows) this.kernel.dots(rowBytes * (1 + row), 0, 1, this.stride, scoresAt + row * 4)
    } else {
      this.kernel.dots(rowBytes, 0, this.ids.length, this.stride, scoresAt)
    }
    const scores = this.scores
    const ids = this.ids
    const heapScore = new Float64Array(k)
    const heapRow = new Int32Array(k)
    let size = 0
    // `a` is worse than `b` when it scores lower, or equal and its id sorts later.
    const worse = (sa: number, ra: number, sb: number, rb: number): boolean =>
      sa < sb || (sa === sb && ids[ra]! > ids[rb]!)
    const swap = (i: number, j: number): void => {
      const s = heapScore[i]!
      const r = heapRow[i]!
      heapScore[i] = heapScore[j]!
      heapRow[i] = heapRow[j]!
      heapScore[j] = s
      heapRow[j] = r
    }
    for (let at = 0; at < n; at++) {
      const row = rows ? rows[at]! : at
      const score = scores[row]!
      if (size < k) {
        let i = size++
        heapScore[i] = score
        heapRow[i] = row
        while (i > 0) {
          const p = (i - 1) >> 1
          if (!worse(heapScore[i]!, heapRow[i]!, heapScore[p]!, heapRow[p]!)) break
          swap(i, p)
          i = p
        }
      } else if (worse(heapScore[0]!, heapRow[0]!, score, row)) {
        heapScore[0] = score
        heapRow[0] = row
        let i = 0
        for (;;) {
          const l = 2 * i + 1
          if (l >= size) break
          const r = l + 1
          const w = r < size && worse(heapScore[r]!, heapRow[r]!, heapScore[l]!, heapRow[l]!) ? r : l
          if (!worse(heapScore[w]!, heapRow[w]!, heapScore[i]!, heapRow[i]!)) break
          swap(i, w)
          i = w
        }
      }
    }
    const order = Array.from({ length: size }, (_, i) => i)
    order.sort((a, b) => (worse(heapScore[a]!, heapRow[a]!, heapScore[b]!, heapRow[b]!) ? 1 : -1))
    return order.map((i) => {
      const row = heapRow[i]!
      return {
        id: ids[row]!,
        // float32 rounding can push a unit-vector dot product a hair past ±1
        score: Math.max(-1, Math.min(1, heapScore[i]!)),
        row
      }
    })
  }
}

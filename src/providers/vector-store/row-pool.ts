/**
 * The distinct vectors of one namespace's partitions (of one row width), each held once in WebAssembly memory and
 * shared by every record that has it, in whichever collection: a derived Episode's Facets and FacetPoints take their
 * chunk's vector, so without sharing a chunk's vector was held about six times (bench/results/memory.log.md).
 */
import { instantiateDotKernel, pagesFor, wasm, WASM_PAGE_BYTES, type DotKernel, type WasmMemory } from './dot-kernel.js'

// Small, since every namespace starts with it: 16 rows of 512 floats fit one WebAssembly page.
const INITIAL_ROWS = 16
const GROWTH = 1.25

/** How many rows (with their scores, after the query row) `pages` WebAssembly pages hold. */
const rowsIn = (stride: number, pages: number): number => Math.floor((pages * WASM_PAGE_BYTES - stride * 4) / (stride * 4 + 4))

export class RowPool {
  capacity = INITIAL_ROWS
  readonly memory: WasmMemory
  private readonly kernel: DotKernel
  /** Layout of `memory`: the query row, then `capacity` rows, then one f32 score per row. */
  query!: Float32Array
  matrix!: Float32Array
  scores!: Float32Array
  /** Records holding each row; 0: free. */
  private refs = new Int32Array(INITIAL_ROWS)
  /** Rows in use or freed; rows at and past it were never used. */
  end = 0
  private readonly free: number[] = []
  private readonly byHash = new Map<number, number[]>()
  /** Rows held by at least one record. */
  live = 0

  /** `stride`: floats per row, a multiple of 8 (the kernel's two 4-lane accumulators need no tail loop). */
  constructor(readonly dims: number, readonly stride: number) {
    this.memory = new wasm.Memory({ initial: pagesFor(stride, this.capacity) })
    this.kernel = instantiateDotKernel(this.memory)
    this.mapViews()
  }

  private mapViews(): void {
    const rowBytes = this.stride * 4
    this.query = new Float32Array(this.memory.buffer, 0, this.stride)
    this.matrix = new Float32Array(this.memory.buffer, rowBytes, this.capacity * this.stride)
    this.scores = new Float32Array(this.memory.buffer, rowBytes * (1 + this.capacity), this.capacity)
  }

  /** Makes room for `rows` more distinct rows; throws RangeError when WebAssembly memory cannot grow. */
  reserve(rows: number): void {
    const needed = this.end + Math.max(0, rows - this.free.length)
    if (needed <= this.capacity) return
    // WebAssembly memory never shrinks, so the pool grows by a quarter (not doubling: up to half of it was never used,
    // 58 MiB of 128 at 20k chunks), and every row its whole pages hold is usable
    const pages = pagesFor(this.stride, Math.max(needed, Math.ceil(this.capacity * GROWTH)))
    const capacity = rowsIn(this.stride, pages)
    this.memory.grow(pages - this.memory.buffer.byteLength / WASM_PAGE_BYTES)
    // growing detaches the old buffer; the rows keep their offsets, the score area moves behind them
    const refs = new Int32Array(capacity)
    refs.set(this.refs)
    this.refs = refs
    this.capacity = capacity
    this.mapViews()
  }

  /** The row holding `source[offset .. offset + dims)` (a unit vector), shared when one is already held; one more reference. */
  acquire(source: Float32Array, offset: number): number {
    const vector = source.subarray(offset, offset + this.dims)
    const hash = hashOf(vector)
    const same = this.byHash.get(hash)
    for (const row of same ?? []) {
      if (this.equals(row, vector)) {
        this.refs[row]! += 1
        return row
      }
    }
    if (this.free.length === 0 && this.end >= this.capacity) this.reserve(1)
    const row = this.free.pop() ?? this.end++
    this.matrix.set(vector, row * this.stride)
    this.refs[row] = 1
    this.live += 1
    if (same) same.push(row)
    else this.byHash.set(hash, [row])
    return row
  }

  /** One reference fewer; a row no record holds is free for another vector. */
  release(row: number): void {
    this.refs[row]! -= 1
    if (this.refs[row]! > 0) return
    this.live -= 1
    const hash = hashOf(this.row(row))
    const same = this.byHash.get(hash)!
    same.splice(same.indexOf(row), 1)
    if (same.length === 0) this.byHash.delete(hash)
    this.free.push(row)
  }

  /** A view of the row's `dims` floats (valid until the pool grows). */
  row(row: number): Float32Array {
    return this.matrix.subarray(row * this.stride, row * this.stride + this.dims)
  }

  /**
   * Sets `scores[row]` to the row's dot product with `query` for every row of `rows`: one kernel call per row when
   * they are few beside the rows in use, else one call over them all.
   */
  score(query: Float32Array, rows: ArrayLike<number>): void {
    this.query.set(query)
    const rowBytes = this.stride * 4
    const scoresAt = rowBytes * (1 + this.capacity)
    if (rows.length * 4 < this.end) {
      for (let i = 0; i < rows.length; i++) this.kernel.dots(rowBytes * (1 + rows[i]!), 0, 1, this.stride, scoresAt + rows[i]! * 4)
    } else {
      this.kernel.dots(rowBytes, 0, this.end, this.stride, scoresAt)
    }
  }

  private equals(row: number, vector: Float32Array): boolean {
    const at = row * this.stride
    for (let i = 0; i < vector.length; i++) if (this.matrix[at + i] !== vector[i]) return false
    return true
  }
}

/** FNV-1a over the floats' bits. */
function hashOf(vector: Float32Array): number {
  const bits = new Uint32Array(vector.buffer, vector.byteOffset, vector.length)
  let h = 0x811c9dc5
  for (let i = 0; i < bits.length; i++) h = Math.imul(h ^ bits[i]!, 0x01000193)
  return h >>> 0
}

/** The distinct float32 vectors of one namespace's partitions (of one row width), in WebAssembly memory. */
import { instantiateDotKernel, pagesFor, wasm, WASM_PAGE_BYTES, type DotKernel, type WasmMemory } from './dot-kernel.js'
import { SharedRows } from './shared-rows.js'

// Small, since every namespace starts with it: 16 rows of 512 floats fit one WebAssembly page.
const INITIAL_ROWS = 16
export const GROWTH = 1.25

/** How many rows (with their scores, after the query row) `pages` WebAssembly pages hold. */
const rowsIn = (stride: number, pages: number): number => Math.floor((pages * WASM_PAGE_BYTES - stride * 4) / (stride * 4 + 4))

export class RowPool extends SharedRows {
  capacity = INITIAL_ROWS
  readonly estimates = false
  readonly oversample = 1
  memory: WasmMemory
  private kernel: DotKernel
  /** Layout of `memory`: the query row, then `capacity` rows, then one f32 score per row. */
  query!: Float32Array
  matrix!: Float32Array
  scores!: Float32Array

  /** `stride`: floats per row, a multiple of 8 (the kernel's two 4-lane accumulators need no tail loop). */
  constructor(dims: number, readonly stride: number) {
    super(dims, INITIAL_ROWS)
    this.memory = new wasm.Memory({ initial: pagesFor(stride, this.capacity) })
    this.kernel = instantiateDotKernel(this.memory)
    this.mapViews()
  }

  protected restart(): void {
    this.capacity = INITIAL_ROWS
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

  protected grow(rows: number): void {
    // WebAssembly memory never shrinks, so the pool grows by a quarter (not doubling: up to half of it was never used,
    // 58 MiB of 128 at 20k chunks), and every row its whole pages hold is usable
    const pages = pagesFor(this.stride, Math.max(rows, Math.ceil(this.capacity * GROWTH)))
    this.memory.grow(pages - this.memory.buffer.byteLength / WASM_PAGE_BYTES)
    // growing detaches the old buffer; the rows keep their offsets, the score area moves behind them
    this.capacity = rowsIn(this.stride, pages)
    this.mapViews()
  }

  protected store(row: number, vector: Float32Array): void {
    this.matrix.set(vector, row * this.stride)
  }

  row(row: number): Float32Array {
    return this.matrix.subarray(row * this.stride, row * this.stride + this.dims)
  }

  /** One kernel call per row when the rows are few beside the rows in use, else one call over them all. */
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

  /** The same as {@link score}'s, which are exact here. */
  exactScores(query: Float32Array, rows: readonly number[]): Float32Array {
    this.score(query, rows)
    return Float32Array.from(rows, (row) => this.scores[row]!)
  }

  close(): void {}

  protected equals(row: number, source: Float32Array, offset: number): boolean {
    const at = row * this.stride
    for (let i = 0; i < this.dims; i++) if (this.matrix[at + i] !== source[offset + i]) return false
    return true
  }

  /** Exact here: the floats are in memory. */
  protected mayEqual(row: number, source: Float32Array, offset: number): boolean {
    return this.equals(row, source, offset)
  }

  differing(): Iterable<number> {
    return []
  }
}

/**
 * The distinct vectors of one namespace's partitions as int8 rows in WebAssembly memory (a quarter of float32's
 * bytes), each with its own scale (symmetric: the largest magnitude maps to 127), scanned by the int8 kernel. Their
 * float32 rows live in a file (float-row-file.ts): a search takes `limit × oversample` candidates by the int8 scan and
 * scores them again exactly, by the float kernel over their float rows, so the scores it returns are float32's.
 */
import { instantiateDotKernel, instantiateInt8Kernel, wasm, WASM_PAGE_BYTES, type DotKernel, type Int8DotKernel, type WasmMemory } from './dot-kernel.js'
import { FloatRowFile } from './float-row-file.js'
import { quantize } from './int8-quantize.js'
import { GROWTH } from './row-pool.js'
import { SharedRows, type UncheckedShares } from './shared-rows.js'

const INITIAL_ROWS = 64

/** WebAssembly pages for a query row, `rows` int8 rows of `stride` bytes, and a scale and a score per row. */
const pagesFor = (stride: number, rows: number): number => Math.ceil((stride * (1 + rows) + rows * 8) / WASM_PAGE_BYTES)
const rowsIn = (stride: number, pages: number): number => Math.floor((pages * WASM_PAGE_BYTES - stride) / (stride + 8))

export class Int8RowPool extends SharedRows {
  capacity = INITIAL_ROWS
  readonly estimates = true
  memory: WasmMemory
  /** Bytes a row: `dims` rounded up to 16 (the kernel's step). */
  readonly stride: number
  private kernel: Int8DotKernel
  private readonly floats: FloatRowFile
  /** Layout of `memory`: the query row, `capacity` rows, one f32 scale per row, one f32 score per row. */
  private query!: Int8Array
  private matrix!: Int8Array
  private scales!: Float32Array
  /** Each row's int8 dot product with the query times the row's scale: the cosine times a factor shared by every row. */
  scores!: Float32Array
  /** Made at the first search (a namespace that is only written holds none), replaced by a larger one when needed. */
  private exact: ExactScorer | undefined
  /** Where {@link rowsInto} reads a run of rows (made at its first use). */
  private gathered: Buffer | undefined
  /** The float row {@link equals} reads, and its bytes. */
  private readonly compared: Float32Array
  private readonly comparedBytes: Uint8Array

  /**
   * `floatStride`: floats a row takes in the float pool (row-pool.ts), so that the exact scores are computed exactly as
   * float32 ones are; `dir`: where the float rows' file is made.
   */
  constructor(dims: number, private readonly floatStride: number, readonly oversample: number, dir: string) {
    super(dims, INITIAL_ROWS)
    this.stride = Math.ceil(dims / 16) * 16
    this.memory = new wasm.Memory({ initial: pagesFor(this.stride, this.capacity) })
    this.kernel = instantiateInt8Kernel(this.memory)
    this.floats = new FloatRowFile(dir, dims)
    this.compared = new Float32Array(dims)
    this.comparedBytes = new Uint8Array(this.compared.buffer)
    this.mapViews()
  }

  /** The int8 rows' memory as made; the float rows' file keeps its length (page cache, written over as rows are used again). */
  protected restart(): void {
    this.capacity = INITIAL_ROWS
    this.memory = new wasm.Memory({ initial: pagesFor(this.stride, this.capacity) })
    this.kernel = instantiateInt8Kernel(this.memory)
    this.exact = undefined
    this.mapViews()
  }

  private mapViews(): void {
    const buffer = this.memory.buffer
    this.query = new Int8Array(buffer, 0, this.stride)
    this.matrix = new Int8Array(buffer, this.stride, this.capacity * this.stride)
    this.scales = new Float32Array(buffer, this.scalesAt, this.capacity)
    this.scores = new Float32Array(buffer, this.scalesAt + this.capacity * 4, this.capacity)
  }

  private get scalesAt(): number {
    return this.stride * (1 + this.capacity)
  }

  protected grow(rows: number): void {
    const pages = pagesFor(this.stride, Math.max(rows, Math.ceil(this.capacity * GROWTH)))
    const scalesWere = this.scalesAt
    const capacityWas = this.capacity
    this.memory.grow(pages - this.memory.buffer.byteLength / WASM_PAGE_BYTES)
    this.capacity = rowsIn(this.stride, pages)
    // the rows keep their offsets; the scales move behind the longer row area (later, so copied from their end first)
    new Uint8Array(this.memory.buffer).copyWithin(this.scalesAt, scalesWere, scalesWere + capacityWas * 4)
    this.mapViews()
  }

  protected store(row: number, vector: Float32Array): void {
    this.scales[row] = quantize(vector, this.matrix, row * this.stride)
    this.floats.write(row, vector)
  }

  /** The row's float32 vector, read from the file (a fresh copy). */
  row(row: number): Float32Array {
    return this.floats.read(row)
  }

  /**
   * Reads the rows in row order, each run of rows near one another (gaps of at most {@link GATHER_GAP_ROWS}) at once: a
   * snapshot written off the write queue read a row at a time, a third of a 1M ingest's main thread at 600k chunks.
   */
  override rowsInto(rows: readonly number[], from: number, to: number, into: Float32Array): void {
    const block = (this.gathered ??= Buffer.allocUnsafe(COMPARED_BLOCK_ROWS * this.dims * 4))
    const gather = new Gathering(rows, from, to, into, this.dims)
    for (let run = gather.next(); run; run = gather.next()) {
      this.floats.readRows(run.from, run.count, block.subarray(0, run.count * this.dims * 4))
      gather.copy(block)
    }
  }

  /** {@link rowsInto} with the event loop running while each run is read (rows the page cache dropped come from disk). */
  override async rowsIntoAsync(rows: readonly number[], from: number, to: number, into: Float32Array): Promise<void> {
    // a block of its own: two partitions of the namespace may be written at once
    const block = Buffer.allocUnsafe(COMPARED_BLOCK_ROWS * this.dims * 4)
    const gather = new Gathering(rows, from, to, into, this.dims)
    for (let run = gather.next(); run; run = gather.next()) {
      await this.floats.readRowsAsync(run.from, run.count, block.subarray(0, run.count * this.dims * 4))
      gather.copy(block)
    }
  }

  score(query: Float32Array, rows: ArrayLike<number>): void {
    quantize(query, this.query, 0)
    const scalesAt = this.scalesAt
    const scoresAt = scalesAt + this.capacity * 4
    if (rows.length * 4 < this.end) {
      for (let i = 0; i < rows.length; i++) {
        const r = rows[i]!
        this.kernel.dots(this.stride * (1 + r), 0, 1, this.stride, scoresAt + r * 4, scalesAt + r * 4)
      }
    } else {
      this.kernel.dots(this.stride, 0, this.end, this.stride, scoresAt, scalesAt)
    }
  }

  exactScores(query: Float32Array, rows: readonly number[]): Float32Array {
    if (!this.exact || rows.length > this.exact.capacity) this.exact = new ExactScorer(this.floatStride, Math.max(rows.length, 64))
    return this.exact.scores(query, rows, this.floats)
  }

  close(): void {
    this.floats.close()
  }

  protected equals(row: number, source: Float32Array, offset: number): boolean {
    // read into one buffer: a start-up compares millions of rows (a copy each was a third of its time at 1M chunks)
    const stored = this.compared
    this.floats.readInto(row, this.comparedBytes)
    for (let i = 0; i < this.dims; i++) if (stored[i] !== source[offset + i]) return false
    return true
  }

  /**
   * Always: the hash alone finds the row. Any look at the row here costs a load a cache miss a record (its int8 values
   * lie anywhere in hundreds of MiB); the vectors of a hash that are not the row's (a collision: tens at 1M chunks) are
   * found by {@link differing}.
   */
  protected mayEqual(): boolean {
    return true
  }

  /** Compares in row order, reading the float rows a block at a time. */
  differing(unchecked: UncheckedShares): number[] {
    const out: number[] = []
    const { rows, sourceOf, offsets } = unchecked
    if (rows.length === 0) return out
    // the shares ordered by row, by counting
    const starts = new Int32Array(this.end + 1)
    for (const row of rows) starts[row + 1]! += 1
    for (let row = 0; row < this.end; row++) starts[row + 1]! += starts[row]!
    const order = new Int32Array(rows.length)
    for (let k = 0; k < rows.length; k++) order[starts[rows[k]!]!++] = k
    const dims = this.dims
    // compared as bytes (memcmp): the same test for finite floats but for a zero's sign
    const block = Buffer.allocUnsafe(COMPARED_BLOCK_ROWS * dims * 4)
    const sources = unchecked.sources.map((source) => Buffer.from(source.buffer, source.byteOffset, source.byteLength))
    const rowBytes = dims * 4
    let from = 0
    let to = 0
    for (let n = 0, ahead = 0; n < order.length; n++) {
      const k = order[n]!
      const row = rows[k]!
      if (row >= to) {
        // the block runs from this row to the last row asked for within COMPARED_BLOCK_ROWS of it
        from = row
        ahead = Math.max(ahead, n)
        while (ahead + 1 < order.length && rows[order[ahead + 1]!]! < from + COMPARED_BLOCK_ROWS) ahead += 1
        to = rows[order[ahead]!]! + 1
        this.floats.readRows(from, to - from, block.subarray(0, (to - from) * rowBytes))
      }
      const at = (row - from) * rowBytes
      const offset = offsets[k]! * 4
      if (block.compare(sources[sourceOf[k]!]!, offset, offset + rowBytes, at, at + rowBytes) !== 0) out.push(k)
    }
    return out
  }
}

/** Float rows read at once when shared rows are compared, or rows gathered (2 MiB at 512 dimensions). */
const COMPARED_BLOCK_ROWS = 1024
/** Rows not asked for that a gathering read may take in with those asked for, between two of them. */
const GATHER_GAP_ROWS = 16

/**
 * `rows[from .. to)` in row order, cut into runs of rows near one another (gaps of at most {@link GATHER_GAP_ROWS},
 * {@link COMPARED_BLOCK_ROWS} rows at most): `next` gives the rows a run spans, `copy` takes the run's rows from them
 * into their places in `into`.
 */
class Gathering {
  private readonly order: Int32Array
  private readonly out: Uint8Array
  private readonly rowBytes: number
  /** The next row to place (an index into `order`), and the run read last: its first row and the place after it. */
  private m = 0
  private runFrom = 0
  private runEnd = 0

  constructor(private readonly rows: readonly number[], private readonly from: number, to: number, into: Float32Array, dims: number) {
    const n = to - from
    this.order = new Int32Array(n)
    for (let k = 0; k < n; k++) this.order[k] = k
    this.order.sort((a, b) => rows[from + a]! - rows[from + b]!)
    this.rowBytes = dims * 4
    this.out = new Uint8Array(into.buffer, into.byteOffset, n * this.rowBytes)
  }

  private rowAt(m: number): number {
    return this.rows[this.from + this.order[m]!]!
  }

  /** The rows the next run spans, or undefined when every row is placed. */
  next(): { from: number; count: number } | undefined {
    if (this.m >= this.order.length) return undefined
    const first = this.rowAt(this.m)
    let last = first
    let end = this.m + 1
    for (; end < this.order.length; end++) {
      const row = this.rowAt(end)
      if (row - last > GATHER_GAP_ROWS || row >= first + COMPARED_BLOCK_ROWS) break
      last = row
    }
    this.runFrom = first
    this.runEnd = end
    return { from: first, count: last - first + 1 }
  }

  /** Places the rows of the run `next` gave, from `block` (the run's rows read from its first). */
  copy(block: Uint8Array): void {
    const rowBytes = this.rowBytes
    for (; this.m < this.runEnd; this.m++) {
      const at = (this.rowAt(this.m) - this.runFrom) * rowBytes
      this.out.set(block.subarray(at, at + rowBytes), this.order[this.m]! * rowBytes)
    }
  }
}

/** Exact float32 scores of a few rows: their floats read into a memory of their own and scored by the float kernel. */
class ExactScorer {
  private readonly memory: WasmMemory
  private readonly kernel: DotKernel

  constructor(private readonly stride: number, readonly capacity: number) {
    this.memory = new wasm.Memory({ initial: Math.ceil((stride * 4 * (1 + capacity) + capacity * 4) / WASM_PAGE_BYTES) })
    this.kernel = instantiateDotKernel(this.memory)
  }

  scores(query: Float32Array, rows: readonly number[], floats: FloatRowFile): Float32Array {
    const rowBytes = this.stride * 4
    // the padding of every row and of the query stays zero: only the first `dims` floats are ever written
    new Float32Array(this.memory.buffer, 0, query.length).set(query)
    rows.forEach((row, i) => floats.readInto(row, new Uint8Array(this.memory.buffer, rowBytes * (1 + i), floats.dims * 4)))
    const scoresAt = rowBytes * (1 + this.capacity)
    this.kernel.dots(rowBytes, 0, rows.length, this.stride, scoresAt)
    return new Float32Array(this.memory.buffer, scoresAt, rows.length).slice()
  }
}

import { RowsByHash } from './rows-by-hash.js'

/**
 * What every pool of rows shares: each distinct vector of one namespace's partitions (of one dimension) held once,
 * found again by a hash of its bits, with a count of the records holding it and a list of rows given back. A derived
 * Episode's Facets and FacetPoints take their chunk's vector, so without sharing a chunk's vector was held about six
 * times (bench/results/memory.log.md). Subclasses say how a row is kept: float32 (row-pool.ts) or int8 with the floats
 * in a file (int8-row-pool.ts).
 */
export abstract class SharedRows {
  /** Rows the memory holds now. */
  abstract capacity: number
  /** One score per row, written by {@link score}. */
  abstract scores: Float32Array
  /** Whether {@link score} only estimates: then a search scores its candidates again with {@link exactScores}. */
  abstract readonly estimates: boolean
  /** Candidates a search takes by {@link score} per hit asked, when it estimates. */
  abstract readonly oversample: number
  /** Records holding each row; 0: free. */
  private refs: Int32Array
  /** The hash of each row's vector. */
  private hashes: Uint32Array
  /** Rows in use or freed; rows at and past it were never used. */
  end = 0
  private readonly free: number[] = []
  private readonly byHash = new RowsByHash()
  /** Rows held by at least one record. */
  live = 0
  /** The text of the first record that took each row, while the row is held: what a row-mate's text may end with. */
  private readonly texts: (string | undefined)[] = []

  constructor(readonly dims: number, private readonly initialRows: number) {
    this.refs = new Int32Array(initialRows)
    this.hashes = new Uint32Array(initialRows)
  }

  /**
   * When no record holds a row any more, gives the memory back: the pool is as it was made. (WebAssembly memory never
   * shrinks, so a pool whose records were all dropped held its largest size until the process ended.)
   */
  shrinkWhenEmpty(): void {
    if (this.live > 0 || this.end === 0) return
    this.end = 0
    this.free.length = 0
    this.byHash.clear()
    this.texts.length = 0
    this.refs = new Int32Array(this.initialRows)
    this.hashes = new Uint32Array(this.initialRows)
    this.restart()
  }

  /** Makes room for `rows` more distinct rows; throws RangeError when the memory cannot grow. */
  reserve(rows: number): void {
    const needed = this.end + Math.max(0, rows - this.free.length)
    if (needed <= this.capacity) return
    this.grow(needed)
    const refs = new Int32Array(this.capacity)
    refs.set(this.refs)
    this.refs = refs
    const hashes = new Uint32Array(this.capacity)
    hashes.set(this.hashes)
    this.hashes = hashes
  }

  /**
   * The row holding `source[offset .. offset + dims)` (a unit vector), shared when one is already held; one more reference.
   * `text`, the taking record's text, is kept as the row's ({@link textOf}) when the row is new. `hash`: the vector's
   * {@link hashAt} as a snapshot recorded it, to spare hashing it again (a wrong one costs sharing, never a wrong row: a
   * row is shared only when its floats are equal).
   */
  acquire(source: Float32Array, offset: number, text?: string, hash = hashOf(source, offset, this.dims)): number {
    const table = this.byHash
    for (let slot = table.home(hash), row = table.rowAt(slot); row !== -1; slot = table.next(slot), row = table.rowAt(slot)) {
      if (table.hashAt(slot) === hash && this.equals(row, source, offset)) {
        this.refs[row]! += 1
        return row
      }
    }
    return this.takeNew(source, offset, text, hash)
  }

  /**
   * {@link acquire} but for the float comparison of a row found by its hash: when one row of the hash
   * {@link mayEqual}s the vector, it is shared unchecked and answered as `~row` (negative). The caller compares such
   * shares later, many together, by {@link differing} (an int8 pool reads its floats from a file: one read a row was
   * most of a 1M-chunk start-up's vector load), and takes a row again by {@link acquire} for each found unequal.
   */
  acquireUnchecked(source: Float32Array, offset: number, hash: number, text?: string): number {
    const table = this.byHash
    let match = -1
    let matches = 0
    for (let slot = table.home(hash), row = table.rowAt(slot); row !== -1; slot = table.next(slot), row = table.rowAt(slot)) {
      if (table.hashAt(slot) === hash && this.mayEqual(row, source, offset)) {
        match = row
        matches += 1
      }
    }
    if (matches === 0) return this.takeNew(source, offset, text, hash)
    if (matches > 1) return this.acquire(source, offset, text, hash)
    this.refs[match]! += 1
    return ~match
  }

  /** The hash {@link acquire} takes by default. */
  hashOf(source: Float32Array, offset: number): number {
    return hashOf(source, offset, this.dims)
  }

  /**
   * The rows of `count` vectors one after another in `source` (a snapshot's records), whose {@link hashAt}s are
   * `hashes` as the snapshot recorded them: what {@link acquire} gives each in turn, the shares compared all together.
   */
  acquireAll(source: Float32Array, count: number, hashes: Uint32Array): Int32Array {
    const rows = new Int32Array(count)
    const unchecked = new UncheckedShares()
    for (let i = 0; i < count; i++) {
      const taken = this.acquireUnchecked(source, i * this.dims, hashes[i]!)
      rows[i] = taken < 0 ? ~taken : taken
      if (taken < 0) unchecked.add(rows[i]!, source, i * this.dims)
    }
    for (const k of this.differing(unchecked)) {
      const i = unchecked.offsets[k]! / this.dims
      rows[i] = this.retake(rows[i]!, source, i * this.dims, hashes[i])
    }
    return rows
  }

  /** For a vector found unequal to the row it was shared unchecked ({@link differing}): that row let go, its own taken. */
  retake(row: number, source: Float32Array, offset: number, hash?: number): number {
    this.release(row)
    return this.acquire(source, offset, undefined, hash)
  }

  private takeNew(source: Float32Array, offset: number, text: string | undefined, hash: number): number {
    if (this.free.length === 0 && this.end >= this.capacity) this.reserve(1)
    const row = this.free.pop() ?? this.end++
    this.store(row, source.subarray(offset, offset + this.dims))
    this.refs[row] = 1
    this.hashes[row] = hash
    this.texts[row] = text
    this.live += 1
    this.byHash.add(row, hash)
    return row
  }

  /** One more reference to a row already held: it keeps its vector until {@link release}d (a snapshot being written reads it). */
  hold(row: number): void {
    if (!(this.refs[row]! > 0)) throw new RangeError(`row ${row} is not held`)
    this.refs[row]! += 1
  }

  /** One reference fewer; a row no record holds is free for another vector. */
  release(row: number): void {
    this.refs[row]! -= 1
    if (this.refs[row]! > 0) return
    this.live -= 1
    this.texts[row] = undefined
    this.byHash.remove(row, this.hashes[row]!)
    this.free.push(row)
  }

  /** The hash of the vector `row` holds (FNV-1a over its floats' bits), as {@link acquire} takes it. */
  hashAt(row: number): number {
    return this.hashes[row]!
  }

  /** The text the row's first record had (undefined when it gave none, or the row is free). */
  textOf(row: number): string | undefined {
    return this.texts[row]
  }

  /** The row's `dims` floats as stored (a view valid until the pool grows, or a fresh copy). */
  abstract row(row: number): Float32Array

  /** The floats of rows `rows[from .. to)`, one after another, into `into`. */
  rowsInto(rows: readonly number[], from: number, to: number, into: Float32Array): void {
    for (let i = from; i < to; i++) into.set(this.row(rows[i]!), (i - from) * this.dims)
  }

  /** {@link rowsInto}, for rows that may be read from a file: the event loop runs while they are read. */
  async rowsIntoAsync(rows: readonly number[], from: number, to: number, into: Float32Array): Promise<void> {
    this.rowsInto(rows, from, to, into)
  }
  /** Sets `scores[row]` for every row of `rows` to the row's dot product with `query` (a unit vector), or its estimate. */
  abstract score(query: Float32Array, rows: ArrayLike<number>): void
  /** The exact float32 dot products of `query` with `rows`, in their order. */
  abstract exactScores(query: Float32Array, rows: readonly number[]): Float32Array
  /** Frees what the pool holds outside the JavaScript heap. */
  abstract close(): void
  /** Makes the memory again as the constructor made it, for `initialRows` rows (the old one is left to the collector). */
  protected abstract restart(): void
  /** Grows the memory to at least `rows` rows and sets {@link capacity}. */
  protected abstract grow(rows: number): void
  protected abstract store(row: number, vector: Float32Array): void
  /** Whether the row holds exactly `source[offset .. offset + dims)`. */
  protected abstract equals(row: number, source: Float32Array, offset: number): boolean
  /** False only when the row's vector is not `source[offset ..]`; true when it may be (see {@link differing}). */
  protected abstract mayEqual(row: number, source: Float32Array, offset: number): boolean
  /** The shares (their indices in `unchecked`) whose vector is not their row's. */
  abstract differing(unchecked: UncheckedShares): Iterable<number>
}

/** Rows shared by {@link SharedRows.acquireUnchecked}, each with the vector it was shared for, to compare together. */
export class UncheckedShares {
  rows: number[] = []
  /** Where each vector lies: `sources[sourceOf[k]]` from `offsets[k]`. */
  sourceOf: number[] = []
  offsets: number[] = []
  sources: Float32Array[] = []

  add(row: number, source: Float32Array, offset: number): void {
    if (this.sources[this.sources.length - 1] !== source) this.sources.push(source)
    this.rows.push(row)
    this.sourceOf.push(this.sources.length - 1)
    this.offsets.push(offset)
  }

  get size(): number {
    return this.rows.length
  }
}

/** FNV-1a over the bits of `source[offset .. offset + dims)`. */
function hashOf(source: Float32Array, offset: number, dims: number): number {
  const bits = new Uint32Array(source.buffer, source.byteOffset + offset * 4, dims)
  let h = 0x811c9dc5
  for (let i = 0; i < bits.length; i++) h = Math.imul(h ^ bits[i]!, 0x01000193)
  return h >>> 0
}

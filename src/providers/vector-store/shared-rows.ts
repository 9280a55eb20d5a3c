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
  /** The rows of each hash: the row alone (nearly every hash), or the rows when several vectors share it. */
  private readonly byHash = new Map<number, number | number[]>()
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
  acquire(source: Float32Array, offset: number, text?: string, hash = hashOf(source.subarray(offset, offset + this.dims))): number {
    const vector = source.subarray(offset, offset + this.dims)
    const same = this.byHash.get(hash)
    for (const row of same === undefined ? [] : typeof same === 'number' ? [same] : same) {
      if (this.equals(row, vector)) {
        this.refs[row]! += 1
        return row
      }
    }
    if (this.free.length === 0 && this.end >= this.capacity) this.reserve(1)
    const row = this.free.pop() ?? this.end++
    this.store(row, vector)
    this.refs[row] = 1
    this.hashes[row] = hash
    this.texts[row] = text
    this.live += 1
    if (same === undefined) this.byHash.set(hash, row)
    else if (typeof same === 'number') this.byHash.set(hash, [same, row])
    else same.push(row)
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
    const hash = this.hashes[row]!
    const same = this.byHash.get(hash)!
    if (typeof same === 'number') this.byHash.delete(hash)
    else {
      same.splice(same.indexOf(row), 1)
      if (same.length === 1) this.byHash.set(hash, same[0]!)
    }
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
  protected abstract equals(row: number, vector: Float32Array): boolean
}

/** FNV-1a over the floats' bits. */
function hashOf(vector: Float32Array): number {
  const bits = new Uint32Array(vector.buffer, vector.byteOffset, vector.length)
  let h = 0x811c9dc5
  for (let i = 0; i < bits.length; i++) h = Math.imul(h ^ bits[i]!, 0x01000193)
  return h >>> 0
}

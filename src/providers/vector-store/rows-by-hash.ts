/**
 * A pool's rows found by the hash of their vector: an open-addressed table (linear probing, a removal shifts back the
 * rows probed past it) of row numbers and their hashes in two typed arrays. Several rows may share a hash; a lookup
 * visits them all. It replaced a `Map` from hash to row(s), which at 1M chunks cost a start-up tens of seconds: millions
 * of entries, most hashes past V8's small integers, an array made per lookup (bench/results/memory.log.md).
 */
const EMPTY = -1
const INITIAL_SLOTS = 64

export class RowsByHash {
  private rows = new Int32Array(INITIAL_SLOTS).fill(EMPTY)
  private hashes = new Uint32Array(INITIAL_SLOTS)
  private mask = INITIAL_SLOTS - 1
  private shift = 32 - Math.log2(INITIAL_SLOTS)
  size = 0

  /** The first slot to look at for `hash`; walk on with {@link next} while {@link rowAt} is not -1. */
  home(hash: number): number {
    return Math.imul(hash, 0x9e3779b1) >>> this.shift
  }

  next(slot: number): number {
    return (slot + 1) & this.mask
  }

  /** The row in `slot` (-1: none, the end of a walk). */
  rowAt(slot: number): number {
    return this.rows[slot]!
  }

  hashAt(slot: number): number {
    return this.hashes[slot]!
  }

  add(row: number, hash: number): void {
    // at most half full: walks stay short
    if ((this.size + 1) * 2 > this.rows.length) this.resize(this.rows.length * 2)
    this.place(row, hash)
    this.size += 1
  }

  /** Takes `row` (held under `hash`) out; throws when it is not there. */
  remove(row: number, hash: number): void {
    let slot = this.home(hash)
    while (this.rows[slot] !== row) {
      if (this.rows[slot] === EMPTY) throw new RangeError(`row ${row} is not in the table under hash ${hash}`)
      slot = this.next(slot)
    }
    // each row after the hole up to the next empty slot moves into the hole unless its walk starts after the hole
    let hole = slot
    for (let at = this.next(hole); this.rows[at] !== EMPTY; at = this.next(at)) {
      const home = this.home(this.hashes[at]!)
      const stays = hole <= at ? home > hole && home <= at : home > hole || home <= at
      if (stays) continue
      this.rows[hole] = this.rows[at]!
      this.hashes[hole] = this.hashes[at]!
      hole = at
    }
    this.rows[hole] = EMPTY
    this.size -= 1
  }

  clear(): void {
    this.rows = new Int32Array(INITIAL_SLOTS).fill(EMPTY)
    this.hashes = new Uint32Array(INITIAL_SLOTS)
    this.mask = INITIAL_SLOTS - 1
    this.shift = 32 - Math.log2(INITIAL_SLOTS)
    this.size = 0
  }

  private place(row: number, hash: number): void {
    let slot = this.home(hash)
    while (this.rows[slot] !== EMPTY) slot = this.next(slot)
    this.rows[slot] = row
    this.hashes[slot] = hash
  }

  private resize(slots: number): void {
    const rows = this.rows
    const hashes = this.hashes
    this.rows = new Int32Array(slots).fill(EMPTY)
    this.hashes = new Uint32Array(slots)
    this.mask = slots - 1
    this.shift = 32 - Math.log2(slots)
    for (let slot = 0; slot < rows.length; slot++) if (rows[slot] !== EMPTY) this.place(rows[slot]!, hashes[slot]!)
  }
}

/**
 * Where a partition's derived items keep their parts (issue 44): `stride` 32-bit cells a part in one `Int32Array` per
 * kind, an item's parts one run of it, the run's length a size class at or above the item's part count (1, 2, 3, 4,
 * then steps of 1.5x: 6, 8, 12, 16, …; so an item keeps only its start and its count). A part in a JS array cost 8 bytes a field and its item an array of its own; here
 * a relation's part is 12 bytes. A document id and a type are numbers in the partition's `StringNumbers`.
 */

/** A run of `capacityOf(n)` parts holds an item's `n` parts (integers throughout, so no field holds a boxed number). */
export function capacityOf(parts: number): number {
  if (parts <= 4) return parts
  const power = 1 << (31 - Math.clz32(parts - 1))
  const between = power + (power >> 1)
  return parts <= between ? between : power << 1
}

/** An item whose run `PartColumns.repack` moves. */
export interface PackedRun {
  readonly capacity: number
  /** Copies the run into `cells` at part `at` and starts there from now on; the part after it. */
  moveRun(cells: Int32Array, at: number): number
}

export class PartColumns {
  cells: Int32Array
  /** Parts handed out at least once: the first part past them is free. */
  private top = 0
  /** Freed runs' starts by their capacity, and the parts they hold together. */
  private readonly free = new Map<number, number[]>()
  private freeParts = 0

  constructor(readonly stride: number, parts = 4) {
    this.cells = new Int32Array(stride * parts)
  }

  /** The start (a part number) of a free run of `capacity` parts. */
  allocate(capacity: number): number {
    const reused = this.free.get(capacity)?.pop()
    if (reused !== undefined) {
      this.freeParts -= capacity
      return reused
    }
    const start = this.top
    this.top += capacity
    if (this.top * this.stride > this.cells.length) {
      const parts = this.cells.length / this.stride
      const grown = new Int32Array(Math.max(this.top, parts + (parts >> 1)) * this.stride)
      grown.set(this.cells)
      this.cells = grown
    }
    return start
  }

  /** Parts' room held but not in an item's run: freed runs, and the room past the last run. */
  get slack(): number {
    return this.freeParts + this.cells.length / this.stride - this.top
  }

  release(start: number, capacity: number): void {
    this.freeParts += capacity
    const free = this.free.get(capacity)
    if (free) free.push(start)
    else this.free.set(capacity, [start])
  }

  /**
   * Packs every item's run into new cells of the exact length, in the order given, and forgets the freed runs: what a
   * load does once it has replayed the log (runs freed as items grew, and the columns' growth, were about half the cells).
   */
  repack(items: Iterable<PackedRun>): void {
    const runs = [...items]
    let parts = 0
    for (const item of runs) parts += item.capacity
    const cells = new Int32Array(Math.max(parts, 1) * this.stride)
    let at = 0
    for (const item of runs) at = item.moveRun(cells, at)
    this.cells = cells
    this.top = parts
    this.free.clear()
    this.freeParts = 0
  }

  /** Copies `parts` parts from part `from` to part `to`. */
  move(from: number, to: number, parts: number): void {
    this.cells.copyWithin(to * this.stride, from * this.stride, (from + parts) * this.stride)
  }
}

/**
 * Strings the parts of a partition repeat (document ids, types) as numbers: each string once, numbered when first
 * used, its number freed when no part holds it any more (so a dropped document's id is not kept).
 */
export class StringNumbers {
  private readonly numbers = new Map<string, number>()
  private readonly strings: Array<string | undefined> = []
  private readonly holders: number[] = []
  private readonly freed: number[] = []

  /** The number of `value`, held once more. */
  hold(value: string): number {
    let n = this.numbers.get(value)
    if (n === undefined) {
      n = this.freed.pop() ?? this.strings.length
      this.numbers.set(value, n)
      this.strings[n] = value
      this.holders[n] = 0
    }
    this.holders[n]!++
    return n
  }

  /** One more hold of the string numbered `n`, held already. */
  holdAgain(n: number): number {
    if (!(this.holders[n]! > 0)) throw new RangeError(`no string numbered ${n} is held`)
    this.holders[n]!++
    return n
  }

  /** Lets go of one hold of `n`. */
  release(n: number): void {
    if (--this.holders[n]! > 0) return
    this.numbers.delete(this.strings[n]!)
    this.strings[n] = undefined
    this.freed.push(n)
  }

  numberOf(value: string): number | undefined {
    return this.numbers.get(value)
  }

  string(n: number): string {
    const value = this.strings[n]
    if (value === undefined) throw new RangeError(`no string numbered ${n}`)
    return value
  }

}

/** A partition's part columns and string numbers: what every derived item of it writes its parts into. */
export class PartStore {
  readonly entityParts = new PartColumns(4)
  readonly relationParts = new PartColumns(3)
  readonly docs = new StringNumbers()
  readonly types = new StringNumbers()
  /** An item's `ODD` parts' fields (`derived-items.ts`), for the few that have them. */
  readonly extras = new WeakMap<object, unknown[]>()
}

/**
 * A partition's record numbers by document (issue 44, item 1), in the order they were filed. A document of one record
 * holds its number alone, of a few an array, of many a set (a search of a set stays constant time when a large document's
 * records are replaced one by one). A set per document cost about 100 bytes a document more than an array of its few
 * records. Numbers, not ids: a partition holds no id string per record (record-ids.ts); a record that takes another's
 * number (`Collection.deleteAt` moves the last record into the hole) is renumbered here too.
 */

/** Up to this many records a document's are an array (a search of it is a pass). */
const MOST_IN_ARRAY = 32

type Numbers = number | number[] | Set<number>

export class RecordsByDoc {
  private readonly byDoc = new Map<string, Numbers>()

  /** Files record `n` under `docId` (not filed there yet). */
  add(docId: string, n: number): void {
    const held = this.byDoc.get(docId)
    if (held === undefined) this.byDoc.set(docId, n)
    else if (typeof held === 'number') this.byDoc.set(docId, [held, n])
    else if (Array.isArray(held)) {
      if (held.length < MOST_IN_ARRAY) held.push(n)
      else this.byDoc.set(docId, new Set(held).add(n))
    } else held.add(n)
  }

  /** Takes record `n` from under `docId`; the document goes with its last record. */
  remove(docId: string, n: number): void {
    const held = this.byDoc.get(docId)
    if (held === undefined) return
    if (typeof held === 'number') {
      if (held === n) this.byDoc.delete(docId)
    } else if (Array.isArray(held)) {
      const at = held.indexOf(n)
      if (at < 0) return
      held.splice(at, 1)
      if (held.length === 1) this.byDoc.set(docId, held[0]!)
    } else if (held.delete(n) && held.size === 0) this.byDoc.delete(docId)
  }

  /** Record `from` of `docId` is record `to` now (filed in the same place). */
  renumber(docId: string, from: number, to: number): void {
    const held = this.byDoc.get(docId)
    if (held === undefined) return
    if (typeof held === 'number') {
      if (held === from) this.byDoc.set(docId, to)
    } else if (Array.isArray(held)) {
      const at = held.indexOf(from)
      if (at >= 0) held[at] = to
    } else if (held.delete(from)) held.add(to)
  }

  /** The records filed under `docId`, in the order they were filed (a set's renumbered ones last; none for an unknown document). */
  numbersOf(docId: string): readonly number[] | ReadonlySet<number> {
    const held = this.byDoc.get(docId)
    return held === undefined ? [] : typeof held === 'number' ? [held] : held
  }

  /** One record filed under `docId`, or undefined. */
  anyOf(docId: string): number | undefined {
    const held = this.byDoc.get(docId)
    return held === undefined || typeof held === 'number' ? held : Array.isArray(held) ? held[0] : held.values().next().value
  }

  clear(): void {
    this.byDoc.clear()
  }
}

/**
 * The documents of each derived item a compact snapshot's load restores, in the order its rows come, kept in one
 * column of table indices: each document's list of the items it holds a part of (`KgPartition`'s contributions) is
 * built once, at its exact length, after the last row. Lists grown a push a part, as rows came, were a third of the
 * knowledge graph's load at 1M chunks (issue 44).
 */
import type { LoadSteps } from '../embedded/load-steps.js'
import type { IdList } from './id-lists.js'

const ROWS_A_STEP = 16_384

export class RowDocuments<T> {
  private readonly items: T[] = []
  /** Each row's last part's end in `docs`. */
  private ends = new Int32Array(1024)
  private docs = new Int32Array(1024)
  private parts = 0

  /** Notes a document (its table index) of the row being read. */
  add(doc: number): void {
    if (this.parts === this.docs.length) this.docs = grown(this.docs)
    this.docs[this.parts++] = doc
  }

  /** Ends the row being read: the documents noted since the last row's end are `item`'s. */
  end(item: T): void {
    if (this.items.length === this.ends.length) this.ends = grown(this.ends)
    this.ends[this.items.length] = this.parts
    this.items.push(item)
  }

  /**
   * Per table document (`docCount` of them), the items it holds a part of in the order of their rows, each noted once
   * for each of its parts of that document: an array at its exact length, a set from `setFrom` items (as `addNewId`
   * keeps them); none for a document without parts. A step every {@link ROWS_A_STEP} rows (`load-steps.ts`): at 1M
   * chunks this is 4 s.
   */
  *lists(docCount: number, setFrom: number): LoadSteps<Array<IdList<T> | undefined>> {
    const counts = new Int32Array(docCount)
    for (let p = 0; p < this.parts; p++) counts[this.docs[p]!]!++
    const arrays: Array<T[] | undefined> = new Array(docCount)
    for (let d = 0; d < docCount; d++) if (counts[d]! > 0) arrays[d] = new Array<T>(counts[d]!)
    const filled = counts.fill(0)
    for (let row = 0, p = 0; row < this.items.length; row++) {
      const item = this.items[row]!
      for (const end = this.ends[row]!; p < end; p++) {
        const doc = this.docs[p]!
        arrays[doc]![filled[doc]!++] = item
      }
      if (row % ROWS_A_STEP === ROWS_A_STEP - 1) yield
    }
    return arrays.map((items) => (items !== undefined && items.length >= setFrom ? new Set(items) : items))
  }
}

function grown(column: Int32Array): Int32Array<ArrayBuffer> {
  const next = new Int32Array(column.length * 2)
  next.set(column)
  return next
}

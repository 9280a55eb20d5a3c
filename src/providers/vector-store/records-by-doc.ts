/**
 * A partition's record ids by document (issue 44, item 1), in the order they were filed. A document of one record holds
 * its id alone, of a few an array, of many a set (a search of a set stays constant time when a large document's records
 * are replaced one by one). A set per document cost about 100 bytes a document more than an array of its few ids.
 */

/** Up to this many ids a document's are an array (a search of it is a pass). */
const MOST_IN_ARRAY = 32

type Ids = string | string[] | Set<string>

export class RecordsByDoc {
  private readonly byDoc = new Map<string, Ids>()

  /** Files `id` under `docId` (not filed there yet). */
  add(docId: string, id: string): void {
    const ids = this.byDoc.get(docId)
    if (ids === undefined) this.byDoc.set(docId, id)
    else if (typeof ids === 'string') this.byDoc.set(docId, [ids, id])
    else if (Array.isArray(ids)) {
      if (ids.length < MOST_IN_ARRAY) ids.push(id)
      else this.byDoc.set(docId, new Set(ids).add(id))
    } else ids.add(id)
  }

  /** Takes `id` from under `docId`; the document goes with its last id. */
  remove(docId: string, id: string): void {
    const ids = this.byDoc.get(docId)
    if (ids === undefined) return
    if (typeof ids === 'string') {
      if (ids === id) this.byDoc.delete(docId)
    } else if (Array.isArray(ids)) {
      const at = ids.indexOf(id)
      if (at < 0) return
      ids.splice(at, 1)
      if (ids.length === 1) this.byDoc.set(docId, ids[0]!)
    } else if (ids.delete(id) && ids.size === 0) this.byDoc.delete(docId)
  }

  /** The ids filed under `docId`, in the order they were filed (none for an unknown document). */
  idsOf(docId: string): readonly string[] | ReadonlySet<string> {
    const ids = this.byDoc.get(docId)
    return ids === undefined ? [] : typeof ids === 'string' ? [ids] : ids
  }

  /** One id filed under `docId`, or undefined. */
  anyOf(docId: string): string | undefined {
    const ids = this.byDoc.get(docId)
    return ids === undefined || typeof ids === 'string' ? ids : Array.isArray(ids) ? ids[0] : ids.values().next().value
  }

  clear(): void {
    this.byDoc.clear()
  }
}

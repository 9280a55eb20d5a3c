/**
 * Sets of items held by the embedded graph per entity (its relations) and per document (the items it contributes to),
 * each item as its held object (an id a relation does not keep: `DerivedRelation.id`):
 * most are small, and a `Set` costs about three times an array of the same ids (issue 44), so a set is an array until
 * it holds `setFrom` ids (a scan of it costs less than the memory saved), then a `Set`. Callers iterate either; order
 * is not kept.
 */

export type IdList<T> = T[] | Set<T>

/** Adds `id` to the list of `key` (made when missing). */
export function addId<T>(lists: Map<string, IdList<T>>, key: string, id: T, setFrom: number): void {
  const list = lists.get(key)
  if (Array.isArray(list) && list.includes(id)) return
  addNewId(lists, key, id, setFrom)
}

/**
 * `addId` for an id the caller knows the list does not hold, without the scan that checks it: a document's list holds
 * hundreds of ids, and a scan per id added was a quarter of a derived graph's load (issue 44).
 */
export function addNewId<T>(lists: Map<string, IdList<T>>, key: string, id: T, setFrom: number): void {
  const list = lists.get(key)
  if (list === undefined) lists.set(key, [id])
  else if (Array.isArray(list)) {
    if (list.length + 1 >= setFrom) lists.set(key, new Set([...list, id]))
    // made anew at its exact length while short: an array grown by `push` keeps room for about 16 more ids
    else if (list.length < 16) lists.set(key, list.concat(id))
    else list.push(id)
  } else list.add(id)
}

/** Removes `id` from the list of `key`, and the list when it is left empty. */
export function deleteId<T>(lists: Map<string, IdList<T>>, key: string, id: T, setFrom: number): void {
  const list = lists.get(key)
  if (list === undefined) return
  if (Array.isArray(list)) {
    const at = list.indexOf(id)
    if (at < 0) return
    list[at] = list[list.length - 1]!
    if (list.length <= 16) lists.set(key, list.slice(0, -1))
    else list.pop()
  } else {
    list.delete(id)
    if (list.size < setFrom / 2) lists.set(key, [...list])
  }
  if (sizeOf(lists.get(key)) === 0) lists.delete(key)
}

export const sizeOf = <T>(list: IdList<T> | undefined): number => (list === undefined ? 0 : Array.isArray(list) ? list.length : list.size)

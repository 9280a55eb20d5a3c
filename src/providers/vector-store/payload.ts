/** What a vector record carries besides its vector: its document, its text, and whatever the writer adds. */
export interface VectorPayload {
  doc_id: string
  text: string
  [key: string]: unknown
}

/**
 * A copy of a stored payload (JSON values only) whose objects and arrays are new and whose strings are the same ones:
 * a string cannot change, so a reader that keeps a chunk's text (the document catalog) holds no second copy of it.
 */
export function copyPayload<T>(value: T): T {
  if (Array.isArray(value)) return value.map(copyPayload) as T
  if (value === null || typeof value !== 'object') return value
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(value)) {
    if (k === '__proto__') Object.defineProperty(out, k, { value: copyPayload(v), enumerable: true, writable: true, configurable: true })
    else out[k] = copyPayload(v)
  }
  return out as T
}

/**
 * `parsed` (the JSON round trip of `original`) with every string that `original` holds at the same place replaced by
 * `original`'s string, equal and shared: the store and its writer then hold one copy of a chunk's text, not two.
 */
export function adoptStrings(parsed: unknown, original: unknown): void {
  if (parsed === null || typeof parsed !== 'object' || original === null || typeof original !== 'object') return
  if (Array.isArray(parsed) !== Array.isArray(original)) return
  const from = original as Record<string, unknown>
  const into = parsed as Record<string, unknown>
  for (const k of Object.keys(into)) {
    if (!Object.hasOwn(from, k)) continue
    const v = into[k]
    if (typeof v === 'string') {
      // (an own `__proto__` key is left as parsed: assigning it would not replace it)
      if (from[k] === v && k !== '__proto__') into[k] = from[k]
    } else adoptStrings(v, from[k])
  }
}

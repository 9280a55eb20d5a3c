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
function adoptStrings(parsed: unknown, original: unknown): void {
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

/**
 * What a write keeps of a caller's payload: a copy as a JSON round trip gives it (which checks that it can be written,
 * and which the caller can no longer change), holding the caller's own strings. Plain objects, dense arrays, strings,
 * finite numbers, booleans and null are copied directly (a round trip and `adoptStrings` were a sixth of a 1M ingest's
 * CPU); anything else (undefined, NaN, a Date, a `toJSON`, an own `__proto__` key, a class instance, deep or circular
 * nesting, a hole in an array) goes the round trip's way, errors and all.
 */
export function detachPayload(payload: VectorPayload): VectorPayload {
  const copy = plainCopy(payload, 0)
  if (copy !== NOT_PLAIN) return copy as VectorPayload
  const parsed = JSON.parse(JSON.stringify(payload)) as VectorPayload
  adoptStrings(parsed, payload)
  return parsed
}

const NOT_PLAIN = Symbol('not plain JSON')
/** Nesting past it goes the round trip's way (which refuses a circular payload). */
const PLAIN_DEPTH = 32

function plainCopy(value: unknown, depth: number): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value
    case 'number':
      // -0 is written as 0
      return Number.isFinite(value) ? value + 0 : NOT_PLAIN
    case 'object':
      break
    default:
      return NOT_PLAIN
  }
  if (value === null) return null
  if (depth >= PLAIN_DEPTH) return NOT_PLAIN
  if (Array.isArray(value)) {
    if (Object.getPrototypeOf(value) !== Array.prototype) return NOT_PLAIN
    const out: unknown[] = []
    for (let i = 0; i < value.length; i++) {
      const item = plainCopy(value[i], depth + 1)
      if (item === NOT_PLAIN) return NOT_PLAIN
      out.push(item)
    }
    return out
  }
  const proto: unknown = Object.getPrototypeOf(value)
  if (proto !== Object.prototype && proto !== null) return NOT_PLAIN
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(value)) {
    if (key === '__proto__' || key === 'toJSON') return NOT_PLAIN
    const item = plainCopy((value as Record<string, unknown>)[key], depth + 1)
    if (item === NOT_PLAIN) return NOT_PLAIN
    out[key] = item
  }
  return out
}

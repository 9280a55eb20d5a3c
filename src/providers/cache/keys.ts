import { createHash } from 'node:crypto'

/**
 * JSON with object keys sorted at every depth, so two requests that differ only in key order
 * serialise identically. Properties whose value is `undefined` are dropped (as `JSON.stringify`
 * drops them); array order is kept, since it can carry meaning.
 */
export function canonicalJson(value: unknown): string {
  if (value !== null && typeof value === 'object') {
    const json = (value as { toJSON?: unknown }).toJSON
    if (typeof json === 'function') return canonicalJson(json.call(value))
    if (Array.isArray(value)) {
      return `[${value.map((item) => (item === undefined ? 'null' : canonicalJson(item))).join(',')}]`
    }
    const record = value as Record<string, unknown>
    const fields = Object.keys(record)
      .filter((key) => record[key] !== undefined)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`)
    return `{${fields.join(',')}}`
  }
  return JSON.stringify(value) ?? 'null'
}

function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex')
}

/** Key of a query embedding: `emb:<sha256 of ["<model>","<text>"]>`. */
export function embeddingCacheKey(model: string, text: string): string {
  return `emb:${sha256Hex(JSON.stringify([model, text]))}`
}

/**
 * Key of a whole response: `resp:<mode>:<sha256 of canonical [mode, request, indexVersion]>`.
 * The index version is part of the hash, so bumping it on every ingest or delete makes every
 * earlier response unreachable without scanning or deleting keys.
 */
export function responseCacheKey(mode: string, request: object, indexVersion: string | number): string {
  return `resp:${mode}:${sha256Hex(canonicalJson([mode, request, String(indexVersion)]))}`
}

import { hash } from 'node:crypto'

/**
 * JSON with object keys sorted at every depth, so two requests that differ only in key order
 * serialise identically. Properties whose value is `undefined` are dropped (as `JSON.stringify`
 * drops them); array order is kept, since it can carry meaning.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null'
  const json = (value as { toJSON?: unknown }).toJSON
  if (typeof json === 'function') return canonicalJson(json.call(value))
  if (Array.isArray(value)) {
    let out = '['
    for (let i = 0; i < value.length; i++) out += (i === 0 ? '' : ',') + (value[i] === undefined ? 'null' : canonicalJson(value[i]))
    return `${out}]`
  }
  const record = value as Record<string, unknown>
  let out = '{'
  for (const key of Object.keys(record).sort()) {
    if (record[key] === undefined) continue
    out += `${out.length === 1 ? '' : ','}${JSON.stringify(key)}:${canonicalJson(record[key])}`
  }
  return `${out}}`
}

function sha256Hex(text: string): string {
  return hash('sha256', text, 'hex')
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

/**
 * Cursors of the list routes: the key of the last entry a page held (lists are in key order), so that the next page
 * starts after it however entries come and go meanwhile; tagged with the list, so that one list's cursor is refused by another.
 */
import { Errors } from '../errors.js'

export type ListName = 'documents' | 'namespaces'

function encodeCursor(list: ListName, after: string): string {
  return Buffer.from(JSON.stringify([list, after]), 'utf8').toString('base64url')
}

/** The key a cursor names; a 400 naming `cursor` and its value when it is not a cursor of this list. */
export function decodeCursor(list: ListName, cursor: string): string {
  let decoded: unknown
  try {
    decoded = /^[A-Za-z0-9_-]+$/.test(cursor) ? JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) : undefined
  } catch { /* refused below */ }
  if (Array.isArray(decoded) && decoded.length === 2 && decoded[0] === list && typeof decoded[1] === 'string') return decoded[1]
  throw new Errors.badRequest(`querystring/cursor is not a cursor of GET /${list} (got ${JSON.stringify(cursor.length > 80 ? `${cursor.slice(0, 80)}…` : cursor)}): pass the next_cursor of the page before, or none for the first page`)
}

/** A page of `limit` entries read as `limit + 1` (`rows`): the entries, and the cursor of the next page when one follows. */
export function pageOf<T>(list: ListName, rows: readonly T[], limit: number, key: (row: T) => string): { entries: T[]; next_cursor?: string } {
  const entries = rows.slice(0, limit)
  return rows.length > limit ? { entries, next_cursor: encodeCursor(list, key(entries[entries.length - 1]!)) } : { entries }
}

import { Type } from 'typebox'

/** Entries a list answers when the request names no `limit`: more than any list held before lists paged, so those answers are unchanged. */
export const DEFAULT_PAGE_LIMIT = 1000
/** Most entries one page may hold. */
export const MAX_PAGE_LIMIT = 10_000

/** `limit` and `cursor` of a list route's query. */
export const PageQueryProperties = {
  limit: Type.Optional(Type.Integer({
    minimum: 1, maximum: MAX_PAGE_LIMIT, default: DEFAULT_PAGE_LIMIT,
    description: `Most entries in this page (default ${DEFAULT_PAGE_LIMIT.toLocaleString('en')}, at most ${MAX_PAGE_LIMIT.toLocaleString('en')}).`
  })),
  cursor: Type.Optional(Type.String({
    minLength: 1, maxLength: 4096,
    description: 'Where the page starts: `next_cursor` of the page before (the first page without it). Opaque; it stays valid as entries come and go (the next page starts after the last entry of the one before, in order).'
  }))
}

export const NextCursorSchema = Type.Optional(Type.String({ description: 'Present when more entries follow: pass it as `cursor` for the next page.' }))

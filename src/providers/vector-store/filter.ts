/**
 * Filters over stored payloads, applied by a store before it picks its top hits. The same test serves the
 * embedded store's scan, the Qdrant filter it is translated into, and the lexical leg (over the chunk
 * catalog), so every leg keeps exactly the same records.
 */
import type { VectorPayload } from './payload.js'


/** A numeric interval; each bound optional, at least one given. */
interface NumericRange {
  gt?: number
  gte?: number
  lt?: number
  lte?: number
}

/**
 * One condition on `payload.metadata[key]`. A record without the key never matches.
 * - `equals`: the value is it, or, for a list, holds it.
 * - `any_of`: the value is one of them, or, for a list, holds one of them.
 * - `range`: the value is a number within every given bound (a string or list never is).
 */
export type MetadataCondition =
  | { key: string; equals: string | number | boolean }
  | { key: string; any_of: readonly (string | number | boolean)[] }
  | { key: string; range: NumericRange }

/** Keeps the records that meet every part (AND); an absent part keeps everything. */
export interface VectorFilter {
  /** The record's `doc_id` is one of these; an empty list keeps nothing. */
  doc_ids?: readonly string[]
  metadata?: readonly MetadataCondition[]
}

/** Whether `value` (a stored metadata value, maybe absent) meets `condition`. */
function meetsCondition(value: unknown, condition: MetadataCondition): boolean {
  if (value === undefined || value === null) return false
  if ('equals' in condition) return Array.isArray(value) ? value.includes(condition.equals) : value === condition.equals
  if ('any_of' in condition) {
    return Array.isArray(value) ? value.some((v) => condition.any_of.includes(v)) : condition.any_of.includes(value as string)
  }
  if (typeof value !== 'number') return false
  const { gt, gte, lt, lte } = condition.range
  return (gt === undefined || value > gt) && (gte === undefined || value >= gte) &&
    (lt === undefined || value < lt) && (lte === undefined || value <= lte)
}

/** The filter as one test over payloads (the doc-id list becomes a set once). */
export function compileFilter(filter: VectorFilter): (payload: Pick<VectorPayload, 'doc_id'> & { metadata?: unknown }) => boolean {
  const docIds = filter.doc_ids ? new Set(filter.doc_ids) : undefined
  const conditions = filter.metadata ?? []
  return (payload) => {
    if (docIds && !docIds.has(payload.doc_id)) return false
    if (conditions.length === 0) return true
    const metadata = payload.metadata
    if (typeof metadata !== 'object' || metadata === null) return false
    for (const c of conditions) if (!meetsCondition((metadata as Record<string, unknown>)[c.key], c)) return false
    return true
  }
}

/**
 * The `filter` of a retrieve request: checked beyond its schema, normalised (so that equal filters share a
 * cache key and read the same in the response), and cut into what each mode's adapter takes.
 */
import { Errors } from './errors.js'
import { MODE_DEFINITIONS, type Mode } from './modes.js'
import { canonicalJson } from './providers/cache/index.js'
import type { RetrieveFilter } from './schemas/filter.js'

/** The mode each filter key belongs to (each definition's `filter`). */
const FILTER_MODES = Object.fromEntries(
  MODE_DEFINITIONS.flatMap((d) => Object.keys(d.filter).map((key) => [key, d.name]))
) as Record<keyof RetrieveFilter, Mode>

type Condition = NonNullable<RetrieveFilter['metadata']>[string]

const sortedUnique = <T>(values: readonly T[]): T[] =>
  [...new Map(values.map((v) => [canonicalJson(v), v])).entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, v]) => v)

/** What is wrong with the parts of `filter` that belong to another mode than `mode`, or undefined; `at` prefixes the field. */
export function misplacedFilter(mode: Mode, filter: RetrieveFilter | undefined, at = ''): string | undefined {
  const wrong = Object.keys(filter ?? {}).filter((k) => FILTER_MODES[k as keyof RetrieveFilter] !== mode)
  if (wrong.length === 0) return undefined
  return wrong.map((k) => `${at}filter/${k} applies to mode=${FILTER_MODES[k as keyof RetrieveFilter]} only, not mode=${mode}`).join('; ')
}

/**
 * The filter with its lists sorted and deduplicated and its times in UTC ISO form. Throws a 400 naming the
 * field (under `where`) for a time that is not ISO 8601, or a time range that ends before it starts.
 */
export function normaliseFilter(filter: RetrieveFilter, where: string): RetrieveFilter {
  const out: RetrieveFilter = {}
  if (filter.doc_ids) out.doc_ids = sortedUnique(filter.doc_ids)
  if (filter.source_prefix !== undefined) out.source_prefix = filter.source_prefix
  if (filter.metadata) {
    out.metadata = Object.fromEntries(Object.keys(filter.metadata).sort().map((key) => {
      const c = filter.metadata![key]!
      if (typeof c === 'object' && 'any_of' in c && Object.keys(c).length > 1) {
        throw new Errors.badRequest(`${where}/metadata/${key}: any_of takes no bounds beside it; give one condition per key`)
      }
      const normal: Condition = typeof c === 'object' && 'any_of' in c ? { any_of: sortedUnique(c.any_of) } : c
      return [key, normal]
    }))
  }
  if (filter.entity_types) out.entity_types = sortedUnique(filter.entity_types)
  if (filter.time_range) {
    const ms = (key: 'start' | 'end'): number | undefined => {
      const raw = filter.time_range![key]
      if (raw === undefined) return undefined
      const t = Date.parse(raw)
      if (Number.isNaN(t)) throw new Errors.badRequest(`${where}/time_range/${key}: ${JSON.stringify(raw)} is not an ISO 8601 time`)
      return t
    }
    const start = ms('start')
    const end = ms('end')
    if (start !== undefined && end !== undefined && start > end) {
      throw new Errors.badRequest(`${where}/time_range: end ${filter.time_range.end} is before start ${filter.time_range.start}`)
    }
    out.time_range = {
      ...(start !== undefined ? { start: new Date(start).toISOString() } : {}),
      ...(end !== undefined ? { end: new Date(end).toISOString() } : {})
    }
  }
  return out
}

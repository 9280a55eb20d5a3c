import { checkAgainst } from '../../schemas/validation.js'
import { MAX_LINK_DESCRIPTION_CHARS, EpisodesIngestBodySchema, type EntityRef, type EpisodesIngestBody } from './schema.js'

/** A 400 for a bad ingest body: every problem names its field, e.g. `episodes[2].facets[0].entities[1]: unknown entity "N9"`. */
export class EpisodeIngestError extends Error {
  override name = 'EpisodeIngestError'
  constructor(readonly problems: string[]) {
    super(`invalid episodes body: ${problems.join('; ')}`)
  }
}
export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const refId = (ref: unknown): string | undefined =>
  typeof ref === 'string' ? ref : isObject(ref) && typeof ref['id'] === 'string' ? ref['id'] : undefined

/** Every entity id the body refers to that it does not define itself (to look up in the store). */
export function externalEntityRefs(body: unknown): string[] {
  if (!isObject(body)) return []
  const defined = new Set(Array.isArray(body['entities']) ? body['entities'].map(refId).filter((x) => x !== undefined) : [])
  const refs = new Set<string>()
  const visit = (list: unknown): void => {
    if (!Array.isArray(list)) return
    for (const r of list) {
      const id = refId(r)
      if (id !== undefined && !defined.has(id)) refs.add(id)
    }
  }
  for (const ep of Array.isArray(body['episodes']) ? body['episodes'] : []) {
    if (!isObject(ep)) continue
    visit(ep['entities'])
    for (const f of Array.isArray(ep['facets']) ? ep['facets'] : []) if (isObject(f)) visit(f['entities'])
  }
  return [...refs].sort()
}

export const checkEpisodesSchema = checkAgainst(EpisodesIngestBodySchema)

/**
 * The one check of an episodes body, for `POST /ingest/episodes`, the CLI and the demo loader alike: the
 * schema as the route runs it (same coercion, same message), then what a schema cannot say: blank texts,
 * times that do not parse, ids given twice, references to entities neither in the body nor stored, ids
 * stored as another type, link descriptions over {@link MAX_LINK_DESCRIPTION_CHARS}. Returns every
 * problem, each naming the field and the value (empty when valid; a schema misfit is reported alone).
 * `stored` gives the type of already-stored ids the body refers to (from `EpisodicGraphStore.nodeTypes`).
 */
export function validateEpisodesBody(body: unknown, stored: ReadonlyMap<string, string> = new Map()): string[] {
  const misfit = checkEpisodesSchema(body)
  if (misfit !== undefined) return [misfit]
  const valid = body as EpisodesIngestBody
  const problems: string[] = []
  const seen = new Map<string, string>()
  const claim = (id: string, where: string): void => {
    const first = seen.get(id)
    if (first !== undefined) problems.push(`${where}.id: duplicate id "${id}" (also ${first})`)
    else seen.set(id, where)
  }
  const filled = (value: string, at: string): void => {
    if (value.trim() === '') problems.push(`${at}: must not be empty (got ${JSON.stringify(value)})`)
  }
  const storedAs = (id: string, where: string, type: string): void => {
    const t = stored.get(id)
    if (t !== undefined && t !== type) problems.push(`${where}.id: "${id}" is already a ${t}`)
  }

  const defined = new Set<string>()
  ;(valid.entities ?? []).forEach((e, i) => {
    const where = `entities[${i}]`
    filled(e.id, `${where}.id`); filled(e.name, `${where}.name`)
    claim(e.id, where)
    defined.add(e.id)
    storedAs(e.id, where, 'Entity')
  })
  const checkRefs = (list: readonly EntityRef[] | undefined, where: string, episodeId: string): void => {
    list?.forEach((r, k) => {
      const at = `${where}[${k}]`
      const id = typeof r === 'string' ? r : r.id
      const length = typeof r === 'object' && r.description !== undefined ? [...r.description].length : 0
      if (length > MAX_LINK_DESCRIPTION_CHARS) {
        problems.push(`${at}.description: ${length} characters, over the ${MAX_LINK_DESCRIPTION_CHARS} allowed ` +
          `(Episode "${episodeId}", entity "${id}")`)
      }
      if (defined.has(id)) return
      const t = stored.get(id)
      if (t === undefined) problems.push(`${at}: unknown entity "${id}"`)
      else if (t !== 'Entity') problems.push(`${at}: "${id}" is a ${t}, not an entity`)
    })
  }
  const time = (value: string | undefined, at: string): number | undefined => {
    if (value === undefined) return undefined
    const t = Date.parse(value)
    if (Number.isNaN(t)) problems.push(`${at}: must be an ISO 8601 time (got ${JSON.stringify(value)})`)
    return t
  }

  valid.episodes.forEach((ep, i) => {
    const where = `episodes[${i}]`
    filled(ep.id, `${where}.id`); filled(ep.name, `${where}.name`); filled(ep.summary, `${where}.summary`)
    const start = time(ep.mentioned_time_start, `${where}.mentioned_time_start`)
    const end = time(ep.mentioned_time_end, `${where}.mentioned_time_end`)
    time(ep.created_at, `${where}.created_at`)
    if ((ep.mentioned_time_start === undefined) !== (ep.mentioned_time_end === undefined)) {
      problems.push(`${where}: mentioned_time_start and mentioned_time_end go together (got only ` +
        `${ep.mentioned_time_start === undefined ? 'mentioned_time_end' : 'mentioned_time_start'})`)
    } else if (start !== undefined && end !== undefined && start > end) {
      problems.push(`${where}.mentioned_time_end: ${ep.mentioned_time_end} is before mentioned_time_start ${ep.mentioned_time_start}`)
    }
    claim(ep.id, where)
    storedAs(ep.id, where, 'Episode')
    checkRefs(ep.entities, `${where}.entities`, ep.id)
    ;(ep.facets ?? []).forEach((f, j) => {
      const fw = `${where}.facets[${j}]`
      filled(f.id, `${fw}.id`); filled(f.search_text, `${fw}.search_text`)
      claim(f.id, fw)
      checkRefs(f.entities, `${fw}.entities`, ep.id)
      ;(f.points ?? []).forEach((p, k) => {
        const pw = `${fw}.points[${k}]`
        filled(p.id, `${pw}.id`); filled(p.search_text, `${pw}.search_text`)
        claim(p.id, pw)
      })
    })
  })
  return problems
}

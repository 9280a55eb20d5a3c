import type { EntityRef, EpisodesIngestBody } from './schema.js'

/** Advice on the shape of the memory (m-flow's input rules); never an error, the data is the user's. */
export interface IngestWarning {
  /** The offending field, e.g. `episodes[2].facets[0].search_text`. */
  field: string
  message: string
}

/** A facet label shorter than this (code points) names a category, not this Episode's topic. */
const MIN_FACET_LABEL_CHARS = 6
/** A facet label owned by more Episodes than this cannot tell them apart. */
const MAX_EPISODES_PER_FACET_LABEL = 2
/** At most this many warnings are listed; `warnings_total` counts them all. */
export const MAX_LISTED_WARNINGS = 100

const quoteIds = (ids: readonly string[]): string =>
  ids.slice(0, 5).map((id) => `"${id}"`).join(', ') + (ids.length > 5 ? `, … (${ids.length} in all)` : '')

/**
 * The input rules of m-flow's extraction, checked on a valid body: a facet label is a topic label of
 * 15–50 characters naming what this Episode's facet is about (warned below 6 characters, or when more
 * than 2 Episodes own it, counting the stored ones that this body does not replace), and an entity link
 * says what the entity is or did there (difference 7). `storedOwners`: stored Episodes per facet label
 * (`EpisodicGraphStore.facetLabelEpisodes`).
 */
export function episodeWarnings(body: EpisodesIngestBody, storedOwners: ReadonlyMap<string, readonly string[]> = new Map()): IngestWarning[] {
  const warnings: IngestWarning[] = []
  const replaced = new Set(body.episodes.map((e) => e.id))
  const owners = new Map<string, Set<string>>()
  for (const [label, ids] of storedOwners) owners.set(label, new Set(ids.filter((id) => !replaced.has(id))))
  for (const ep of body.episodes) {
    for (const f of ep.facets ?? []) {
      const set = owners.get(f.search_text) ?? new Set<string>()
      set.add(ep.id)
      owners.set(f.search_text, set)
    }
  }
  const links = (list: readonly EntityRef[] | undefined, where: string, owner: string): void => {
    list?.forEach((ref, k) => {
      if (typeof ref === 'object' && ref.description && ref.description.trim() !== '') return
      const id = typeof ref === 'string' ? ref : ref.id
      warnings.push({
        field: `${where}[${k}]`,
        message: `the link from ${owner} to entity "${id}" has no description: give it as {"id": "${id}", "description": "…"}, ` +
          'what the entity is or did there; otherwise every Episode linked to it gets the same edge text and cost'
      })
    })
  }
  body.episodes.forEach((ep, i) => {
    const where = `episodes[${i}]`
    ;(ep.facets ?? []).forEach((f, j) => {
      const fw = `${where}.facets[${j}]`
      const length = [...f.search_text.trim()].length
      if (length < MIN_FACET_LABEL_CHARS) {
        warnings.push({
          field: `${fw}.search_text`,
          message: `facet label "${f.search_text}" is ${length} characters: name what this Episode's facet is about ` +
            'in 15 to 50 characters (a topic label such as "流式返回灰度发布的回滚方案", not a category such as "结果")'
        })
      }
      const sharing = [...(owners.get(f.search_text) ?? [])].sort()
      if (sharing.length > MAX_EPISODES_PER_FACET_LABEL) {
        warnings.push({
          field: `${fw}.search_text`,
          message: `facet label "${f.search_text}" is shared by ${sharing.length} Episodes (${quoteIds(sharing)}): ` +
            'a label that many Episodes share cannot tell them apart; name what this Episode\'s facet is about'
        })
      }
      links(f.entities, `${fw}.entities`, `facet "${f.id}"`)
    })
    links(ep.entities, `${where}.entities`, `Episode "${ep.id}"`)
  })
  return warnings
}

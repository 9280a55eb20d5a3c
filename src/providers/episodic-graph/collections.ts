/** The vector collections episodic ingestion writes (m-flow's, without the legacy `Concept_name`). */
export const EPISODIC_COLLECTIONS = [
  'Episode_summary', 'Facet_search_text', 'Facet_anchor_text', 'FacetPoint_search_text', 'Entity_name',
  'RelationType_relationship_name'
] as const

/**
 * The collections whose records belong to one Episode (their doc id is its id): replacing or deleting an
 * Episode deletes its records there, and a recall's time range filters them by Episode.
 */
export const EPISODE_OWNED_COLLECTIONS: ReadonlySet<string> = new Set<(typeof EPISODIC_COLLECTIONS)[number]>([
  'Episode_summary', 'Facet_search_text', 'Facet_anchor_text', 'FacetPoint_search_text'
])

/**
 * Derived Episodes (docs/derivation.md, "Derived Episodes") live in collections of their own, the episodic ones with
 * this after `COLLECTION_PREFIX`, so that what is read (imported, derived, both) is chosen by the collections searched.
 */
export const DERIVED_COLLECTION_PREFIX = 'derived_'

export { DERIVED_EPISODE_PREFIX } from './port.js'

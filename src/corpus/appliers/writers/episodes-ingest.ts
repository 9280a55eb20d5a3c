import type { EpisodicNode } from '../../../providers/episodic-graph/port.js'
import { DEFAULT_NAMESPACE } from '../../../providers/namespace.js'
import type { EpisodesIngestBody } from '../../episodes/schema.js'
import { checkEpisodesSchema, EpisodeIngestError, externalEntityRefs, isObject, validateEpisodesBody } from '../../episodes/validation.js'
import { buildEpisodeGraphs } from '../../episodes/graph-building.js'
import { episodeWarnings, MAX_LISTED_WARNINGS } from '../../episodes/warnings.js'
import type { EpisodicIngestResult } from '../../episodes/results.js'
import { writeEpisodeGraphs, type EpisodicIngestOptions, type EpisodicIngestPorts } from './episode-graphs.js'

/**
 * Validates and writes a body: the graph (atomic) and the six vector collections. Re-ingesting an
 * Episode id replaces it. Throws {@link EpisodeIngestError} (400) before writing anything when the body
 * is invalid; provider errors otherwise.
 *
 * Order: embed everything first (the slow, failure-prone step, before any write); then each collection
 * drops the Episode's earlier vectors and writes the new ones in one atomic write; then the graph; then
 * vectors of entities and labels that nothing uses any more go.
 */
export async function ingestEpisodes(ports: EpisodicIngestPorts, body: unknown, options: EpisodicIngestOptions): Promise<EpisodicIngestResult> {
  const namespace = options.namespace ?? DEFAULT_NAMESPACE
  // The schema first: it coerces ids as the route does, before they are looked up in the store.
  const misfit = checkEpisodesSchema(body)
  if (misfit !== undefined) throw new EpisodeIngestError([misfit])
  const refs = externalEntityRefs(body)
  const ids = isObject(body) && Array.isArray(body['episodes'])
    ? [...refs, ...body['episodes'].flatMap((e) => (isObject(e) && typeof e['id'] === 'string' ? [e['id']] : []))]
    : refs
  const stored = await ports.graph.nodeTypes(namespace, ids)
  const problems = validateEpisodesBody(body, stored)
  if (problems.length > 0) throw new EpisodeIngestError(problems)
  const valid = body as EpisodesIngestBody

  // Names of stored entities the body links to, for their edge texts.
  const storedEntities = new Map<string, EpisodicNode>()
  const external = refs.filter((id) => stored.get(id) === 'Entity')
  if (external.length > 0) {
    const fragment = await ports.graph.describe(namespace, external)
    for (const id of external) {
      const node = fragment.nodes.get(id)
      if (node) storedEntities.set(id, node)
    }
  }
  const { entities, episodes } = buildEpisodeGraphs(valid, storedEntities)
  const facetLabels = [...new Set(valid.episodes.flatMap((e) => (e.facets ?? []).map((f) => f.search_text)))]
  const warnings = episodeWarnings(valid, await ports.graph.facetLabelEpisodes(namespace, facetLabels))

  const { embedded: _embedded, borrowed: _borrowed, ...written } = await writeEpisodeGraphs(ports, { entities, episodes }, options)
  return { ...written, warnings: warnings.slice(0, MAX_LISTED_WARNINGS), warnings_total: warnings.length }
}

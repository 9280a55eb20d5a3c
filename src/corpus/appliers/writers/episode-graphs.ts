import type { Embedder } from '../../../providers/embedder/port.js'
import { lastVersions, type EpisodeGraph, type EpisodicGraphStore, type EpisodicNode } from '../../../providers/episodic-graph/port.js'
import { DEFAULT_NAMESPACE } from '../../../providers/namespace.js'
import type { VectorRecord, VectorStore } from '../../../providers/vector-store/port.js'
import { EPISODIC_COLLECTIONS, EPISODE_OWNED_COLLECTIONS } from '../../../providers/episodic-graph/collections.js'
import type { Exclusive } from '../../write-lock.js'
import type { EpisodeCounts } from '../../episodes/results.js'
import { removeUnusedVectors } from './episode-vector-deletes.js'

export interface EpisodicIngestPorts {
  graph: EpisodicGraphStore
  vectors: VectorStore
  embedder: Embedder
}

export interface EpisodicIngestOptions {
  /** `COLLECTION_PREFIX`: collections are `${prefix}${name}`. Default ''. */
  collectionPrefix?: string
  /** The namespace written to; default `default`. */
  namespace?: string
  /**
   * Runs the store writes alone among the replicas writing this namespace's Episodes (the write lock the write path
   * passes); the write checks `lease.assertHeld()` before each store write.
   */
  exclusive: Exclusive
}

/** What `writeEpisodeGraphs` wrote, and where its vectors came from. */
export interface EpisodeGraphsWritten extends EpisodeCounts {
  /** Distinct texts embedded now (a text several records hold is embedded once). */
  embedded: number
  /** Records whose vector was given (`vectorFor`), not embedded. */
  borrowed: number
}

/**
 * Writes Episode graphs and their vectors (the six collections, `${collectionPrefix}<name>`): each collection drops the
 * Episodes' earlier vectors and writes the new ones in one atomic write; then the graph; then vectors of entities and
 * labels that nothing uses any more go. Everything is embedded first, before any write; `vectorFor` gives the vector
 * of a record that has one already (by collection and id: it is not embedded).
 */
export async function writeEpisodeGraphs(
  ports: EpisodicIngestPorts,
  change: { entities: readonly EpisodicNode[]; episodes: readonly EpisodeGraph[]; deleteEpisodeIds?: readonly string[] },
  options: EpisodicIngestOptions & { vectorFor?: (collection: string, id: string) => Float32Array | undefined }
): Promise<EpisodeGraphsWritten> {
  const { entities } = change
  // an Episode given twice is its last version alone, in the graph (the port's rule) and so in the vectors
  const episodes = lastVersions(change.episodes)
  const namespace = options.namespace ?? DEFAULT_NAMESPACE
  const prefix = options.collectionPrefix ?? ''
  const records = new Map<string, Array<Omit<VectorRecord, 'vector'> & { given?: Float32Array }>>(EPISODIC_COLLECTIONS.map((c) => [c, []]))
  const add = (collection: string, id: string, text: string | null | undefined, docId: string): void => {
    if (!text || text.trim() === '') return
    const given = options.vectorFor?.(collection, id)
    records.get(collection)!.push({ id, payload: { doc_id: docId, text }, ...(given ? { given } : {}) })
  }
  const labels = new Set<string>()
  for (const { episode, nodes, edges } of episodes) {
    add('Episode_summary', episode.id, episode.summary, episode.id)
    for (const n of nodes) {
      if (n.type === 'Facet') {
        add('Facet_search_text', n.id, n.search_text, episode.id)
        add('Facet_anchor_text', n.id, n.anchor_text, episode.id)
      } else add('FacetPoint_search_text', n.id, n.search_text, episode.id)
    }
    for (const e of edges) labels.add(e.edge_text || e.relationship_name)
  }
  for (const e of entities) add('Entity_name', e.id, e.name, e.id)
  for (const l of [...labels].sort()) add('RelationType_relationship_name', l, l, l)

  const all = [...records.values()].flat()
  const missing = [...new Set(all.filter((r) => r.given === undefined).map((r) => r.payload.text))]
  const embedded = missing.length > 0 ? await ports.embedder.embedPassages(missing) : []
  const byText = new Map(missing.map((t, i) => [t, embedded[i]!] as const))

  const episodeIds = [...new Set([...(change.deleteEpisodeIds ?? []), ...episodes.map((e) => e.episode.id)])]
  // Two writers of one Episode id would mix their vectors (each write deletes the points the other upserted)
  // and leave the graph of one beside the vectors of the other: the whole store part takes turns.
  await options.exclusive(async (lease) => {
    await Promise.all(EPISODIC_COLLECTIONS.map(async (c) => {
      const upsert = records.get(c)!.map(({ given, ...r }) => ({ ...r, vector: given ?? byText.get(r.payload.text)! }))
      const ownedByEpisode = EPISODE_OWNED_COLLECTIONS.has(c)
      if (upsert.length === 0 && !(ownedByEpisode && episodeIds.length > 0)) return
      await ports.vectors.ensureCollection(`${prefix}${c}`, ports.embedder.dimensions)
      lease.assertHeld()
      await ports.vectors.write(`${prefix}${c}`, namespace, { ...(ownedByEpisode ? { deleteDocIds: episodeIds } : {}), upsert })
    }))
    lease.assertHeld()
    const result = await ports.graph.apply(namespace, { entities, episodes, ...(change.deleteEpisodeIds ? { deleteEpisodeIds: change.deleteEpisodeIds } : {}) })
    lease.assertHeld()
    await removeUnusedVectors(ports, prefix, namespace, result.removedEntityIds, result.unusedLabels)
  })
  return {
    episodes: episodes.length,
    facets: episodes.reduce((n, e) => n + e.nodes.filter((x) => x.type === 'Facet').length, 0),
    points: episodes.reduce((n, e) => n + e.nodes.filter((x) => x.type === 'FacetPoint').length, 0),
    entities: entities.length,
    edges: episodes.reduce((n, e) => n + e.edges.length, 0),
    vectors: all.length,
    embedded: missing.length,
    borrowed: all.length - all.filter((r) => r.given === undefined).length
  }
}

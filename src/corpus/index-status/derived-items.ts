/** What each document contributes to the derived indexes now, counted the same way when written and when asked. */
import { derivedEpisodeIds, type EpisodeDerivationOptions } from '../../derive/episodes.js'
import type { EpisodicGraphStore } from '../../providers/episodic-graph/port.js'
import type { KnowledgeGraphStore } from '../../providers/knowledge-graph/port.js'

/** Per document: the derived entities and relations it has a part in. */
export async function derivedGraphItems(graph: KnowledgeGraphStore, namespace: string, docIds: readonly string[]): Promise<Map<string, number>> {
  return docIds.length === 0 ? new Map() : graph.derivedPartCounts(namespace, docIds)
}

/** Per document: its derived Episodes in the episodic graph. */
export async function derivedEpisodeItems(
  episodes: EpisodicGraphStore, namespace: string, docIds: readonly string[], options: Pick<EpisodeDerivationOptions, 'maxEpisodesPerDocument'>
): Promise<Map<string, number>> {
  const candidates = new Map(docIds.flatMap((docId) => derivedEpisodeIds(docId, options).map((id) => [id, docId] as const)))
  const counts = new Map(docIds.map((id) => [id, 0]))
  if (candidates.size === 0) return counts
  for (const [id, type] of await episodes.nodeTypes(namespace, [...candidates.keys()])) {
    if (type !== 'Episode') continue
    const docId = candidates.get(id)!
    counts.set(docId, counts.get(docId)! + 1)
  }
  return counts
}

import { DEFAULT_NAMESPACE } from '../../../providers/namespace.js'
import { EPISODE_OWNED_COLLECTIONS } from '../../../providers/episodic-graph/collections.js'
import type { EpisodicIngestOptions, EpisodicIngestPorts } from './episode-graphs.js'
import { deleteVectorDocs, removeUnusedVectors } from './episode-vector-deletes.js'

/**
 * Deletes Episodes with their facets, points and vectors; entities another Episode uses stay, and
 * entities left with no edge go. Unknown ids are reported in `not_found`, not an error.
 */
export async function deleteEpisodes(
  ports: EpisodicIngestPorts,
  ids: readonly string[],
  options: EpisodicIngestOptions
): Promise<{ deleted: string[]; not_found: string[] }> {
  const prefix = options.collectionPrefix ?? ''
  const namespace = options.namespace ?? DEFAULT_NAMESPACE
  const deleted = await options.exclusive(async (lease) => {
    lease.assertHeld()
    const result = await ports.graph.apply(namespace, { deleteEpisodeIds: ids })
    if (result.deletedEpisodeIds.length > 0) {
      lease.assertHeld()
      await Promise.all([...EPISODE_OWNED_COLLECTIONS].map((c) =>
        deleteVectorDocs(ports, `${prefix}${c}`, namespace, result.deletedEpisodeIds)))
    }
    lease.assertHeld()
    await removeUnusedVectors(ports, prefix, namespace, result.removedEntityIds, result.unusedLabels)
    return result.deletedEpisodeIds
  })
  const gone = new Set(deleted)
  return { deleted, not_found: [...new Set(ids)].filter((id) => !gone.has(id)).sort() }
}

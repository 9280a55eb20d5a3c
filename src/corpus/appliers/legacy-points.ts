/**
 * The legacy-points applier: points a version before namespaces wrote to Qdrant carry no namespace, so no read sees
 * them; their ids are `default`'s already (src/providers/vector-store/qdrant-point-ids.ts), so adopting them is giving
 * them `namespace: default`. Counted again under each lock: a replica that adopted them first leaves nothing to do.
 */
import type { Change } from '../changes.js'
import type { VectorStore } from '../../providers/vector-store/port.js'
import type { Exclusive, Lease } from '../write-lock.js'

type LegacyPointsChange = Extract<Change, { kind: 'legacy-points' }>

export async function applyLegacyPoints(
  vectors: VectorStore, change: LegacyPointsChange, locks: { documents: Exclusive; episodes: Exclusive }
): Promise<{ adopted: number }> {
  const adopt = (collections: readonly string[]) => async (lease: Lease) => {
    let adopted = 0
    for (const collection of collections) {
      lease.assertHeld()
      adopted += await vectors.adoptLegacyRecords(collection)
    }
    return adopted
  }
  const chunks = change.chunks ? await locks.documents(adopt([change.chunks])) : 0
  const episodic = change.episodic?.length ? await locks.episodes(adopt(change.episodic)) : 0
  return { adopted: chunks + episodic }
}

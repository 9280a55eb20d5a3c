/** best_by_id and edge_hit_map (docs/episodic.md, "The pipeline, step by step", step 5). */
import { RELATION_COLLECTION } from './config.js'
import type { CollectionHits } from './types.js'

/** The lowest post-bonus score per node id over every collection except RelationType. Unhit ids are absent (cost +∞). */
export function computeBestById(hits: CollectionHits): Map<string, number> {
  const best = new Map<string, number>()
  for (const [collection, list] of Object.entries(hits)) {
    if (collection === RELATION_COLLECTION) continue
    for (const hit of list) {
      const seen = best.get(hit.id)
      if (seen === undefined || hit.score < seen) best.set(hit.id, hit.score)
    }
  }
  return best
}

/** The lowest score per edge label text over the RelationType hits; these never get a bonus. */
export function buildEdgeHitMap(hits: CollectionHits): Map<string, number> {
  const map = new Map<string, number>()
  for (const hit of hits[RELATION_COLLECTION] ?? []) {
    const seen = map.get(hit.text)
    if (seen === undefined || hit.score < seen) map.set(hit.text, hit.score)
  }
  return map
}

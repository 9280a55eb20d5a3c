/**
 * The graph leg's passages: the chunks the reached entities came from (`adapters/graph-reach.ts`), each scored by the
 * sum of the weights the entities citing it give it (named 1.0, one hop 0.6, the n-th chunk of an entity score/√n,
 * at most a few chunks per entity), so that a passage where a named entity and its neighbour meet outranks one where
 * either stands alone. Each passage keeps the entity paths that brought it, heaviest first.
 */
import type { ReachedEntity } from '../graph-reach.js'

/** One way the graph reached a passage: the entity, how the question reached it, and for a neighbour the relation. */
interface GraphPath {
  entity_id: string
  entity_name: string
  matched_by: ReachedEntity['matched_by']
  hop: 0 | 1
  /** `meaning` at hop 0: the similarity of the question and the name that reached the entity. */
  similarity?: number
  relation?: { type: string; source: string; target: string }
  /** What this entity gave the passage: its score over √n for its n-th evidence chunk. */
  weight: number
}

export interface GraphPassages {
  /** Chunks best first, score = the sum of their paths' weights; at most `window`. */
  hits: Array<{ id: string; score: number }>
  /** Per chunk, its paths, heaviest first, at most `maxPaths`. */
  paths: ReadonlyMap<string, GraphPath[]>
}

/** Paths kept per passage for its explanation. */
const MAX_PATHS = 3

/**
 * Order: summed weight descending, then the heaviest single path, then first reached (entity order, then evidence
 * order), so equal scores always come out the same way.
 */
export function graphPassages(entities: readonly ReachedEntity[], window: number, maxPaths = MAX_PATHS): GraphPassages {
  const byChunk = new Map<string, { score: number; best: number; first: number; paths: GraphPath[] }>()
  let order = 0
  for (const e of entities) {
    for (const { chunk_id, weight } of e.evidence) {
      let p = byChunk.get(chunk_id)
      if (!p) byChunk.set(chunk_id, (p = { score: 0, best: 0, first: order++, paths: [] }))
      p.score += weight
      p.best = Math.max(p.best, weight)
      p.paths.push({
        entity_id: e.id, entity_name: e.name, matched_by: e.matched_by, hop: e.hop, ...(e.similarity !== undefined ? { similarity: e.similarity } : {}), ...(e.via ? { relation: { ...e.via } } : {}), weight
      })
    }
  }
  const ranked = [...byChunk.entries()].sort(([, a], [, b]) => b.score - a.score || b.best - a.best || a.first - b.first).slice(0, window)
  return {
    hits: ranked.map(([id, p]) => ({ id, score: round4(p.score) })),
    paths: new Map(ranked.map(([id, p]) => [id, p.paths.sort((a, b) => b.weight - a.weight).slice(0, maxPaths)]))
  }
}

const round4 = (x: number) => Math.round(x * 1e4) / 1e4

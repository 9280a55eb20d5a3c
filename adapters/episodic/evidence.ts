/**
 * A derived Episode's evidence (docs/derivation.md, "Derived Episodes"): the document chunks it rests on, each with
 * its heading path. The chunk of the winning FacetPoint comes first, then that of the winning Facet, then the
 * Episode's other chunks in document order; the n-th weighs the item's score over √n (as graphrag's evidence), at
 * most `max`. An imported Episode carries none.
 */
import type { EpisodicNode } from '../../src/providers/episodic-graph/port.js'

export interface EpisodeEvidenceChunk {
  chunk_id: string
  heading_path: string[]
  weight: number
}

/** Evidence chunks kept per item when the deployment does not say. */
export const MAX_EPISODE_EVIDENCE = 5

interface StoredEvidence {
  chunk_id: string
  heading_path: string[]
  nodes: string[]
}

export function evidenceOf(
  node: Pick<EpisodicNode, 'evidence'>, path: { best_point_id?: string | null; best_facet_id?: string | null }, score: number, max: number
): EpisodeEvidenceChunk[] {
  const stored = parse(node.evidence)
  const holding = (id: string | null | undefined) => (id ? stored.filter((e) => e.nodes.includes(id)) : [])
  const ordered = [...new Set([...holding(path.best_point_id), ...holding(path.best_facet_id), ...stored])].slice(0, max)
  return ordered.map((e, i) => ({ chunk_id: e.chunk_id, heading_path: e.heading_path, weight: Math.round((score / Math.sqrt(i + 1)) * 10_000) / 10_000 }))
}

function parse(json: string | null | undefined): StoredEvidence[] {
  if (!json) return []
  try {
    const value: unknown = JSON.parse(json)
    return Array.isArray(value) ? value.filter((e): e is StoredEvidence => typeof e === 'object' && e !== null && typeof (e as StoredEvidence).chunk_id === 'string')
      .map((e) => ({ chunk_id: e.chunk_id, heading_path: Array.isArray(e.heading_path) ? e.heading_path : [], nodes: Array.isArray(e.nodes) ? e.nodes : [] })) : []
  } catch {
    return [] // an imported Episode's own `evidence` text is not ours to read
  }
}

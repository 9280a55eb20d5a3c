import type { EpisodeGraph, EpisodicEdge, EpisodicNode } from '../../providers/episodic-graph/port.js'
import type { EntityRef, EpisodesIngestBody } from './schema.js'
import { episodeEntityEdgeText, facetEntityEdgeText, hasFacetEdgeText, hasPointEdgeText } from './edge-texts.js'

const ms = (iso: string | undefined): number | undefined => (iso === undefined ? undefined : Date.parse(iso))

function clean<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && v !== null && v !== '')) as T
}

const linkDescription = (r: { description?: string }): { description?: string } =>
  r.description && r.description.trim() !== '' ? { description: r.description } : {}

/** Turns a valid body into the graph change (nodes in m-flow's property names, edges with texts). */
export function buildEpisodeGraphs(body: EpisodesIngestBody, storedEntities: ReadonlyMap<string, EpisodicNode> = new Map()): {
  entities: EpisodicNode[]
  episodes: EpisodeGraph[]
} {
  const entities = (body.entities ?? []).map((e): EpisodicNode => clean({ id: e.id, type: 'Entity', name: e.name, description: e.description }))
  const entityById = new Map<string, EpisodicNode>([...storedEntities, ...entities.map((e) => [e.id, e] as const)])
  const entityName = (id: string): string => entityById.get(id)?.name ?? id
  const refParts = (ref: EntityRef): { id: string; description?: string; edge_text?: string } =>
    typeof ref === 'string' ? { id: ref } : ref

  const episodes = body.episodes.map((ep): EpisodeGraph => {
    const episode: EpisodicNode = clean({
      id: ep.id, type: 'Episode', name: ep.name, summary: ep.summary, signature: ep.signature,
      mentioned_time_start_ms: ms(ep.mentioned_time_start), mentioned_time_end_ms: ms(ep.mentioned_time_end),
      mentioned_time_confidence: ep.mentioned_time_confidence, mentioned_time_text: ep.mentioned_time_text,
      created_at: ms(ep.created_at)
    })
    const nodes: EpisodicNode[] = []
    const edges: EpisodicEdge[] = []
    for (const f of ep.facets ?? []) {
      nodes.push(clean({
        id: f.id, type: 'Facet', name: f.search_text, search_text: f.search_text, facet_type: f.facet_type,
        description: f.description, anchor_text: f.anchor_text
      }))
      edges.push({ from: ep.id, to: f.id, relationship_name: 'has_facet', edge_text: f.edge_text || hasFacetEdgeText(f) })
      for (const p of f.points ?? []) {
        nodes.push(clean({ id: p.id, type: 'FacetPoint', name: p.search_text, search_text: p.search_text, description: p.description }))
        edges.push({ from: f.id, to: p.id, relationship_name: 'has_point', edge_text: p.edge_text || hasPointEdgeText(f.search_text, p) })
      }
      for (const ref of f.entities ?? []) {
        const r = refParts(ref)
        const description = r.description ?? entityById.get(r.id)?.description
        edges.push({
          from: f.id, to: r.id, relationship_name: 'involves_entity',
          edge_text: r.edge_text || facetEntityEdgeText(entityName(r.id), description, f.search_text), ...linkDescription(r)
        })
      }
    }
    for (const ref of ep.entities ?? []) {
      const r = refParts(ref)
      // Difference 7: the link's own description (m-flow's context_description) wins over the entity's.
      const description = r.description ?? entityById.get(r.id)?.description
      edges.push({
        from: ep.id, to: r.id, relationship_name: 'involves_entity',
        edge_text: r.edge_text || episodeEntityEdgeText(entityName(r.id), description), ...linkDescription(r)
      })
    }
    return { episode, nodes, edges }
  })
  return { entities, episodes }
}

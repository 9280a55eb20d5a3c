/**
 * What a question reaches in a namespace's knowledge graph, with each entity's evidence chunks: graphrag computes it
 * (`adapters/graphrag/reach.ts`, over its cached name matcher) and hybrid's `graph` leg turns it into passages
 * (`adapters/hybrid/graph-passages.ts`). The registry (src/modes.ts) hands graphrag's implementation to hybrid, so
 * neither mode imports the other and both read the same matcher.
 */
import type { StructuresRead } from './types.js'

export interface GraphReachRequest {
  query: string
  namespace: string
  /** The part of the graph read; absent: the imported part where there is one, else the derived one (as graphrag). */
  structures?: StructuresRead
  /** Entities kept, those named first, then the neighbours in expansion order. */
  maxEntities: number
  /** Evidence chunks kept per entity (the per-entity cap). */
  maxEvidence: number
}

/** An entity the question reached, and the chunks it came from, weighted as ApeMind maps graph hits to passages. */
export interface ReachedEntity {
  id: string
  name: string
  /**
   * `name` or `alias`: named in full; `partial`: the question holds a large part of its name (graphrag's `fragments.ts`);
   * `meaning`: a name or alias nearest the question by its vector (`similarity`).
   */
  matched_by: 'name' | 'alias' | 'partial' | 'meaning'
  /** `meaning` (hop 0): the cosine similarity of the question and the name or alias that reached it. */
  similarity?: number
  /** 0 for an entity the question names, 1 for a neighbour one relation away. */
  hop: 0 | 1
  /** 1.0 named, 0.6–1.0 by the share of a partial name or by the similarity of a match by meaning, 0.6 one hop away (graphrag's `expand.ts`). */
  score: number
  /** hop 1: the relation that reached it from a named entity (the one to more named entities, then the heaviest). */
  via?: { type: string; source: string; target: string }
  /** Its evidence chunks, at most `maxEvidence`, the n-th weighing score/√n (graphrag's `evidence.ts`). */
  evidence: ReadonlyArray<{ chunk_id: string; weight: number }>
}

export interface GraphReach {
  entities: ReachedEntity[]
  /** Why nothing could be reached (an empty graph), for the leg's report; absent when the graph was searched. */
  skipped?: string
}

/** Reaches a namespace's graph from a question; `signal` aborts the store's calls. */
export type ReachGraph = (request: GraphReachRequest, signal: AbortSignal) => Promise<GraphReach>

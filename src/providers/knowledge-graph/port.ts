import type { BackendHealth } from '../errors.js'

/** An entity of the knowledge graph (DESIGN section 6), as stored: optional lists are present, maybe empty. */
export interface KgEntity {
  id: string
  name: string
  aliases: string[]
  type?: string
  description?: string
  /** Where the entity comes from (document path or URL). */
  source?: string
  source_chunk_ids: string[]
}

/** A directed, typed relation between two entities, as stored: `id` and `weight` are always present. */
export interface KgRelation {
  /** Given at import, or derived as `<source>-[<type>]-><target>`. */
  id: string
  source: string
  target: string
  type: string
  description?: string
  /** Default 1. */
  weight: number
}

/** What the name matcher needs of an entity. */
export interface KgEntityNames {
  id: string
  name: string
  aliases: string[]
}

/** One change to the graph: entities and relations to create or replace, by id. */
export interface KgWrite {
  entities?: readonly KgEntity[]
  relations?: readonly KgRelation[]
}

/** Matched entities with every relation that touches them and the entities at the other ends. */
export interface KgNeighbourhood {
  /** The requested entities that exist, then the entities one hop away; each once, in id order. */
  entities: KgEntity[]
  /** Every relation with the source or the target among the requested ids, each once, in id order. */
  relations: KgRelation[]
}

/** An entity found by the keyword fallback, with its score (see `searchKeywords`). */
export interface KgKeywordHit {
  entity: KgEntity
  /** 2 per query token found among the name's tokens, plus 1 per other query token found among the description's. */
  score: number
}

/** A write was refused because relations name entities that neither the write nor the graph holds. */
export class UnknownEntitiesError extends Error {
  constructor(
    /** Each missing id once, in the order of first mention. */
    readonly missing: string[],
    /** For each relation of the write that names a missing entity: its index, the field and the id. */
    readonly references: Array<{ index: number; field: 'source' | 'target'; id: string }>
  ) {
    super(`unknown entities: ${missing.map((id) => JSON.stringify(id)).join(', ')}`)
    this.name = 'UnknownEntitiesError'
  }
}

/** Derived id of a relation imported without one. */
export function deriveRelationId(relation: { source: string; target: string; type: string }): string {
  return `${relation.source}-[${relation.type}]->${relation.target}`
}

/**
 * The knowledge graph behind `mode=graphrag`: entities and directed relations, each keyed by id.
 *
 * Ordering: ids compare by UTF-16 code units (JavaScript's default `<`), which is also Neo4j's string order.
 */
export interface KnowledgeGraphStore {
  readonly backend: 'memory' | 'neo4j'

  /**
   * Creates the constraints and indexes the store needs; idempotent. Every other method calls it first when
   * it has not succeeded yet, so a store created while its backend is down starts working when it returns.
   */
  init(): Promise<void>

  /**
   * Applies a write atomically: every entity and relation is created or replaces the stored one of the same
   * id, or, if it throws, nothing of it is stored. Replacing an entity keeps its relations.
   * A relation whose source or target is neither in the write nor stored makes it throw
   * `UnknownEntitiesError` listing the missing ids. Bumps `version()`.
   */
  upsert(write: KgWrite): Promise<void>

  /**
   * Removes the entity and every relation that touches it; resolves `true`, or `false` (and changes nothing)
   * when no entity has that id. Bumps `version()` when it removed something.
   */
  deleteEntity(id: string): Promise<boolean>

  /** The stored entities among `ids`, in id order; unknown ids are left out, not an error. */
  getEntities(ids: readonly string[]): Promise<KgEntity[]>

  /** How many entities and relations are stored. */
  count(): Promise<{ entities: number; relations: number }>

  /**
   * Changes whenever the stored graph changes (any successful write), so a caller can cache what it derived
   * from `names()` and rebuild it only when the version differs. Cheap: no scan of the graph.
   */
  version(): Promise<string>

  /** Every entity's id, name and aliases, in id order; `[]` for an empty graph. */
  names(): Promise<KgEntityNames[]>

  /**
   * The given entities and their one-hop neighbourhood (see `KgNeighbourhood`); unknown ids contribute
   * nothing, and `[]` gives empty lists.
   */
  neighbourhood(ids: readonly string[]): Promise<KgNeighbourhood>

  /**
   * Keyword search over entity names and descriptions. `tokens` are lexical tokens as `analyze()` of
   * `src/text/cjk-analyzer.ts` gives them (duplicates count once); the entity's name and description are
   * tokenised the same way. Score = 2 × (query tokens in the name's tokens) + 1 × (other query tokens in the
   * description's tokens). Entities scoring 0 are left out; at most `limit` hits, score descending, equal
   * scores by entity id ascending. No tokens, or an empty graph, give `[]`.
   * A backend may bound the entities it scores when very many share a token with the query (Neo4j scores
   * Lucene's best 2000 by default); below that bound every backend gives the same hits.
   */
  searchKeywords(tokens: readonly string[], limit: number): Promise<KgKeywordHit[]>

  /** Whether the backend answers, and how fast. Never throws. */
  health(): Promise<BackendHealth>

  /** Releases connections and timers; the store is not used afterwards. */
  close(): Promise<void>
}

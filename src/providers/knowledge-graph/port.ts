import type { BackendHealth } from '../errors.js'

/** An entity of the knowledge graph (docs/api.md, "Graphrag in detail"), as stored: optional lists are present, maybe empty. */
export interface KgEntity {
  id: string
  name: string
  aliases: string[]
  type?: string
  description?: string
  /** Where the entity comes from (document path or URL). */
  source?: string
  source_chunk_ids: string[]
  /**
   * Present only on a derived entity (`replaceDerived`): each contributing document's part, by document id
   * ascending, never empty. An imported entity has none, and no derived write ever changes it.
   */
  derived_from?: KgDerivation[]
}

/** One document's part in a derived entity or relation. */
export interface KgDerivation {
  doc_id: string
  /** The document's chunks that mention the entity or state the relation, in chunk order. */
  chunk_ids: string[]
  /** How many times the document mentions the entity, or how many of its sentences state the relation. */
  count: number
  /** Entity only: the name as the document writes it, the type it gives, its defining sentence. */
  name?: string
  type?: string
  description?: string
  /** `true` when an LLM's extraction (docs/llm-extraction.md) found it in this document, alone or beside the rules. */
  llm?: true
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
  /** Present only on a derived relation: each contributing document's part, as on `KgEntity`. */
  derived_from?: KgDerivation[]
}

/** An entity one document contributes to the derived graph: `key` is its normalised name. */
export interface KgContributedEntity {
  key: string
  name: string
  type?: string
  description?: string
  chunk_ids: string[]
  mentions: number
  /** Found by an LLM's extraction (docs/llm-extraction.md); kept on the document's part. */
  llm?: true
}

/** A relation one document contributes, between entity keys. */
export interface KgContributedRelation {
  source: string
  target: string
  type: string
  chunk_ids: string[]
  count: number
  /** Found by an LLM's extraction (docs/llm-extraction.md); kept on the document's part. */
  llm?: true
}

/** Everything one document contributes to the derived graph (empty lists: nothing any more). */
export interface KgContribution {
  entities: readonly KgContributedEntity[]
  relations: readonly KgContributedRelation[]
}

/** What a `replaceDerived` changed. */
export interface KgDerivedWriteResult {
  /** Derived entities and relations created or changed. */
  written: { entities: number; relations: number }
  /** Derived entities and relations whose last contributing document went. */
  removed: { entities: number; relations: number }
  /** Derived ids left alone because an imported entity or relation holds them, ascending. */
  blocked: string[]
  /** The derived entities created, changed or removed, ascending: those whose names may have changed. */
  entityIds: string[]
}

/** What the name matcher needs of an entity. */
export interface KgEntityNames {
  id: string
  name: string
  aliases: string[]
  /** `true` for a derived entity (one with `derived_from`); absent for an imported one. */
  derived?: true
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

/** How much of a neighbourhood to read (see `neighbourhood`). */
export interface KgNeighbourhoodOptions {
  /**
   * Each requested entity's neighbours (the entities one hop away that were not requested) cut to its first
   * `maxNeighbours`, in this order: joined to more requested entities first, then by the heaviest relation joining it
   * to a requested entity, then id ascending. A neighbour among the first of any requested entity it is joined to is
   * kept; the relations kept are those between requested entities and those joining a kept neighbour to a requested
   * one (all of them). Absent: every neighbour. graphrag's `expandMatches` cuts by the same rule, so a store that
   * cuts first hands it exactly the neighbours it would keep.
   */
  maxNeighbours?: number
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

/** Options of `searchKeywords`. */
export interface KgKeywordOptions {
  /** Only entities whose `type` is one of these (an entity without a type never is). */
  types?: readonly string[]
}

/**
 * The knowledge graph behind `mode=graphrag`: entities and directed relations, each keyed by id within its
 * namespace.
 *
 * Namespaces: every read and write names its namespace (`src/providers/namespace.ts`). The same entity or
 * relation id may exist in two namespaces as two things; a relation only ever joins entities of its own
 * namespace; nothing a call in one namespace does is seen, counted or changed in another. A namespace that
 * holds nothing reads as an empty graph, and a read creates nothing.
 *
 * Ordering: ids compare by UTF-16 code units (JavaScript's default `<`), which is also Neo4j's string order.
 */
export interface KnowledgeGraphStore {
  readonly backend: 'memory' | 'neo4j'

  /**
   * Creates the constraints and indexes the store needs, and brings data of a version without namespaces
   * into `default`; idempotent. Every other method calls it first when it has not succeeded yet, so a store
   * created while its backend is down starts working when it returns.
   */
  init(): Promise<void>

  /**
   * Applies a write atomically: every entity and relation is created or replaces the stored one of the same
   * id, or, if it throws, nothing of it is stored. Replacing an entity keeps its relations.
   * A relation whose source or target is neither in the write nor stored in the namespace makes it throw
   * `UnknownEntitiesError` listing the missing ids. Bumps the namespace's `version()`.
   */
  upsert(namespace: string, write: KgWrite): Promise<void>

  /**
   * Removes the entity and every relation that touches it; resolves `true`, or `false` (and changes nothing)
   * when no entity has that id. Bumps `version()` when it removed something.
   */
  deleteEntity(namespace: string, id: string): Promise<boolean>

  /** The stored entities among `ids`, in id order; unknown ids are left out, not an error. */
  getEntities(namespace: string, ids: readonly string[]): Promise<KgEntity[]>

  /** How many entities and relations are stored. */
  count(namespace: string): Promise<{ entities: number; relations: number }>

  /**
   * Changes whenever the namespace's graph changes (any successful write, or its removal), never returning
   * to an earlier value, so a caller can cache what it derived from `names()` and rebuild it only when the
   * version differs. Cheap: no scan of the graph. An opaque token of this store's own, to compare and never to
   * parse: not a generation store's `<epoch>:<generation>` (src/providers/generations/version.ts).
   */
  version(namespace: string, signal?: AbortSignal): Promise<string>

  /** Every entity's id, name and aliases (and `derived: true` for a derived one), in id order; `[]` for an empty graph. */
  names(namespace: string, signal?: AbortSignal): Promise<KgEntityNames[]>

  /** `names()` of the entities among `ids` alone, in id order; unknown ids are left out, `[]` gives `[]`. */
  namesOf(namespace: string, ids: readonly string[]): Promise<KgEntityNames[]>

  /**
   * The given entities and their one-hop neighbourhood (see `KgNeighbourhood`); unknown ids contribute
   * nothing, and `[]` gives empty lists. The entities and relations are read-only: a store may hand out the
   * objects it holds (frozen), so that a large neighbourhood is not copied on every question; copy to change one.
   * With `options.maxNeighbours`, each requested entity's neighbours are cut in the store (`KgNeighbourhoodOptions`).
   */
  neighbourhood(namespace: string, ids: readonly string[], signal?: AbortSignal, options?: KgNeighbourhoodOptions): Promise<KgNeighbourhood>

  /**
   * Keyword search over entity names and descriptions. `tokens` are lexical tokens as `analyze()` of
   * `src/kernel/cjk-analyzer.ts` gives them (duplicates count once); the entity's name and description are
   * tokenised the same way. Score = 2 × (query tokens in the name's tokens) + 1 × (other query tokens in the
   * description's tokens). Entities scoring 0, and with `options.types` entities of other types, are left
   * out; at most `limit` hits, score descending, equal scores by entity id ascending. No tokens, or an
   * empty graph, give `[]`.
   * A backend may bound the entities it scores when very many share a token with the query (Neo4j scores
   * Lucene's best 2000 by default); below that bound every backend gives the same hits. The hits' entities are
   * read-only, as `neighbourhood`'s are.
   */
  searchKeywords(namespace: string, tokens: readonly string[], limit: number, options?: KgKeywordOptions, signal?: AbortSignal): Promise<KgKeywordHit[]>

  /**
   * Replaces what each document of `contributions` contributes to the namespace's derived graph by the given
   * contribution (empty lists: it contributes nothing any more), atomically. A derived entity's id is `d:` + its key,
   * a derived relation's `deriveRelationId` of its derived ends; each keeps every contributing document's part in
   * `derived_from` (document id ascending) and reads its fields from those parts: name, type and description from
   * the first part that has one, `source_chunk_ids` all parts' chunks in that order, a relation's weight the sum of
   * the parts' counts. Documents not in `contributions` keep their parts. An entity or relation whose last part
   * goes is removed (an entity with its relations). An id held by an imported entity or relation is never written:
   * it and the relations that touch it are left out and listed in `blocked`. Bumps `version()` only when something
   * changed. Callers serialise derived writes of one namespace (the write path's `graph:` lock).
   */
  replaceDerived(namespace: string, contributions: ReadonlyMap<string, KgContribution>): Promise<KgDerivedWriteResult>

  /** The derived entities and relations any of these documents contributes to, each in id order. */
  derivedOf(namespace: string, docIds: readonly string[]): Promise<KgNeighbourhood>

  /**
   * Per document, how many derived entities and relations hold a part of it (0 for a document with none): what
   * `derivedOf` would give in `derived_from` parts of that document, without reading the items' other parts, so a
   * document's count costs what it contributes, not the size of the hubs it names.
   */
  derivedPartCounts(namespace: string, docIds: readonly string[]): Promise<Map<string, number>>

  /** The namespaces holding at least one entity, ascending. */
  namespaces(): Promise<string[]>

  /** Removes every entity and relation of the namespace; a namespace that holds nothing is not an error. Bumps its version. */
  dropNamespace(namespace: string): Promise<void>

  /** Whether the backend answers, and how fast. Never throws. */
  health(): Promise<BackendHealth>

  /** Releases connections and timers; the store is not used afterwards. */
  close(): Promise<void>
}

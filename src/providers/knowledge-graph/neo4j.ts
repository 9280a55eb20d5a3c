import { randomUUID } from 'node:crypto'
import neo4j, { type ManagedTransaction } from 'neo4j-driver'
import { analyze } from '../../kernel/cjk-analyzer.js'
import { backendName, type BackendHealth } from '../errors.js'
import { checkNamespace, DEFAULT_NAMESPACE } from '../namespace.js'
import type { Neo4jConnection } from '../neo4j/connection.js'
import { contributedIds, derivedEntityId, derivedRelationId, planDerived } from './derived.js'
import {
  UnknownEntitiesError,
  type KgContribution,
  type KgDerivation,
  type KgDerivedWriteResult,
  type KgEntity,
  type KgEntityNames,
  type KgKeywordHit,
  type KgKeywordOptions,
  type KgNeighbourhood,
  type KgNeighbourhoodOptions,
  type KgRelation,
  type KgWrite,
  type KnowledgeGraphStore
} from './port.js'

export interface Neo4jKnowledgeGraphOptions {
  connection: Neo4jConnection
  /**
   * Prefix of every label, relationship type and schema name the store uses, so several stores (test runs)
   * share one database apart from each other, namespaces and all. Letters, digits and `_`, starting with a
   * letter, at most 32 characters. Default: none (labels `KgEntity`, `KgMeta`, relationship type `KG_REL`).
   */
  labelPrefix?: string
  /** Rows per UNWIND statement when writing. Default 5000. */
  batchSize?: number
  /**
   * Most entities the keyword fallback scores: Lucene's best (BM25) of those sharing a token with the
   * question. Below this many sharing entities the result is exactly the port's; above it, an entity that
   * shares only common tokens may be missed. Default 2000.
   */
  keywordCandidates?: number
}

const LABEL_PREFIX = /^[A-Za-z][A-Za-z0-9_]{0,31}$/
/** Nodes or relationships updated per statement when data of a version without namespaces is moved into `default`. */
const MIGRATION_BATCH = 10_000
/** Lucene refuses boolean queries of more than 1024 clauses. */
const MAX_QUERY_TOKENS = 1000

const byId = (a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

/** Cypher projection of an entity node onto the port's shape (no internal properties). */
const ENTITY = (v: string) =>
  `${v} {.id, .name, .aliases, .type, .description, .source, .source_chunk_ids, .derived_json}`
/** Cypher projection of a relationship's properties (its ends come apart). */
const RELATION = (v: string) => `${v} {.id, .type, .description, .weight, .derived_json}`
/** Key of the `KgMeta` node whose presence says the namespace's document index (`KgDoc` nodes) is complete. */
const DOC_INDEX_KEY = 'derived-docs'

/**
 * The knowledge graph in Neo4j: `(:KgEntity {ns, id, …})` nodes joined by `[:KG_REL {ns, id, type,
 * description, weight}]`, a `(:KgMeta {ns, key: 'kg'})` node per namespace holding its change counter,
 * composite uniqueness constraints on (ns, id) (and (ns, key)), so the same id may exist in two namespaces,
 * and a full-text index over the entity's lexical tokens, its namespace and its type. Every statement
 * names its namespace (`ns`); labels come from fixed names and a validated prefix; every value travels as
 * a parameter.
 *
 * `init` moves the data of a version without namespaces (nodes and relationships without `ns`) into
 * `default` and replaces its single-property id constraints and its full-text index by these.
 *
 * The derived graph keeps, beside the items, a `(:KgDoc {ns, doc, entities, relations})` node per document that
 * contributes to it (unique on (ns, doc)): the ids of the derived entities and relations the document's last
 * derived write named. It is what a derived write reads to find what its documents contributed before, by index,
 * instead of scanning the namespace's derived items; the items' `derived_json` stays the truth (a `KgDoc` may name
 * ids the document no longer has a part in, or that are gone, and those are left out when read). It is written in
 * the same transaction as the items. A namespace derived by a version without it (no `KgMeta {key: 'derived-docs'}`)
 * gets it on its first derived write: one scan of its derived items, in that write's transaction.
 *
 * The full-text index holds the tokens of `src/kernel/cjk-analyzer.ts` (stored in `kw`) under Lucene's
 * whitespace analyzer, rather than the raw text under Neo4j's `cjk` analyzer, so that both stores find
 * exactly the same entities for the same tokens.
 */
export class Neo4jKnowledgeGraphStore implements KnowledgeGraphStore {
  readonly backend = 'neo4j' as const
  private readonly connection: Neo4jConnection
  private readonly entityLabel: string
  private readonly relType: string
  private readonly metaLabel: string
  private readonly docLabel: string
  private readonly schemaPrefix: string
  private readonly keywordIndex: string
  private readonly legacySchema: string[]
  private readonly batchSize: number
  private readonly keywordCandidates: number
  private initialised: Promise<void> | undefined

  constructor(options: Neo4jKnowledgeGraphOptions) {
    const labelPrefix = options.labelPrefix ?? ''
    if (labelPrefix !== '' && !LABEL_PREFIX.test(labelPrefix)) {
      throw new Error(`knowledge graph labelPrefix must match ${String(LABEL_PREFIX)}, got ${JSON.stringify(labelPrefix)}`)
    }
    const prefix = labelPrefix === '' ? '' : `${labelPrefix}_`
    // Errors and health name this store's role, though the driver may be shared with the episodic graph.
    this.connection = options.connection.named(backendName('knowledge-graph', 'neo4j'))
    this.entityLabel = `${prefix}KgEntity`
    this.relType = `${prefix}KG_REL`
    this.metaLabel = `${prefix}KgMeta`
    this.docLabel = `${prefix}KgDoc`
    this.schemaPrefix = `${prefix.toLowerCase()}kg`
    this.keywordIndex = `${this.schemaPrefix}_entity_ns_keywords`
    // what a version without namespaces created
    this.legacySchema = ['entity_id', 'relation_id', 'meta_key', 'entity_keywords'].map((n) => `${this.schemaPrefix}_${n}`)
    this.batchSize = options.batchSize ?? 5000
    this.keywordCandidates = options.keywordCandidates ?? 2000
  }

  init(): Promise<void> {
    this.initialised ??= this.createSchema().catch((error: unknown) => {
      this.initialised = undefined
      throw error
    })
    return this.initialised
  }

  async upsert(namespace: string, write: KgWrite): Promise<void> {
    const ns = checkNamespace(namespace)
    await this.init()
    const entities = lastById(write.entities ?? [])
    const relations = lastById(write.relations ?? [])
    const incoming = new Set(entities.map((e) => e.id))
    const references: UnknownEntitiesError['references'] = []
    const outside: string[] = []
    ;(write.relations ?? []).forEach((relation, index) => {
      for (const field of ['source', 'target'] as const) {
        if (!incoming.has(relation[field])) {
          references.push({ index, field, id: relation[field] })
          if (!outside.includes(relation[field])) outside.push(relation[field])
        }
      }
    })
    if (entities.length === 0 && relations.length === 0) return

    const { E } = this.labels()
    await this.connection.write(async (tx) => {
      if (outside.length > 0) {
        const result = await tx.run(
          `UNWIND $ids AS id OPTIONAL MATCH (e:${E} {ns: $ns, id: id}) WITH id, e WHERE e IS NULL RETURN collect(id) AS missing`,
          { ids: outside, ns }
        )
        const missing = (result.records[0]?.get('missing') ?? []) as string[]
        if (missing.length > 0) {
          const absent = new Set(missing)
          throw new UnknownEntitiesError(
            outside.filter((id) => absent.has(id)),
            references.filter((r) => absent.has(r.id))
          )
        }
      }
      await this.putRows(tx, ns, entities, relations)
      await this.bumpVersion(tx, ns)
    })
  }

  async replaceDerived(namespace: string, contributions: ReadonlyMap<string, KgContribution>): Promise<KgDerivedWriteResult> {
    const ns = checkNamespace(namespace)
    await this.init()
    const ids = contributedIds(contributions)
    const { E, R, D } = this.labels()
    return this.connection.write(async (tx) => {
      await this.ensureDocIndex(tx, ns)
      const stored = await this.readDerived(tx, ns, [...contributions.keys()], ids, true)
      const { blocked, ...plan } = planDerived(stored, contributions)
      const result: KgDerivedWriteResult = {
        written: { entities: plan.entities.length, relations: plan.relations.length },
        removed: { entities: plan.removeEntities.length, relations: plan.removeRelations.length },
        blocked
      }
      if (plan.entities.length + plan.relations.length + plan.removeEntities.length + plan.removeRelations.length === 0) return result
      for (const rows of chunks(plan.removeRelations, this.batchSize)) {
        await tx.run(`UNWIND $rows AS id MATCH ()-[r:${R} {ns: $ns, id: id}]->() DELETE r`, { rows, ns })
      }
      for (const rows of chunks(plan.removeEntities, this.batchSize)) {
        await tx.run(`UNWIND $rows AS id MATCH (e:${E} {ns: $ns, id: id}) DETACH DELETE e`, { rows, ns })
      }
      // A derived relation's id names its ends and type, so one that is stored stays where it is and only its
      // properties change; one that is not is created, with no lookup of an old one to delete.
      const storedRelations = new Set(stored.relations.map((r) => r.id))
      const changed = plan.relations.filter((r) => storedRelations.has(r.id))
      await this.putRows(tx, ns, plan.entities, plan.relations.filter((r) => !storedRelations.has(r.id)), { fresh: true })
      for (const rows of chunks(changed.map((r) => toRelationRow(ns, r).props), this.batchSize)) {
        const set = await tx.run(
          `UNWIND $rows AS row MATCH ()-[r:${R} {ns: $ns, id: row.id}]->() USING INDEX r:${R}(ns, id) SET r = row RETURN count(r) AS n`, { rows, ns }
        )
        if (Number(set.records[0]?.get('n')) !== rows.length) throw new Error('a derived relation read by this write is gone')
      }
      // each written document's index record: the ids it names now (none: the record goes)
      const records = [...contributions].map(([doc, contribution]) => ({
        doc,
        entities: [...new Set(contribution.entities.map((e) => derivedEntityId(e.key)))],
        relations: [...new Set(contribution.relations.map((r) => derivedRelationId(r)))]
      }))
      const kept = records.filter((r) => r.entities.length + r.relations.length > 0)
      const gone = records.filter((r) => r.entities.length + r.relations.length === 0).map((r) => r.doc)
      for (const rows of chunks(kept, this.batchSize)) {
        await tx.run(
          `UNWIND $rows AS row MERGE (d:${D} {ns: $ns, doc: row.doc}) SET d.entities = row.entities, d.relations = row.relations`, { rows, ns }
        )
      }
      for (const rows of chunks(gone, this.batchSize)) {
        await tx.run(`UNWIND $rows AS doc MATCH (d:${D} {ns: $ns, doc: doc}) DELETE d`, { rows, ns })
      }
      await this.bumpVersion(tx, ns)
      return result
    })
  }

  /**
   * Builds the namespace's `KgDoc` records from its derived items when a version without them wrote it (no
   * `KgMeta {key: 'derived-docs'}`): one scan of the namespace's derived items, once. Run only inside a derived
   * write (serialised per namespace), so no other write changes the parts it reads.
   */
  private async ensureDocIndex(tx: ManagedTransaction, ns: string): Promise<void> {
    const { E, R, M, D } = this.labels()
    const marked = await tx.run(`MATCH (m:${M} {ns: $ns, key: $key}) RETURN count(m) AS n`, { ns, key: DOC_INDEX_KEY })
    if (Number(marked.records[0]?.get('n') ?? 0) > 0) return
    // records left by a namespace dropped outside this store (or half made) are rebuilt from the items
    await tx.run(`MATCH (d:${D} {ns: $ns}) DELETE d`, { ns })
    await tx.run(
      `CALL {
         MATCH (e:${E} {ns: $ns}) WHERE e.derived_docs IS NOT NULL UNWIND e.derived_docs AS doc RETURN doc, e.id AS id, 'e' AS kind
         UNION ALL
         MATCH ()-[r:${R} {ns: $ns}]->() WHERE r.derived_docs IS NOT NULL UNWIND r.derived_docs AS doc RETURN doc, r.id AS id, 'r' AS kind
       }
       WITH doc, collect(CASE kind WHEN 'e' THEN id END) AS entities, collect(CASE kind WHEN 'r' THEN id END) AS relations
       CREATE (:${D} {ns: $ns, doc: doc, entities: entities, relations: relations})`,
      { ns }
    )
    await tx.run(`CREATE (:${M} {ns: $ns, key: $key})`, { ns, key: DOC_INDEX_KEY })
  }

  async derivedOf(namespace: string, docIds: readonly string[]): Promise<KgNeighbourhood> {
    const ns = checkNamespace(namespace)
    await this.init()
    // both statements in one transaction, so entities and relations come from one state (the connection has transactions for writes only)
    const stored = await this.connection.write(async (tx) => {
      // a namespace a version without the document index wrote is read as it did (building the index is a derived write's)
      const { M } = this.labels()
      const marked = await tx.run(`MATCH (m:${M} {ns: $ns, key: $key}) RETURN count(m) AS n`, { ns, key: DOC_INDEX_KEY })
      return this.readDerived(tx, ns, docIds, { entities: [], relations: [] }, Number(marked.records[0]?.get('n') ?? 0) > 0)
    })
    return { entities: stored.entities.sort(byId), relations: stored.relations.sort(byId) }
  }

  /**
   * The derived items the documents contribute to, and the stored items of the given ids, each once. `indexed`:
   * found through the documents' `KgDoc` records (by index); otherwise by a scan of the namespace's derived items.
   */
  private async readDerived(
    tx: ManagedTransaction, ns: string, docs: readonly string[], ids: { entities: readonly string[]; relations: readonly string[] },
    indexed: boolean
  ): Promise<{ entities: KgEntity[]; relations: KgRelation[] }> {
    const { E, R, D } = this.labels()
    const contributes = (v: string) => `${v}.derived_docs IS NOT NULL AND any(d IN ${v}.derived_docs WHERE d IN $docs)`
    // The hints keep these seeks when the plan was made while the labels were empty (a new database): the planner
    // would then pick a scan of the namespace's index, and keep it until it plans again.
    const entityCandidates = indexed
      ? `UNWIND $docs AS doc MATCH (x:${D} {ns: $ns, doc: doc}) USING INDEX x:${D}(ns, doc)
         UNWIND x.entities AS id MATCH (e:${E} {ns: $ns, id: id}) USING INDEX e:${E}(ns, id) WITH DISTINCT e`
      : `MATCH (e:${E} {ns: $ns})`
    const relationCandidates = indexed
      ? `UNWIND $docs AS doc MATCH (x:${D} {ns: $ns, doc: doc}) USING INDEX x:${D}(ns, doc)
         UNWIND x.relations AS id MATCH (a:${E})-[r:${R} {ns: $ns, id: id}]->(b:${E}) USING INDEX r:${R}(ns, id)
         WITH DISTINCT a, r, b`
      : `MATCH (a:${E})-[r:${R} {ns: $ns}]->(b:${E})`
    const entities = await tx.run(
      `${entityCandidates} WHERE ${contributes('e')} RETURN ${ENTITY('e')} AS e
       UNION
       UNWIND $ids AS id MATCH (e:${E} {ns: $ns, id: id}) USING INDEX e:${E}(ns, id) RETURN ${ENTITY('e')} AS e`,
      { ns, docs: [...docs], ids: [...ids.entities] }
    )
    const relations = await tx.run(
      `${relationCandidates} WHERE ${contributes('r')}
       RETURN ${RELATION('r')} AS r, a.id AS source, b.id AS target
       UNION
       UNWIND $ids AS id MATCH (a:${E})-[r:${R} {ns: $ns, id: id}]->(b:${E}) USING INDEX r:${R}(ns, id)
       RETURN ${RELATION('r')} AS r, a.id AS source, b.id AS target`,
      { ns, docs: [...docs], ids: [...ids.relations] }
    )
    return {
      entities: entities.records.map((r) => fromEntityMap(r.get('e'))),
      relations: relations.records.map((r) => fromRelationMap(r.get('r') as Record<string, unknown>, r.get('source'), r.get('target')))
    }
  }

  /**
   * Creates or replaces entities and relations by id; a relation whose end is missing makes it throw. `fresh`: the
   * caller knows no relation of these ids is stored, and none is looked for.
   */
  private async putRows(
    tx: ManagedTransaction, ns: string, entities: readonly KgEntity[], relations: readonly KgRelation[], options: { fresh?: boolean } = {}
  ): Promise<void> {
    const { E, R } = this.labels()
    for (const rows of chunks(entities.map((e) => toEntityRow(ns, e)), this.batchSize)) {
      await tx.run(`UNWIND $rows AS row MERGE (e:${E} {ns: row.ns, id: row.id}) SET e = row`, { rows })
    }
    for (const rows of chunks(relations.map((r) => toRelationRow(ns, r)), this.batchSize)) {
      if (!options.fresh) await tx.run(`UNWIND $rows AS row MATCH ()-[old:${R} {ns: row.props.ns, id: row.props.id}]->() DELETE old`, { rows })
      const created = await tx.run(
        `UNWIND $rows AS row
         MATCH (a:${E} {ns: row.props.ns, id: row.source}), (b:${E} {ns: row.props.ns, id: row.target})
         CREATE (a)-[r:${R}]->(b) SET r = row.props
         RETURN count(r) AS n`,
        { rows }
      )
      // An endpoint deleted by a concurrent request since the check: refuse rather than drop the relation.
      if (Number(created.records[0]?.get('n')) !== rows.length) {
        throw new UnknownEntitiesError(['(deleted concurrently)'], [])
      }
    }
  }

  async deleteEntity(namespace: string, id: string): Promise<boolean> {
    const ns = checkNamespace(namespace)
    await this.init()
    const { E } = this.labels()
    return this.connection.write(async (tx) => {
      const result = await tx.run(`MATCH (e:${E} {ns: $ns, id: $id}) DETACH DELETE e RETURN count(*) AS n`, { ns, id })
      const removed = Number(result.records[0]?.get('n') ?? 0) > 0
      if (removed) await this.bumpVersion(tx, ns)
      return removed
    })
  }

  async getEntities(namespace: string, ids: readonly string[]): Promise<KgEntity[]> {
    const ns = checkNamespace(namespace)
    await this.init()
    if (ids.length === 0) return []
    const { E } = this.labels()
    const result = await this.connection.run(
      `UNWIND $ids AS id MATCH (e:${E} {ns: $ns, id: id}) RETURN DISTINCT ${ENTITY('e')} AS e`,
      { ids: [...new Set(ids)], ns },
      'READ'
    )
    return result.records.map((r) => fromEntityMap(r.get('e'))).sort(byId)
  }

  async count(namespace: string): Promise<{ entities: number; relations: number }> {
    const ns = checkNamespace(namespace)
    await this.init()
    const { E, R } = this.labels()
    const result = await this.connection.run(
      `CALL { MATCH (e:${E} {ns: $ns}) RETURN count(e) AS entities } CALL { MATCH ()-[r:${R} {ns: $ns}]->() RETURN count(r) AS relations }
       RETURN entities, relations`,
      { ns },
      'READ'
    )
    const record = result.records[0]
    return { entities: Number(record?.get('entities') ?? 0), relations: Number(record?.get('relations') ?? 0) }
  }

  async version(namespace: string, signal?: AbortSignal): Promise<string> {
    const ns = checkNamespace(namespace)
    await this.init()
    const { M } = this.labels()
    const result = await this.connection.run(
      `MATCH (m:${M} {ns: $ns, key: 'kg'}) RETURN m.epoch AS epoch, m.version AS version`,
      { ns },
      'READ', signal
    )
    const record = result.records[0]
    // A namespace's counter starts under a fresh epoch each time it is made, so a version never comes back.
    return record ? `${String(record.get('epoch'))}:${String(record.get('version'))}` : 'none'
  }

  async names(namespace: string, signal?: AbortSignal): Promise<KgEntityNames[]> {
    const ns = checkNamespace(namespace)
    await this.init()
    const { E } = this.labels()
    const result = await this.connection.run(
      `MATCH (e:${E} {ns: $ns}) RETURN e.id AS id, e.name AS name, e.aliases AS aliases, e.derived_docs IS NOT NULL AS derived`,
      { ns },
      'READ', signal
    )
    return result.records
      .map((r) => ({
        id: String(r.get('id')), name: String(r.get('name')), aliases: ((r.get('aliases') as unknown[] | null) ?? []).map(String),
        ...(r.get('derived') === true ? { derived: true as const } : {})
      }))
      .sort(byId)
  }

  async neighbourhood(namespace: string, ids: readonly string[], signal?: AbortSignal, options: KgNeighbourhoodOptions = {}): Promise<KgNeighbourhood> {
    const ns = checkNamespace(namespace)
    await this.init()
    if (ids.length === 0) return { entities: [], relations: [] }
    const { E, R } = this.labels()
    const unique = [...new Set(ids)]
    const keep = options.maxNeighbours === undefined ? null : await this.keptNeighbours(ns, unique, options.maxNeighbours, signal)
    const result = await this.connection.run(
      // The other end's namespace is checked on what the expansion reached: in the pattern, it would let the
      // planner start from the namespace's index and expand back from every entity of the namespace.
      `UNWIND $ids AS id
       MATCH (e:${E} {ns: $ns, id: id})
       OPTIONAL MATCH (e)-[r:${R}]-(o:${E})
       WITH e, r, CASE WHEN o.ns = $ns AND ($keep IS NULL OR o.id IN $keep OR o.id IN $ids) THEN o END AS other
       WITH e, CASE WHEN other IS NOT NULL AND r.ns = $ns THEN r END AS rel, other
       RETURN ${ENTITY('e')} AS entity, ${RELATION('rel')} AS rel,
              startNode(rel).id AS source, endNode(rel).id AS target, ${ENTITY('other')} AS other`,
      { ids: unique, ns, keep },
      'READ', signal
    )
    const entities = new Map<string, KgEntity>()
    const relations = new Map<string, KgRelation>()
    // a row per relation repeats its named entity and brings the other end again for each of its relations: each
    // entity is read (its parts parsed) once
    const note = (value: unknown) => {
      const id = String((value as { id: unknown }).id)
      if (!entities.has(id)) entities.set(id, fromEntityMap(value))
    }
    for (const record of result.records) {
      note(record.get('entity'))
      const rel = record.get('rel') as Record<string, unknown> | null
      if (!rel) continue
      note(record.get('other'))
      relations.set(String(rel.id), fromRelationMap(rel, record.get('source'), record.get('target')))
    }
    return { entities: [...entities.values()].sort(byId), relations: [...relations.values()].sort(byId) }
  }

  /**
   * The neighbours `KgNeighbourhoodOptions.maxNeighbours` keeps, ordered and cut in the query (the order of
   * `neighbour-cut.ts`): each neighbour's key is computed once over all the requested entities, then each requested
   * entity's neighbours are sorted by it and cut, so only the kept ids leave the database.
   */
  private async keptNeighbours(ns: string, ids: readonly string[], max: number, signal?: AbortSignal): Promise<string[]> {
    const { E, R } = this.labels()
    const result = await this.connection.run(
      `UNWIND $ids AS id
       MATCH (e:${E} {ns: $ns, id: id})
       WITH collect(DISTINCT e) AS named
       WITH named, [x IN named | x.id] AS namedIds
       UNWIND named AS e
       MATCH (e)-[r:${R}]-(o:${E})
       WITH namedIds, e, r, o WHERE o.ns = $ns AND r.ns = $ns AND NOT o.id IN namedIds
       WITH o.id AS id, count(DISTINCT e) AS linked, max(coalesce(r.weight, 1.0)) AS strongest, collect(DISTINCT e.id) AS ends
       UNWIND ends AS end
       WITH end, id, linked, strongest ORDER BY linked DESC, strongest DESC, id ASC
       WITH end, collect(id)[0..$max] AS firsts
       UNWIND firsts AS id
       RETURN DISTINCT id`,
      { ids, ns, max: neo4j.int(Math.max(0, Math.floor(max))) },
      'READ', signal
    )
    return result.records.map((r) => String(r.get('id')))
  }

  async searchKeywords(namespace: string, tokens: readonly string[], limit: number, options: KgKeywordOptions = {}, signal?: AbortSignal): Promise<KgKeywordHit[]> {
    const ns = checkNamespace(namespace)
    await this.init()
    const query = [...new Set(tokens)].slice(0, MAX_QUERY_TOKENS)
    const types = options.types ? [...new Set(options.types)] : null
    if (query.length === 0 || limit <= 0 || types?.length === 0) return []
    // Lucene syntax stays inert inside a quoted phrase once `\` and `"` are escaped. The namespace (and the
    // types) are required clauses, so that Lucene's best candidates are the namespace's own; Cypher checks them exactly.
    const phrase = (t: string) => `"${t.replace(/[\\"]/g, (c) => `\\${c}`)}"`
    const lucene = [
      `+ns:${phrase(ns)}`,
      ...(types ? [`+type:(${types.map(phrase).join(' OR ')})`] : []),
      `+kw:(${query.map(phrase).join(' OR ')})`
    ].join(' ')
    const result = await this.connection.run(
      `CALL db.index.fulltext.queryNodes($index, $lucene, {limit: $candidates}) YIELD node
       WHERE node.ns = $ns AND ($types IS NULL OR node.type IN $types)
       WITH node, reduce(s = 0, t IN $tokens |
         s + CASE WHEN t IN node.name_tokens THEN 2 WHEN t IN node.description_tokens THEN 1 ELSE 0 END) AS score
       WHERE score > 0
       RETURN ${ENTITY('node')} AS entity, score
       ORDER BY score DESC, node.id ASC
       LIMIT $limit`,
      {
        index: this.keywordIndex,
        lucene,
        ns,
        types,
        tokens: query,
        limit: neo4j.int(Math.floor(limit)),
        candidates: neo4j.int(Math.max(this.keywordCandidates, Math.floor(limit)))
      },
      'READ', signal
    )
    const hits = result.records.map((r) => ({ entity: fromEntityMap(r.get('entity')), score: Number(r.get('score')) }))
    // Re-sort in JavaScript's string order, which the port promises.
    return hits.sort((a, b) => b.score - a.score || byId(a.entity, b.entity))
  }

  async namespaces(): Promise<string[]> {
    await this.init()
    const { E } = this.labels()
    const result = await this.connection.run(`MATCH (e:${E}) WHERE e.ns IS NOT NULL RETURN DISTINCT e.ns AS ns`, {}, 'READ')
    return result.records.map((r) => String(r.get('ns'))).sort()
  }

  async dropNamespace(namespace: string): Promise<void> {
    const ns = checkNamespace(namespace)
    await this.init()
    const { E, M, D } = this.labels()
    // Managed transactions cannot run `IN TRANSACTIONS`; delete in bounded batches instead.
    for (;;) {
      const result = await this.connection.run(`MATCH (e:${E} {ns: $ns}) WITH e LIMIT 5000 DETACH DELETE e RETURN count(*) AS c`, { ns })
      if (Number(result.records[0]?.get('c') ?? 0) === 0) break
    }
    for (;;) {
      const result = await this.connection.run(`MATCH (d:${D} {ns: $ns}) WITH d LIMIT 5000 DELETE d RETURN count(*) AS c`, { ns })
      if (Number(result.records[0]?.get('c') ?? 0) === 0) break
    }
    // The counter goes too: the namespace's next write starts one under a fresh epoch.
    await this.connection.run(`MATCH (m:${M} {ns: $ns}) DELETE m`, { ns })
  }

  health(): Promise<BackendHealth> {
    return this.connection.health()
  }

  close(): Promise<void> {
    return this.connection.close()
  }

  private labels(): { E: string; R: string; M: string; D: string } {
    return { E: this.entityLabel, R: this.relType, M: this.metaLabel, D: this.docLabel }
  }

  private async createSchema(): Promise<void> {
    const { E, R, M, D } = this.labels()
    const p = this.schemaPrefix
    // Data of a version without namespaces belongs to `default`: moved before the old constraints go.
    for (const match of [`MATCH (x:${E})`, `MATCH ()-[x:${R}]->()`, `MATCH (x:${M})`]) {
      for (;;) {
        const moved = await this.connection.run(
          `${match} WHERE x.ns IS NULL WITH x LIMIT ${MIGRATION_BATCH} SET x.ns = $ns RETURN count(*) AS n`, { ns: DEFAULT_NAMESPACE }
        )
        if (Number(moved.records[0]?.get('n') ?? 0) === 0) break
      }
    }
    for (const name of this.legacySchema) {
      await this.connection.run(`DROP CONSTRAINT ${name} IF EXISTS`)
      await this.connection.run(`DROP INDEX ${name} IF EXISTS`)
    }
    const statements = [
      `CREATE CONSTRAINT ${p}_entity_ns_id IF NOT EXISTS FOR (e:${E}) REQUIRE (e.ns, e.id) IS UNIQUE`,
      `CREATE CONSTRAINT ${p}_relation_ns_id IF NOT EXISTS FOR ()-[r:${R}]-() REQUIRE (r.ns, r.id) IS UNIQUE`,
      `CREATE CONSTRAINT ${p}_meta_ns_key IF NOT EXISTS FOR (m:${M}) REQUIRE (m.ns, m.key) IS UNIQUE`,
      // a derived write finds its documents' records by (ns, doc)
      `CREATE CONSTRAINT ${p}_doc_ns_doc IF NOT EXISTS FOR (d:${D}) REQUIRE (d.ns, d.doc) IS UNIQUE`,
      // a whole namespace read (names, counts, drop) seeks these; the composite ones serve (ns, id) lookups
      `CREATE INDEX ${p}_entity_ns IF NOT EXISTS FOR (e:${E}) ON (e.ns)`,
      `CREATE INDEX ${p}_relation_ns IF NOT EXISTS FOR ()-[r:${R}]-() ON (r.ns)`,
      `CREATE FULLTEXT INDEX ${this.keywordIndex} IF NOT EXISTS FOR (e:${E}) ON EACH [e.kw, e.ns, e.type]
       OPTIONS {indexConfig: {\`fulltext.analyzer\`: 'whitespace'}}`
    ]
    for (const statement of statements) {
      try {
        await this.connection.run(statement)
      } catch (error) {
        // Two stores creating the same schema at once: the loser finds it made by the winner.
        if (!/EquivalentSchemaRuleAlreadyExists|already exists/i.test(String((error as Error).message))) throw error
      }
    }
    await this.connection.run(`CALL db.awaitIndexes(60)`)
  }

  private async bumpVersion(tx: ManagedTransaction, ns: string): Promise<void> {
    const { M } = this.labels()
    await tx.run(
      `MERGE (m:${M} {ns: $ns, key: 'kg'}) ON CREATE SET m.version = 0, m.epoch = $epoch SET m.version = m.version + 1`,
      { ns, epoch: randomUUID() }
    )
  }
}

function toEntityRow(ns: string, entity: KgEntity): Record<string, unknown> {
  const nameTokens = [...new Set(analyze(entity.name))]
  const descriptionTokens = [...new Set(analyze(entity.description ?? ''))]
  return {
    ns,
    id: entity.id,
    name: entity.name,
    aliases: [...entity.aliases],
    type: entity.type ?? null,
    description: entity.description ?? null,
    source: entity.source ?? null,
    source_chunk_ids: [...entity.source_chunk_ids],
    name_tokens: nameTokens,
    description_tokens: descriptionTokens,
    kw: [...new Set([...nameTokens, ...descriptionTokens])].join(' '),
    ...derivedProps(entity.derived_from)
  }
}

/** A derived item's parts as properties: the parts as JSON (Neo4j has no list of maps), their documents as a list to match on. */
function derivedProps(parts: readonly KgDerivation[] | undefined): Record<string, unknown> {
  return parts ? { derived_json: JSON.stringify(parts), derived_docs: parts.map((p) => p.doc_id) } : {}
}

function toRelationRow(ns: string, relation: KgRelation): Record<string, unknown> {
  return {
    source: relation.source,
    target: relation.target,
    props: { ns, id: relation.id, type: relation.type, description: relation.description ?? null, weight: relation.weight, ...derivedProps(relation.derived_from) }
  }
}

function fromEntityMap(value: unknown): KgEntity {
  const m = value as Record<string, unknown>
  const entity: KgEntity = {
    id: String(m.id),
    name: String(m.name),
    aliases: ((m.aliases as unknown[] | null) ?? []).map(String),
    source_chunk_ids: ((m.source_chunk_ids as unknown[] | null) ?? []).map(String)
  }
  if (m.type != null) entity.type = String(m.type)
  if (m.description != null) entity.description = String(m.description)
  if (m.source != null) entity.source = String(m.source)
  if (m.derived_json != null) entity.derived_from = JSON.parse(String(m.derived_json)) as KgDerivation[]
  return entity
}

function fromRelationMap(m: Record<string, unknown>, source: unknown, target: unknown): KgRelation {
  const relation: KgRelation = {
    id: String(m.id),
    source: String(source),
    target: String(target),
    type: String(m.type),
    weight: Number(m.weight ?? 1)
  }
  if (m.description != null) relation.description = String(m.description)
  if (m.derived_json != null) relation.derived_from = JSON.parse(String(m.derived_json)) as KgDerivation[]
  return relation
}

/** Keeps the last item of each id, in the order of their last occurrence. */
function lastById<T extends { id: string }>(items: readonly T[]): T[] {
  const map = new Map<string, T>()
  for (const item of items) {
    map.delete(item.id)
    map.set(item.id, item)
  }
  return [...map.values()]
}

function* chunks<T>(items: T[], size: number): Generator<T[]> {
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size)
}

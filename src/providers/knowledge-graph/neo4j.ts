import { randomUUID } from 'node:crypto'
import neo4j, { type ManagedTransaction } from 'neo4j-driver'
import { analyze } from '../../kernel/cjk-analyzer.js'
import { backendName, type BackendHealth } from '../errors.js'
import { checkNamespace, DEFAULT_NAMESPACE } from '../namespace.js'
import type { Neo4jConnection } from '../neo4j/connection.js'
import {
  contributedIds, derivedEntityId, derivedRelationId, entityOf, planDerivedWrite, relationOf, touchedEntities, type DerivedParts
} from './derived.js'
import {
  DERIVED_FIELDS, PART, derivedEntityRow, derivedRelationRow, entityFromMap, giversOf, nextGivers, partFromMap, partRow, plannerView, relationFromMap,
  type DerivedField, type Givers, type StoredPartsItem
} from './neo4j-parts.js'
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

/** Cypher projection of an entity node (`entityFromMap` reads it, with the parts `partsOf` gives). */
const ENTITY = (v: string) =>
  `${v} {.id, .name, .aliases, .type, .description, .source, .source_chunk_ids, .derived_json, .derived_parts}`
/** Cypher columns of an entity's names (`namesFromRecord` reads them). */
const NAMES = (v: string) =>
  `${v}.id AS id, ${v}.name AS name, ${v}.aliases AS aliases, ${v}.derived_docs IS NOT NULL OR ${v}.derived_parts IS NOT NULL AS derived`
const namesFromRecord = (r: neo4j.Record): KgEntityNames => ({
  id: String(r.get('id')), name: String(r.get('name')), aliases: ((r.get('aliases') as unknown[] | null) ?? []).map(String),
  ...(r.get('derived') === true ? { derived: true as const } : {})
})
/** Cypher projection of a relationship's properties (its ends come apart). */
const RELATION = (v: string) => `${v} {.id, .type, .description, .weight, .derived_json, .derived_parts}`
/** A subquery giving `<v>_parts`: the part nodes (`label`) of item `v` when it is kept as parts, else `[]`. */
const partsOf = (v: string, label: string) =>
  `CALL { WITH ${v} OPTIONAL MATCH (p:${label} {ns: $ns, item: ${v}.id}) USING INDEX p:${label}(ns, item) WHERE ${v}.derived_parts IS NOT NULL
          RETURN collect(${PART('p')}) AS ${v}_parts }`
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
  private readonly entityPartLabel: string
  private readonly relationPartLabel: string
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
    this.entityPartLabel = `${prefix}KgEntityPart`
    this.relationPartLabel = `${prefix}KgRelationPart`
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
      // an imported item replacing a derived one of the same id keeps none of its parts
      const { EP, RP } = this.labels()
      for (const [label, items] of [[EP, entities], [RP, relations]] as const) {
        for (const rows of chunks(items.map((item) => item.id), this.batchSize)) {
          await tx.run(`UNWIND $rows AS id MATCH (p:${label} {ns: $ns, item: id}) USING INDEX p:${label}(ns, item) DELETE p`, { rows, ns })
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
    const docs = new Set(contributions.keys())
    return this.connection.write(async (tx) => {
      await this.ensureDocIndex(tx, ns)
      const stored = await this.readStored(tx, ns, [...docs], ids)
      const plan = planDerivedWrite({
        entities: [...stored.entities.values()].map((e) => plannerView(e, docs)),
        relations: [...stored.relations.values()].map((r) => plannerView(r, docs))
      }, contributions)
      const result: KgDerivedWriteResult = {
        written: plan.written,
        removed: { entities: plan.removeEntities.length, relations: plan.removeRelations.length },
        blocked: plan.blocked, entityIds: touchedEntities(plan)
      }
      if (plan.written.entities + plan.written.relations + plan.removeEntities.length + plan.removeRelations.length === 0) return result
      await this.removeDerived(tx, ns, plan.removeEntities, plan.removeRelations)
      await this.writeParts(tx, ns, docs, plan.parts, stored)
      await this.writeDocRecords(tx, ns, contributions)
      await this.bumpVersion(tx, ns)
      return result
    })
  }

  /** Removes derived items whose last part went, their part nodes with them (and those of the relations an entity takes along). */
  private async removeDerived(tx: ManagedTransaction, ns: string, entities: readonly string[], relations: readonly string[]): Promise<void> {
    const { E, R, RP } = this.labels()
    for (const rows of chunks([...relations], this.batchSize)) {
      await tx.run(`UNWIND $rows AS id MATCH ()-[r:${R} {ns: $ns, id: id}]->() DELETE r`, { rows, ns })
      await tx.run(`UNWIND $rows AS id MATCH (p:${RP} {ns: $ns, item: id}) USING INDEX p:${RP}(ns, item) DELETE p`, { rows, ns })
    }
    for (const rows of chunks([...entities], this.batchSize)) {
      await this.deletePartsOf(tx, ns, rows)
      await tx.run(`UNWIND $rows AS id MATCH (e:${E} {ns: $ns, id: id}) DETACH DELETE e`, { rows, ns })
    }
  }

  /** Deletes the part nodes of these entities and of every relation that touches them. */
  private async deletePartsOf(tx: ManagedTransaction, ns: string, entities: readonly string[]): Promise<void> {
    const { E, R, EP, RP } = this.labels()
    await tx.run(
      `UNWIND $ids AS id MATCH (:${E} {ns: $ns, id: id})-[r:${R}]-() WITH DISTINCT r.id AS rid
       MATCH (p:${RP} {ns: $ns, item: rid}) USING INDEX p:${RP}(ns, item) DELETE p`,
      { ids: [...entities], ns }
    )
    await tx.run(`UNWIND $ids AS id MATCH (p:${EP} {ns: $ns, item: id}) USING INDEX p:${EP}(ns, item) DELETE p`, { ids: [...entities], ns })
  }

  /**
   * Writes the plan's items as parts: the written documents' part nodes of each item replaced by what they contribute
   * now, and the item's own few properties set; an item of the old form (`derived_json`) becomes parts whole, once.
   */
  private async writeParts(tx: ManagedTransaction, ns: string, docs: ReadonlySet<string>, parts: DerivedParts, stored: StoredDerived): Promise<void> {
    const { E, R, EP, RP } = this.labels()
    const dropped: string[] = []
    const created: { entities: Record<string, unknown>[]; relations: Record<string, unknown>[] } = { entities: [], relations: [] }
    const entityRows: Record<string, unknown>[] = []
    const countRows: Record<string, unknown>[] = []
    const rescans: Array<{ id: string; field: DerivedField }> = []
    const pending: Array<{ id: string; before: StoredPartsItem; written: KgDerivation[]; givers: Givers; count: number }> = []
    for (const { id, name, written } of parts.entities) {
      const before = stored.entities.get(id)
      if (!before || before.all) {
        // every part is known here: a new item, or one of the old form turned into parts
        const all = [...(before?.all ?? []).filter((p) => !docs.has(p.doc_id)), ...written]
        const entity = entityOf(id, before?.name ?? name, all)
        entityRows.push(derivedEntityRow(ns, id, entity, all.length, giversOf(all)))
        created.entities.push(...all.map((p) => partRow(ns, id, p)))
        continue
      }
      dropped.push(...before.replaced.map((r) => r.element))
      created.entities.push(...written.map((p) => partRow(ns, id, p)))
      const next = nextGivers({ givers: before.givers! }, docs, written)
      rescans.push(...next.rescan.map((field) => ({ id, field })))
      pending.push({ id, before, written, givers: next.givers, count: before.count! - before.replaced.length + written.length })
    }
    // a field whose document lost it: the first other part that has it
    const found = new Map<string, { doc: string; value: string }>()
    for (const rows of chunks(rescans, this.batchSize)) {
      const result = await tx.run(
        `UNWIND $rows AS row
         CALL { WITH row MATCH (p:${EP} {ns: $ns, item: row.id}) USING INDEX p:${EP}(ns, item)
                WHERE p[row.field] IS NOT NULL AND NOT p.doc IN $docs
                RETURN p.doc AS doc, p[row.field] AS value ORDER BY doc LIMIT 1 }
         RETURN row.id AS id, row.field AS field, doc, value`,
        { rows, ns, docs: [...docs] }
      )
      for (const r of result.records) found.set(`${String(r.get('field'))}\u0000${String(r.get('id'))}`, { doc: String(r.get('doc')), value: String(r.get('value')) })
    }
    for (const { id, before, written, givers, count } of pending) {
      const fields: Partial<Record<DerivedField, string>> = {}
      for (const field of DERIVED_FIELDS) {
        const other = found.get(`${field}\u0000${id}`)
        if (other && (givers[field] === null || other.doc < givers[field]!)) givers[field] = other.doc
        const giver = givers[field]
        const value = giver === null ? undefined
          : written.find((p) => p.doc_id === giver)?.[field] ?? (other?.doc === giver ? other.value : before[field])
        if (value !== undefined) fields[field] = value
      }
      const name = fields.name ?? before.name!
      // fields unchanged: only the count and the documents giving them are set, so the full-text index is not touched
      if (name === before.name && fields.type === before.type && fields.description === before.description) {
        countRows.push({ id, derived_parts: count, derived_name_doc: givers.name, derived_type_doc: givers.type, derived_description_doc: givers.description })
      } else entityRows.push(derivedEntityRow(ns, id, { ...fields, name }, count, givers))
    }

    const relationRows: Array<{ source: string; target: string; props: Record<string, unknown>; stored: boolean }> = []
    for (const { id, source, target, type, written } of parts.relations) {
      const before = stored.relations.get(id)
      if (!before || before.all) {
        const all = [...(before?.all ?? []).filter((p) => !docs.has(p.doc_id)), ...written]
        const relation = relationOf(id, source, target, type, all)
        relationRows.push({ source, target, props: derivedRelationRow(ns, id, type, relation.weight, all.length), stored: before !== undefined })
        created.relations.push(...all.map((p) => partRow(ns, id, p)))
        continue
      }
      dropped.push(...before.replaced.map((r) => r.element))
      created.relations.push(...written.map((p) => partRow(ns, id, p)))
      const weight = (before.weight ?? 0) - sum(before.replaced.map((r) => r.part.count)) + sum(written.map((p) => p.count))
      relationRows.push({ source, target, props: derivedRelationRow(ns, id, type, weight, before.count! - before.replaced.length + written.length), stored: true })
    }

    for (const rows of chunks(dropped, this.batchSize)) {
      await tx.run(`UNWIND $rows AS id MATCH (p) WHERE elementId(p) = id DELETE p`, { rows })
    }
    for (const rows of chunks(entityRows, this.batchSize)) {
      await tx.run(`UNWIND $rows AS row MERGE (e:${E} {ns: row.ns, id: row.id}) SET e = row`, { rows })
    }
    for (const rows of chunks(countRows, this.batchSize)) {
      await tx.run(`UNWIND $rows AS row MATCH (e:${E} {ns: $ns, id: row.id}) USING INDEX e:${E}(ns, id) SET e += row`, { rows, ns })
    }
    // A derived relation's id names its ends and type, so one that is stored stays where it is and only its
    // properties change; one that is not is created, with no lookup of an old one to delete.
    for (const rows of chunks(relationRows.filter((r) => r.stored).map((r) => r.props), this.batchSize)) {
      const set = await tx.run(
        `UNWIND $rows AS row MATCH ()-[r:${R} {ns: $ns, id: row.id}]->() USING INDEX r:${R}(ns, id) SET r = row RETURN count(r) AS n`, { rows, ns }
      )
      if (Number(set.records[0]?.get('n')) !== rows.length) throw new Error('a derived relation read by this write is gone')
    }
    for (const rows of chunks(relationRows.filter((r) => !r.stored), this.batchSize)) {
      const made = await tx.run(
        `UNWIND $rows AS row
         MATCH (a:${E} {ns: $ns, id: row.source}), (b:${E} {ns: $ns, id: row.target})
         CREATE (a)-[r:${R}]->(b) SET r = row.props
         RETURN count(r) AS n`,
        { rows, ns }
      )
      if (Number(made.records[0]?.get('n')) !== rows.length) throw new Error('an end of a derived relation this write names is gone')
    }
    for (const [label, rows] of [[EP, created.entities], [RP, created.relations]] as const) {
      for (const batch of chunks(rows, this.batchSize)) await tx.run(`UNWIND $rows AS row CREATE (p:${label}) SET p = row`, { rows: batch })
    }
  }

  /** Each written document's index record: the ids it names now (none: the record goes). */
  private async writeDocRecords(tx: ManagedTransaction, ns: string, contributions: ReadonlyMap<string, KgContribution>): Promise<void> {
    const { D } = this.labels()
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
  }

  /**
   * Builds the namespace's `KgDoc` records from its derived items when a version without them wrote it (no
   * `KgMeta {key: 'derived-docs'}`): one scan of the namespace's derived items, once. Run only inside a derived
   * write (serialised per namespace), so no other write changes the parts it reads. Such a namespace holds no part
   * nodes (a version writing them writes the records too).
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
    const { M, EP, RP } = this.labels()
    // both statements in one transaction (the connection has transactions for writes only)
    const stored = await this.connection.write(async (tx) => {
      // a namespace a version without the document index wrote is read as it did (building the index is a derived write's)
      const marked = await tx.run(`MATCH (m:${M} {ns: $ns, key: $key}) RETURN count(m) AS n`, { ns, key: DOC_INDEX_KEY })
      const candidates = this.derivedCandidates(Number(marked.records[0]?.get('n') ?? 0) > 0)
      const params = { ns, docs: [...docIds], ids: [] }
      const entities = await tx.run(
        `CALL { ${candidates.entities} } WITH DISTINCT e ${partsOf('e', EP)} RETURN ${ENTITY('e')} AS e, e_parts AS parts`, params
      )
      const relations = await tx.run(
        `CALL { ${candidates.relations} } WITH DISTINCT a, r, b ${partsOf('r', RP)}
         RETURN ${RELATION('r')} AS r, a.id AS source, b.id AS target, r_parts AS parts`, params
      )
      return {
        entities: entities.records.map((r) => entityFromMap(r.get('e') as Record<string, unknown>, r.get('parts') as unknown[])),
        relations: relations.records.map((r) => relationFromMap(r.get('r') as Record<string, unknown>, r.get('source'), r.get('target'), r.get('parts') as unknown[]))
      }
    })
    return { entities: stored.entities.sort(byId), relations: stored.relations.sort(byId) }
  }

  /** The items read whole, as `derivedOf` (an old-form item keeps its parts in one `derived_json`), then their parts counted. */
  async derivedPartCounts(namespace: string, docIds: readonly string[]): Promise<Map<string, number>> {
    const counts = new Map(docIds.map((doc) => [doc, 0]))
    if (docIds.length === 0) return counts
    const { entities, relations } = await this.derivedOf(namespace, docIds)
    for (const item of [...entities, ...relations]) {
      for (const part of item.derived_from ?? []) {
        const n = counts.get(part.doc_id)
        if (n !== undefined) counts.set(part.doc_id, n + 1)
      }
    }
    return counts
  }

  /**
   * Cypher (a UNION, to run inside `CALL { }` with `$ns`, `$docs` and `$ids`) for the derived items the documents
   * contribute to and the stored items of the given ids: old-form items through the documents' `KgDoc` records
   * (`indexed`) or a scan of the namespace, items kept as parts through their documents' part nodes.
   */
  private derivedCandidates(indexed: boolean): { entities: string; relations: string } {
    const { E, R, D, EP, RP } = this.labels()
    const contributes = (v: string) => `${v}.derived_json IS NOT NULL AND any(d IN ${v}.derived_docs WHERE d IN $docs)`
    // The hints keep these seeks when the plan was made while the labels were empty (a new database): the planner
    // would then pick a scan of the namespace's index, and keep it until it plans again.
    const oldEntities = indexed
      ? `UNWIND $docs AS doc MATCH (x:${D} {ns: $ns, doc: doc}) USING INDEX x:${D}(ns, doc)
         UNWIND x.entities AS id MATCH (e:${E} {ns: $ns, id: id}) USING INDEX e:${E}(ns, id) WITH DISTINCT e`
      : `MATCH (e:${E} {ns: $ns})`
    const oldRelations = indexed
      ? `UNWIND $docs AS doc MATCH (x:${D} {ns: $ns, doc: doc}) USING INDEX x:${D}(ns, doc)
         UNWIND x.relations AS id MATCH (a:${E})-[r:${R} {ns: $ns, id: id}]->(b:${E}) USING INDEX r:${R}(ns, id)
         WITH DISTINCT a, r, b`
      : `MATCH (a:${E})-[r:${R} {ns: $ns}]->(b:${E})`
    return {
      entities: `${oldEntities} WHERE ${contributes('e')} RETURN e
        UNION
        UNWIND $docs AS doc MATCH (p:${EP} {ns: $ns, doc: doc}) USING INDEX p:${EP}(ns, doc) WITH DISTINCT p.item AS id
        MATCH (e:${E} {ns: $ns, id: id}) USING INDEX e:${E}(ns, id) RETURN e
        UNION
        UNWIND $ids AS id MATCH (e:${E} {ns: $ns, id: id}) USING INDEX e:${E}(ns, id) RETURN e`,
      relations: `${oldRelations} WHERE ${contributes('r')} RETURN a, r, b
        UNION
        UNWIND $docs AS doc MATCH (p:${RP} {ns: $ns, doc: doc}) USING INDEX p:${RP}(ns, doc) WITH DISTINCT p.item AS id
        MATCH (a:${E})-[r:${R} {ns: $ns, id: id}]->(b:${E}) USING INDEX r:${R}(ns, id) RETURN a, r, b
        UNION
        UNWIND $ids AS id MATCH (a:${E})-[r:${R} {ns: $ns, id: id}]->(b:${E}) USING INDEX r:${R}(ns, id) RETURN a, r, b`
    }
  }

  /**
   * What a derived write reads: the items its documents contribute to and those of the ids it names, each with the
   * written documents' parts only (an old-form item with all of them), never the other documents' parts.
   */
  private async readStored(
    tx: ManagedTransaction, ns: string, docs: readonly string[], ids: { entities: readonly string[]; relations: readonly string[] }
  ): Promise<StoredDerived> {
    const { EP, RP } = this.labels()
    const candidates = this.derivedCandidates(true)
    const entities = await tx.run(
      `CALL { ${candidates.entities} } WITH DISTINCT e
       RETURN e {.id, .name, .type, .description, .derived_json, .derived_parts, .derived_name_doc, .derived_type_doc, .derived_description_doc} AS e`,
      { ns, docs: [...docs], ids: [...ids.entities] }
    )
    const relations = await tx.run(
      `CALL { ${candidates.relations} } WITH DISTINCT a, r, b
       RETURN r {.id, .type, .weight, .derived_json, .derived_parts} AS r, a.id AS source, b.id AS target`,
      { ns, docs: [...docs], ids: [...ids.relations] }
    )
    const replaced = async (label: string) => {
      const result = await tx.run(
        `UNWIND $docs AS doc MATCH (p:${label} {ns: $ns, doc: doc}) USING INDEX p:${label}(ns, doc)
         RETURN p.item AS item, elementId(p) AS element, ${PART('p')} AS part`,
        { ns, docs: [...docs] }
      )
      const byItem = new Map<string, StoredPartsItem['replaced']>()
      for (const r of result.records) {
        const item = String(r.get('item'))
        byItem.set(item, [...(byItem.get(item) ?? []), { element: String(r.get('element')), part: partFromMap(r.get('part')) }])
      }
      return byItem
    }
    const [entityParts, relationParts] = [await replaced(EP), await replaced(RP)]
    const stored: StoredDerived = { entities: new Map(), relations: new Map() }
    for (const record of entities.records) {
      const m = record.get('e') as Record<string, unknown>
      const id = String(m.id)
      stored.entities.set(id, {
        ...storedForm(m, entityParts.get(id)), id, name: String(m.name),
        ...(m.type != null ? { type: String(m.type) } : {}), ...(m.description != null ? { description: String(m.description) } : {}),
        givers: { name: nullable(m.derived_name_doc), type: nullable(m.derived_type_doc), description: nullable(m.derived_description_doc) }
      })
    }
    for (const record of relations.records) {
      const m = record.get('r') as Record<string, unknown>
      const id = String(m.id)
      stored.relations.set(id, {
        ...storedForm(m, relationParts.get(id)), id, source: String(record.get('source')), target: String(record.get('target')),
        relationType: String(m.type), weight: Number(m.weight ?? 0)
      })
    }
    return stored
  }

  /**
   * Creates or replaces entities and relations by id; a relation whose end is missing makes it throw.
   */
  private async putRows(
    tx: ManagedTransaction, ns: string, entities: readonly KgEntity[], relations: readonly KgRelation[]
  ): Promise<void> {
    const { E, R } = this.labels()
    for (const rows of chunks(entities.map((e) => toEntityRow(ns, e)), this.batchSize)) {
      await tx.run(`UNWIND $rows AS row MERGE (e:${E} {ns: row.ns, id: row.id}) SET e = row`, { rows })
    }
    for (const rows of chunks(relations.map((r) => toRelationRow(ns, r)), this.batchSize)) {
      await tx.run(`UNWIND $rows AS row MATCH ()-[old:${R} {ns: row.props.ns, id: row.props.id}]->() DELETE old`, { rows })
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
      await this.deletePartsOf(tx, ns, [id])
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
    const { E, EP } = this.labels()
    const result = await this.connection.run(
      `UNWIND $ids AS id MATCH (e:${E} {ns: $ns, id: id}) WITH DISTINCT e ${partsOf('e', EP)} RETURN ${ENTITY('e')} AS e, e_parts AS parts`,
      { ids: [...new Set(ids)], ns },
      'READ'
    )
    return result.records.map((r) => entityFromMap(r.get('e') as Record<string, unknown>, r.get('parts') as unknown[])).sort(byId)
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
    const result = await this.connection.run(`MATCH (e:${E} {ns: $ns}) RETURN ${NAMES('e')}`, { ns }, 'READ', signal)
    return result.records.map(namesFromRecord).sort(byId)
  }

  async namesOf(namespace: string, ids: readonly string[]): Promise<KgEntityNames[]> {
    const ns = checkNamespace(namespace)
    await this.init()
    if (ids.length === 0) return []
    const { E } = this.labels()
    const result = await this.connection.run(`UNWIND $ids AS id MATCH (e:${E} {ns: $ns, id: id}) RETURN ${NAMES('e')}`, { ids: [...new Set(ids)], ns }, 'READ')
    return result.records.map(namesFromRecord).sort(byId)
  }

  async neighbourhood(namespace: string, ids: readonly string[], signal?: AbortSignal, options: KgNeighbourhoodOptions = {}): Promise<KgNeighbourhood> {
    const ns = checkNamespace(namespace)
    await this.init()
    if (ids.length === 0) return { entities: [], relations: [] }
    const { E, R, EP, RP } = this.labels()
    const unique = [...new Set(ids)]
    const keep = options.maxNeighbours === undefined ? null : await this.keptNeighbours(ns, unique, options.maxNeighbours, signal)
    const result = await this.connection.run(
      // The other end's namespace is checked on what the expansion reached: in the pattern, it would let the
      // planner start from the namespace's index and expand back from every entity of the namespace. Entities and
      // relations are gathered before their parts are read, so that each item's parts are read once.
      `UNWIND $ids AS id
       MATCH (e:${E} {ns: $ns, id: id})
       OPTIONAL MATCH (e)-[r:${R}]-(o:${E})
       WITH e, r, CASE WHEN o.ns = $ns AND ($keep IS NULL OR o.id IN $keep OR o.id IN $ids) THEN o END AS other
       WITH e, CASE WHEN other IS NOT NULL AND r.ns = $ns THEN r END AS rel, other
       WITH collect(DISTINCT e) + collect(DISTINCT other) AS found, collect(DISTINCT rel) AS rels
       CALL { WITH found UNWIND found AS n WITH DISTINCT n ${partsOf('n', EP)}
              RETURN collect({entity: ${ENTITY('n')}, parts: n_parts}) AS entities }
       CALL { WITH rels UNWIND rels AS r ${partsOf('r', RP)}
              RETURN collect({rel: ${RELATION('r')}, source: startNode(r).id, target: endNode(r).id, parts: r_parts}) AS relations }
       RETURN entities, relations`,
      { ids: unique, ns, keep },
      'READ', signal
    )
    const record = result.records[0]
    const entities = ((record?.get('entities') ?? []) as Array<{ entity: Record<string, unknown>; parts: unknown[] }>)
      .map((row) => entityFromMap(row.entity, row.parts))
    const relations = ((record?.get('relations') ?? []) as Array<{ rel: Record<string, unknown>; source: unknown; target: unknown; parts: unknown[] }>)
      .map((row) => relationFromMap(row.rel, row.source, row.target, row.parts))
    return { entities: entities.sort(byId), relations: relations.sort(byId) }
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
       WITH node, score ORDER BY score DESC, node.id ASC LIMIT $limit
       ${partsOf('node', this.entityPartLabel)}
       RETURN ${ENTITY('node')} AS entity, node_parts AS parts, score`,
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
    const hits = result.records.map((r) => ({
      entity: entityFromMap(r.get('entity') as Record<string, unknown>, r.get('parts') as unknown[]), score: Number(r.get('score'))
    }))
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
    const { E, M, D, EP, RP } = this.labels()
    // Managed transactions cannot run `IN TRANSACTIONS`; delete in bounded batches instead.
    for (;;) {
      const result = await this.connection.run(`MATCH (e:${E} {ns: $ns}) WITH e LIMIT 5000 DETACH DELETE e RETURN count(*) AS c`, { ns })
      if (Number(result.records[0]?.get('c') ?? 0) === 0) break
    }
    for (const label of [D, EP, RP]) {
      for (;;) {
        const result = await this.connection.run(`MATCH (d:${label} {ns: $ns}) WITH d LIMIT 5000 DELETE d RETURN count(*) AS c`, { ns })
        if (Number(result.records[0]?.get('c') ?? 0) === 0) break
      }
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

  private labels(): { E: string; R: string; M: string; D: string; EP: string; RP: string } {
    return { E: this.entityLabel, R: this.relType, M: this.metaLabel, D: this.docLabel, EP: this.entityPartLabel, RP: this.relationPartLabel }
  }

  private async createSchema(): Promise<void> {
    const { E, R, M, D, EP, RP } = this.labels()
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
      // a derived item's parts: read by item, replaced by document (a composite index serves no prefix of itself)
      `CREATE INDEX ${p}_entity_part_ns_item IF NOT EXISTS FOR (p:${EP}) ON (p.ns, p.item)`,
      `CREATE INDEX ${p}_entity_part_ns_doc IF NOT EXISTS FOR (p:${EP}) ON (p.ns, p.doc)`,
      `CREATE INDEX ${p}_relation_part_ns_item IF NOT EXISTS FOR (p:${RP}) ON (p.ns, p.item)`,
      `CREATE INDEX ${p}_relation_part_ns_doc IF NOT EXISTS FOR (p:${RP}) ON (p.ns, p.doc)`,
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

/** The derived items a write touches, by id, as `readStored` read them. */
interface StoredDerived {
  entities: Map<string, StoredPartsItem>
  relations: Map<string, StoredPartsItem>
}

/** An item's form as read: imported, old (its parts in `derived_json`), or kept as parts (with the written documents' ones). */
function storedForm(m: Record<string, unknown>, replaced: StoredPartsItem['replaced'] | undefined): Pick<StoredPartsItem, 'imported' | 'all' | 'count' | 'replaced'> {
  if (m.derived_json != null) return { imported: false, all: JSON.parse(String(m.derived_json)) as KgDerivation[], replaced: [] }
  if (m.derived_parts != null) return { imported: false, count: Number(m.derived_parts), replaced: replaced ?? [] }
  return { imported: true, replaced: [] }
}

const nullable = (value: unknown): string | null => (value == null ? null : String(value))
const sum = (xs: readonly number[]) => xs.reduce((a, x) => a + x, 0)

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

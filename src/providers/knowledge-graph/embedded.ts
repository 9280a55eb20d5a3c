import { randomUUID } from 'node:crypto'
import { BackgroundCompaction } from '../embedded/background-compaction.js'
import { TaskQueue } from '../embedded/task-queue.js'
import { foldEntry } from '../embedded/fold-client.js'
import { NamespaceLogs } from '../embedded/namespace-logs.js'
import { backendName, errorMessage, probeHealth, UnexpectedResponseError, type BackendHealth } from '../errors.js'
import { runSteps, runStepsYielding, type LoadSteps } from '../embedded/load-steps.js'
import { HeldPayload, type SnapshotPayload } from '../embedded/snapshot-stream.js'
import { checkNamespace } from '../namespace.js'
import { contributedIds, planDerivedWrite, touchedEntities, type DerivedParts, type DerivedPlan, type StoredDerivedItem } from './derived.js'
import { encodeCompactGraph, isCompactPayload, type CompactEntity, type CompactGraph, type CompactRelation } from './compact-graph.js'
import { compactParts, type CompactPart } from './compact-stream.js'
import { ById, ByIdHash, DerivedEntity, DerivedRelation, ItemTable, numberingTables, ranksOf, type CompactStrings, type CompactTables } from './derived-items.js'
import { PartStore } from './part-columns.js'
import { RowDocuments } from './row-documents.js'
import { EntityTokens } from './entity-tokens.js'
import { addId, addNewId, deleteId, sizeOf, type IdList } from './id-lists.js'
import { keptNeighbours } from './neighbour-cut.js'
import {
  UnknownEntitiesError,
  type KgContribution,
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

export interface EmbeddedKnowledgeGraphOptions {
  /**
   * Directory holding `knowledge-graph.snap` and `.log` (and `namespaces/<ns>/knowledge-graph.*`); without
   * it the graph lives in memory only.
   */
  dir?: string
  /** Compaction floor of each namespace's log, in bytes (see `DurableLog`). Default 1 MiB. */
  compactionFloorBytes?: number
  /**
   * A namespace's log is folded once it holds this many bytes, however large its snapshot (`streaming-fold.ts` holds
   * the log's items, so this bounds a fold's heap). Default 64 MiB.
   */
  foldLogBytes?: number
}

/** A namespace's whole graph: the snapshot payload, and the legacy whole-file JSON (with `format: 1`). */
interface Persisted {
  format: 1
  entities: KgEntity[]
  relations: KgRelation[]
}

/** One change as the log records it. */
export type KgRecord =
  | { op: 'put'; entities: KgEntity[]; relations: KgRelation[] }
  | { op: 'delete'; id: string }
  | ({ op: 'derive' } & Omit<DerivedPlan, 'blocked' | 'parts'>)
  // a derived write as its documents' parts: the size of what was written, not of every document citing an item
  | { op: 'derive-parts'; parts: DerivedParts; removeEntities: string[]; removeRelations: string[] }

const BACKEND = backendName('knowledge-graph', 'memory')
/**
 * The store's payload format in the kernel's files: a record is a `KgRecord` in both; a snapshot is `Persisted` in
 * format 1 and the compact form in format 2 (`compact-graph.ts`). New files are format 2 (an older build refuses them
 * by their header); format-1 files are still read.
 */
const FORMAT = 2
const READS = [1]
const FILE_STEM = 'knowledge-graph'
/** See `foldLogBytes`: at about 3 KB of log a one-chunk document, a fold every ~20k documents once the snapshot is larger. */
const FOLD_LOG_BYTES = 64 * 1_048_576
/**
 * The log's bytes whose items a fold holds parsed at once, at most (`streaming-fold.ts`; an item's share is never
 * split): the log a fold is given is what was written while the last one ran, which grows with the snapshot it rewrote.
 */
export const FOLD_SHARE_BYTES = 64 * 1_048_576
/**
 * A log larger than its snapshot is folded whole (both held) only while the two are this small (`foldsWhole`): a log
 * that outgrew a large snapshot (a fold slower than the writes) is folded in blocks a range at a time like any other.
 */
export const FOLD_WHOLE_MAX_BYTES = 64 * 1_048_576
/** What a version before the kernel wrote: the whole namespace as one JSON file. */
const LEGACY_FILE = 'knowledge-graph.json'

const encode = (value: unknown): Buffer => Buffer.from(JSON.stringify(value), 'utf8')

const byId = (a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

/** An entity's relation ids, a document's item ids: an array until this many (`id-lists.ts`); a document holds hundreds. */
const RELATIONS_SET_FROM = 64
const ITEMS_SET_FROM = 1024

/** A relation as the partition holds it: an imported one whole (frozen), a derived one as its parts. */
type HeldRelation = KgRelation | DerivedRelation
type HeldDerived = DerivedEntity | DerivedRelation

/**
 * One namespace's graph in memory: entities and relations by id, adjacency and a token index beside them. The lists
 * hold the items themselves, not their ids: a derived relation keeps no id string (`DerivedRelation.id`).
 */
export class KgPartition {
  readonly entities = new ItemTable<KgEntity, DerivedEntity>(new ById())
  readonly relations = new ItemTable<KgRelation, DerivedRelation>(new ByIdHash())
  /** Entity id -> the relations that touch it. */
  private readonly adjacency = new Map<string, IdList<HeldRelation>>()
  /** Document id -> the derived entities and relations it contributes to. */
  private readonly contributions = new Map<string, IdList<HeldDerived>>()
  /** Document id -> the one string of it the document lists hold; and the one of each relation type. */
  private readonly docIds = new Map<string, string>()
  private readonly types = new Map<string, string>()
  /** The derived items' parts (`part-columns.ts`). */
  private readonly parts = new PartStore()
  private readonly tokens = new EntityTokens()
  /** The store's change counter at this partition's last change. */
  version = 0

  static from(data: Persisted): KgPartition {
    const partition = new KgPartition()
    for (const entity of data.entities) partition.putEntity(entity)
    for (const relation of data.relations) partition.putRelation(relation)
    return partition
  }

  /**
   * Packs the derived items' parts into cells of the exact length (`PartColumns.repack`), as a load does after its
   * replay; a kind whose cells hold no room outside its runs (a snapshot read with no log after it) is left as it is.
   */
  repackParts(): void {
    if (this.parts.entityParts.slack > 0) this.parts.entityParts.repack(this.entities.derivedValues())
    if (this.parts.relationParts.slack > 0) this.parts.relationParts.repack(this.relations.derivedValues())
  }

  /** Applies one logged change; the store checked it before logging it. */
  apply(record: KgRecord): void {
    if (record.op === 'delete') {
      this.removeEntity(record.id)
      return
    }
    if (record.op === 'derive' || record.op === 'derive-parts') {
      for (const id of record.removeRelations) this.removeRelation(id)
      for (const id of record.removeEntities) this.removeEntity(id)
    }
    if (record.op === 'derive-parts') {
      this.applyParts(record.parts)
      return
    }
    for (const entity of record.entities) this.putEntity(copyEntity(entity))
    for (const relation of record.relations) this.putRelation(copyRelation(relation))
  }

  /** The partition as a compact snapshot (`compact-graph.ts`): items in id order, derived ones as their parts' slots. */
  toCompact(): CompactGraph {
    const numbering = numberingTables()
    const entities = this.entities.ids().sort().map((id) => this.entityRow(id, numbering.tables))
    const relations = this.relations.ids().sort().map((id) => this.relationRow(id, numbering.tables))
    return { docs: numbering.docs(), types: numbering.types(), entities, relations }
  }

  /** The entity's row of a compact snapshot (`toCompact`), its documents and types numbered by `tables`. */
  entityRow(id: string, tables: CompactTables): CompactGraph['entities'][number] {
    const derived = this.entities.derived(id)
    return derived ? compactEntityRow(derived, tables) : this.entities.get(id)!
  }

  relationRow(id: string, tables: CompactTables): CompactGraph['relations'][number] {
    const derived = this.relations.derived(id)
    return derived ? compactRelationRow(derived, tables) : this.relations.get(id)!
  }

  /**
   * A partition from its compact snapshot, read a row at a time (`compactParts`): the same items, parts, adjacency,
   * document lists and keyword index as the partition that wrote it, each part's slots taken as written (no part object
   * is made). The tables come before the rows and the entities before the relations, as every writer puts them; the
   * parts' cells grow as rows come, and the load packs them once its log is replayed (`repackParts`). A step a row
   * (`load-steps.ts`).
   */
  static *fromCompactParts(parts: Iterable<CompactPart>): LoadSteps<KgPartition> {
    const partition = new KgPartition()
    const tables: Partial<Record<'docs' | 'types', string[]>> = {}
    let strings: CompactStrings | undefined
    // each derived row's documents, entities then relations, each in id order: the document lists are built from them at the end
    const rowDocs = new RowDocuments<HeldDerived>()
    const eachDoc = (doc: number) => rowDocs.add(doc)
    const stringsOfTables = (): CompactStrings => {
      const { docs, types } = tables
      if (!docs) throw new Error('compact snapshot without docs before its items')
      if (!types) throw new Error('compact snapshot without types before its items')
      return {
        docs: docs.map((doc) => {
          partition.docIds.set(doc, doc)
          return doc
        }),
        types: types.map((type) => partition.type(type)),
        docNumbers: [],
        docRanks: ranksOf(docs)
      }
    }
    for (const part of parts) {
      if ('table' in part) {
        if (strings) throw new Error(`compact snapshot: its ${part.table} table after its items`)
        tables[part.table] = part.values
        continue
      }
      yield
      strings ??= stringsOfTables()
      const row = part.value
      if (part.row === 'entities') {
        if (!Array.isArray(row)) {
          partition.putEntity(row as KgEntity)
          continue
        }
        const derived = restoreEntity(row as CompactEntity, strings, eachDoc, partition.parts)
        rowDocs.end(derived)
        partition.entities.setDerived(derived)
        partition.indexTokens(derived.id)
      } else {
        if (!Array.isArray(row)) {
          partition.putRelation(row as KgRelation)
          continue
        }
        const derived = restoreRelation(row as CompactRelation, strings, (id) => partition.entities.canonical(id), eachDoc, partition.parts)
        rowDocs.end(derived)
        partition.relations.setDerived(derived)
        partition.linkEnds(derived, derived.source, derived.target)
      }
    }
    strings ??= stringsOfTables()
    const lists = yield* rowDocs.lists(strings.docs.length, ITEMS_SET_FROM)
    strings.docs.forEach((doc, index) => {
      const items = lists[index]
      if (items !== undefined) partition.contributions.set(doc, items)
    })
    return partition
  }

  /**
   * A partition of one item alone, from its compact snapshot row (or none): what a fold a row at a time
   * (`streaming-fold.ts`) applies that item's share of the log's records to. Its keyword index is left empty.
   */
  static ofRow(kind: 'entities' | 'relations', row: CompactGraph['entities' | 'relations'][number] | undefined, strings: CompactStrings): KgPartition {
    const partition = new KgPartition()
    if (row === undefined) return partition
    if (!Array.isArray(row)) {
      if (kind === 'entities') partition.putEntity(row as KgEntity)
      else partition.putRelation(row as KgRelation)
    } else if (kind === 'entities') {
      const derived = restoreEntity(row as CompactEntity, strings, undefined, partition.parts)
      partition.entities.setDerived(derived)
      partition.noteParts(derived, derived.docs(), true)
    } else {
      const derived = restoreRelation(row as CompactRelation, strings, (id) => id, undefined, partition.parts)
      partition.relations.setDerived(derived)
      partition.noteParts(derived, derived.docs(), true)
      partition.linkEnds(derived, derived.source, derived.target)
    }
    return partition
  }

  neighbourhood(ids: readonly string[], maxNeighbours?: number): KgNeighbourhood {
    const requested = new Set(ids.filter((id) => this.entities.has(id)))
    const kept = maxNeighbours === undefined ? undefined
      : keptNeighbours(requested, [...requested].flatMap((id) => [...this.adjacency.get(id) ?? []].map(relationItem)), maxNeighbours)
    const entityIds = new Set<string>()
    const relations = new Set<KgRelation>()
    for (const id of requested) {
      entityIds.add(id)
      for (const held of this.adjacency.get(id) ?? []) {
        const other = held.source === id ? held.target : held.source
        if (kept && !requested.has(other) && !kept.has(other)) continue
        relations.add(relationItem(held))
        entityIds.add(other)
      }
    }
    return {
      // the stored objects themselves, frozen (`ItemTable`): a large neighbourhood is not copied on every question
      entities: [...entityIds].map((id) => this.entities.get(id)!).sort(byId),
      relations: [...relations].sort(byId)
    }
  }

  searchKeywords(tokens: readonly string[], limit: number, types: ReadonlySet<string> | undefined): KgKeywordHit[] {
    if (tokens.length === 0 || limit <= 0) return []
    const buckets = new Map<number, string[]>()
    for (const [id, score] of this.tokens.scores(tokens)) {
      if (types) {
        const derived = this.entities.derived(id)
        const type = derived ? derived.type : this.entities.get(id)!.type
        if (type === undefined || !types.has(type)) continue
      }
      let bucket = buckets.get(score)
      if (!bucket) buckets.set(score, (bucket = []))
      bucket.push(id)
    }
    return selectBest(buckets, limit).map(([id, score]) => ({ entity: this.entities.get(id)!, score }))
  }

  /** Stores the entity (the caller gives it up): an imported one whole and frozen, a derived one as its parts. */
  putEntity(entity: KgEntity): void {
    this.removeEntityOnly(entity.id, false)
    if (entity.derived_from) {
      const derived = new DerivedEntity(entity.id, entity.name, this.parts)
      this.entities.setDerived(derived)
      this.noteParts(derived, entity.derived_from.map((p) => p.doc_id), true)
      derived.replace([], entity.derived_from)
    } else {
      this.entities.setWhole(entity)
    }
    this.indexTokens(entity.id)
  }

  /** Derived entities and relations any of these documents contributes to. */
  derivedOf(docIds: readonly string[]): KgNeighbourhood {
    const items = new Set(docIds.flatMap((doc) => [...(this.contributions.get(doc) ?? [])]))
    const entities: KgEntity[] = []
    const relations: KgRelation[] = []
    for (const item of items) {
      if (item instanceof DerivedEntity) entities.push(copyEntity(item.item()))
      else relations.push(copyRelation(item.item()))
    }
    return { entities: entities.sort(byId), relations: relations.sort(byId) }
  }

  /** Per document, how many derived items hold a part of it: each item a document contributes to holds one part of it. */
  derivedPartCounts(docIds: readonly string[]): Map<string, number> {
    return new Map(docIds.map((doc) => [doc, sizeOf(this.contributions.get(doc))]))
  }

  /**
   * What `planDerivedWrite` reads of the ids a derived write of `docs` touches: those the documents contribute to
   * now (`ids`) and those they contributed to before. Only the written documents' parts are read.
   */
  storedForDerivedWrite(docs: readonly string[], ids: { entities: readonly string[]; relations: readonly string[] }) {
    const previously = this.previousParts(docs)
    const entityIds = new Set(ids.entities)
    const relationIds = new Set(ids.relations)
    for (const [id, { item }] of previously) (item instanceof DerivedEntity ? entityIds : relationIds).add(id)
    const stored = (id: string, derived: DerivedEntity | DerivedRelation | undefined, fields: () => Partial<StoredDerivedItem>): StoredDerivedItem => {
      if (!derived) return { id, imported: true, replaced: [], others: 0 }
      const replaced = (previously.get(id)?.docs ?? []).map((doc) => derived.derivation(doc)!)
      return { id, imported: false, ...fields(), replaced, others: derived.size - replaced.length }
    }
    return {
      entities: [...entityIds].filter((id) => this.entities.has(id)).map((id) => {
        const derived = this.entities.derived(id)
        return stored(id, derived, () => ({ name: derived!.name }))
      }),
      relations: [...relationIds].filter((id) => this.relations.has(id)).map((id) => {
        const derived = this.relations.derived(id)
        return stored(id, derived, () => ({ source: derived!.source, target: derived!.target, type: derived!.type }))
      })
    }
  }

  /** Item id -> the item and which of `docs` it holds a part of: read from the documents' side, so a new document costs nothing. */
  private previousParts(docs: readonly string[]): Map<string, { item: HeldDerived; docs: string[] }> {
    const byItem = new Map<HeldDerived, string[]>()
    for (const doc of docs) {
      for (const item of this.contributions.get(doc) ?? []) {
        const held = byItem.get(item)
        if (held) held.push(doc)
        else byItem.set(item, [doc])
      }
    }
    return new Map([...byItem].map(([item, docs]) => [item.id, { item, docs }]))
  }

  removeEntity(id: string): void {
    for (const held of [...(this.adjacency.get(id) ?? [])]) this.removeHeldRelation(held)
    this.removeEntityOnly(id)
  }

  /** Removes the entity alone; its relations are the caller's business. */
  removeEntityOnly(id: string, freeSlot = true): void {
    const derived = this.entities.derived(id)
    if (derived) this.noteParts(derived, derived.docs(), false)
    this.entities.delete(id)
    if (!freeSlot) return
    this.tokens.remove(id)
    if (sizeOf(this.adjacency.get(id)) === 0) this.adjacency.delete(id)
  }

  /** Stores the relation, as `putEntity` does. */
  putRelation(relation: KgRelation): void {
    this.removeRelation(relation.id)
    const source = this.entities.canonical(relation.source)
    const target = this.entities.canonical(relation.target)
    if (relation.derived_from) {
      const derived = new DerivedRelation(relation.id, source, target, this.type(relation.type), this.parts)
      this.relations.setDerived(derived)
      this.noteParts(derived, relation.derived_from.map((p) => p.doc_id), true)
      derived.replace([], relation.derived_from)
      this.linkEnds(derived, source, target)
    } else {
      this.relations.setWhole(relation)
      this.linkEnds(this.relations.get(relation.id)!, source, target)
    }
  }

  removeRelation(id: string): void {
    const held = this.relations.derived(id) ?? this.relations.get(id)
    if (held) this.removeHeldRelation(held)
  }

  private removeHeldRelation(held: HeldRelation): void {
    if (held instanceof DerivedRelation) this.noteParts(held, held.docs(), false)
    this.relations.delete(held.id)
    for (const end of [held.source, held.target]) deleteId(this.adjacency, end, held, RELATIONS_SET_FROM)
  }

  /** A derived write's parts: each item changes the written documents' parts and nothing else. */
  private applyParts(parts: DerivedParts): void {
    const previously = this.previousParts(parts.docs)
    for (const { id, name, written } of parts.entities) {
      let derived = this.entities.derived(id)
      if (!derived) this.entities.setDerived((derived = new DerivedEntity(id, name, this.parts)))
      const before = previously.get(id)?.docs ?? []
      this.noteParts(derived, before, false)
      this.noteParts(derived, written.map((p) => p.doc_id), true)
      derived.replace(before, written)
      this.indexTokens(derived.id)
    }
    for (const { id, source, target, type, written } of parts.relations) {
      let derived = this.relations.derived(id)
      if (!derived) {
        const ends = [this.entities.canonical(source), this.entities.canonical(target)] as const
        this.relations.setDerived((derived = new DerivedRelation(id, ends[0], ends[1], this.type(type), this.parts)))
        this.linkEnds(derived, ends[0], ends[1])
      }
      const before = previously.get(id)?.docs ?? []
      this.noteParts(derived, before, false)
      this.noteParts(derived, written.map((p) => p.doc_id), true)
      derived.replace(before, written)
    }
  }

  private linkEnds(relation: HeldRelation, source: string, target: string): void {
    addId(this.adjacency, source, relation, RELATIONS_SET_FROM)
    addId(this.adjacency, target, relation, RELATIONS_SET_FROM)
  }

  /**
   * Notes (or forgets) that each of `docs` holds a part of `item`, keeping one string per document id. Every caller
   * notes an item's documents after forgetting its parts of them (a put forgets the item's old parts, a derived write
   * those of the written documents), so a document's list is known not to hold the id and is not scanned for it.
   */
  private noteParts(item: HeldDerived, docs: Iterable<string>, add: boolean): void {
    for (const doc of add ? new Set(docs) : docs) {
      if (add) {
        if (!this.docIds.has(doc)) this.docIds.set(doc, doc)
        addNewId(this.contributions, this.docIds.get(doc)!, item, ITEMS_SET_FROM)
      } else {
        deleteId(this.contributions, doc, item, ITEMS_SET_FROM)
        if (!this.contributions.has(doc)) this.docIds.delete(doc)
      }
    }
  }


  /** The partition's one string of a relation type. */
  private type(value: string): string {
    const held = this.types.get(value)
    if (held !== undefined) return held
    this.types.set(value, value)
    return value
  }

  private indexTokens(id: string): void {
    const { name, description } = this.entities.derived(id) ?? this.entities.get(id)!
    this.tokens.index(id, name, description)
  }
}

const EMPTY = new KgPartition()

/** An entity's names; a derived entity's name is read from its parts without building it whole. */
function namesIn(graph: KgPartition, id: string): KgEntityNames {
  const derived = graph.entities.derived(id)
  if (derived) return { id, name: derived.name, aliases: [], derived: true }
  const e = graph.entities.get(id)!
  return { id, name: e.name, aliases: [...e.aliases] }
}

/**
 * The knowledge graph in process: one partition per namespace, each persisted by the store kernel
 * (`providers/embedded/`): every change is one checksummed, fsynced log record, folded into a snapshot
 * when the log outgrows it, so one write costs the same at any size. `default` lives in `<dir>`, another
 * namespace in `<dir>/namespaces/<namespace>/`. A `knowledge-graph.json` an earlier version wrote there
 * is upgraded in place at open (read once, written as a snapshot, removed).
 */
export class EmbeddedKnowledgeGraphStore implements KnowledgeGraphStore {
  readonly backend = 'memory' as const
  private readonly partitions = new Map<string, KgPartition>()
  /** A fresh token per process, so a version seen before a restart never equals one after it. */
  private readonly epoch = randomUUID()
  /** Every successful change of any namespace; a partition's version is its value then, so versions never repeat. */
  private changes = 0
  private initialised: Promise<void> | undefined
  /** Writes run one after another, so the files always hold a state the memory held. */
  private readonly queue = new TaskQueue('knowledge-graph')
  private readonly logs: NamespaceLogs | undefined
  private readonly compaction = new BackgroundCompaction(
    foldEntry('fold-thread', import.meta.url), { kind: FILE_STEM, format: FORMAT, reads: READS, backend: BACKEND }, (task) => this.queue.runCompaction(task), { blocks: true, heldLogBytes: FOLD_SHARE_BYTES, wholeMaxBytes: FOLD_WHOLE_MAX_BYTES }
  )

  constructor(options: EmbeddedKnowledgeGraphOptions = {}) {
    this.logs = options.dir === undefined ? undefined : new NamespaceLogs({
      root: options.dir, name: FILE_STEM, kind: 'knowledge-graph', format: FORMAT, reads: READS, backend: BACKEND,
      ...(options.compactionFloorBytes === undefined ? {} : { compactionFloorBytes: options.compactionFloorBytes }),
      compactionCeilingBytes: options.foldLogBytes ?? FOLD_LOG_BYTES,
      legacy: { name: LEGACY_FILE, upgrade: upgradeLegacy }
    })
  }

  init(): Promise<void> {
    this.initialised ??= this.load().catch((error: unknown) => {
      this.initialised = undefined
      throw error
    })
    return this.initialised
  }

  async upsert(namespace: string, write: KgWrite): Promise<void> {
    checkNamespace(namespace)
    await this.init()
    return this.queue.run(async () => {
      const graph = this.partitions.get(namespace) ?? new KgPartition()
      const entities = write.entities ?? []
      const relations = write.relations ?? []
      const incoming = new Set(entities.map((e) => e.id))
      const missing: string[] = []
      const references: UnknownEntitiesError['references'] = []
      relations.forEach((relation, index) => {
        for (const field of ['source', 'target'] as const) {
          const id = relation[field]
          if (incoming.has(id) || graph.entities.has(id)) continue
          references.push({ index, field, id })
          if (!missing.includes(id)) missing.push(id)
        }
      })
      if (missing.length > 0) throw new UnknownEntitiesError(missing, references)
      if (entities.length === 0 && relations.length === 0) return
      await this.commit(namespace, graph, { op: 'put', entities: [...entities], relations: [...relations] })
    })
  }

  async deleteEntity(namespace: string, id: string): Promise<boolean> {
    checkNamespace(namespace)
    await this.init()
    return this.queue.run(async () => {
      const graph = this.partitions.get(namespace)
      if (!graph?.entities.has(id)) return false
      await this.commit(namespace, graph, { op: 'delete', id })
      return true
    })
  }

  async replaceDerived(namespace: string, contributions: ReadonlyMap<string, KgContribution>): Promise<KgDerivedWriteResult> {
    checkNamespace(namespace)
    await this.init()
    return this.queue.run(async () => {
      const graph = this.partitions.get(namespace) ?? new KgPartition()
      const { blocked, ...plan } = planDerivedWrite(graph.storedForDerivedWrite([...contributions.keys()], contributedIds(contributions)), contributions)
      const result: KgDerivedWriteResult = {
        written: plan.written,
        removed: { entities: plan.removeEntities.length, relations: plan.removeRelations.length },
        blocked, entityIds: touchedEntities(plan)
      }
      if (plan.written.entities + plan.written.relations + plan.removeEntities.length + plan.removeRelations.length > 0) {
        await this.commit(namespace, graph, { op: 'derive-parts', parts: plan.parts, removeEntities: plan.removeEntities, removeRelations: plan.removeRelations })
      }
      return result
    })
  }

  async derivedOf(namespace: string, docIds: readonly string[]): Promise<KgNeighbourhood> {
    return (await this.partition(namespace)).derivedOf(docIds)
  }

  async derivedPartCounts(namespace: string, docIds: readonly string[]): Promise<Map<string, number>> {
    return (await this.partition(namespace)).derivedPartCounts(docIds)
  }

  async getEntities(namespace: string, ids: readonly string[]): Promise<KgEntity[]> {
    const graph = await this.partition(namespace)
    const found = new Map<string, KgEntity>()
    for (const id of ids) {
      const entity = graph.entities.get(id)
      if (entity) found.set(id, copyEntity(entity))
    }
    return [...found.values()].sort(byId)
  }

  async count(namespace: string): Promise<{ entities: number; relations: number }> {
    const graph = await this.partition(namespace)
    return { entities: graph.entities.size, relations: graph.relations.size }
  }

  async version(namespace: string): Promise<string> {
    const graph = await this.partition(namespace)
    return `${this.epoch}:${graph === EMPTY ? 'empty' : graph.version}`
  }

  async names(namespace: string): Promise<KgEntityNames[]> {
    const graph = await this.partition(namespace)
    return graph.entities.ids().map((id) => namesIn(graph, id)).sort(byId)
  }

  async namesOf(namespace: string, ids: readonly string[]): Promise<KgEntityNames[]> {
    const graph = await this.partition(namespace)
    return [...new Set(ids)].filter((id) => graph.entities.has(id)).map((id) => namesIn(graph, id)).sort(byId)
  }

  async neighbourhood(namespace: string, ids: readonly string[], _signal?: AbortSignal, options: KgNeighbourhoodOptions = {}): Promise<KgNeighbourhood> {
    return (await this.partition(namespace)).neighbourhood(ids, options.maxNeighbours)
  }

  async searchKeywords(namespace: string, tokens: readonly string[], limit: number, options: KgKeywordOptions = {}): Promise<KgKeywordHit[]> {
    return (await this.partition(namespace)).searchKeywords(tokens, limit, options.types ? new Set(options.types) : undefined)
  }

  async namespaces(): Promise<string[]> {
    await this.init()
    return [...this.partitions].filter(([, g]) => g.entities.size > 0).map(([ns]) => ns).sort()
  }

  async dropNamespace(namespace: string): Promise<void> {
    checkNamespace(namespace)
    await this.init()
    return this.queue.run(async () => {
      if (!this.partitions.has(namespace)) return
      await this.compaction.finished(namespace)
      // `default` shares the root folder, so only its files go; another namespace's whole folder goes
      await this.logs?.drop(namespace)
      this.partitions.delete(namespace)
      this.changes++
    })
  }

  health(): Promise<BackendHealth> {
    return probeHealth(BACKEND, async () => {
      await this.init()
      const failed = this.compaction.lastError
      return failed ? `last compaction failed: ${String(failed)}` : undefined
    })
  }

  async close(): Promise<void> {
    // a write may start a compaction, and a compaction queues a step, so wait until neither moves
    let queue: Promise<unknown> | undefined
    while (queue !== this.queue.tail || !this.compaction.idle) {
      queue = this.queue.tail
      await queue.catch(() => undefined)
      await this.compaction.settled()
    }
    await this.logs?.close()
  }

  /** The namespace's partition, or an empty one (never stored) when it holds nothing. */
  private async partition(namespace: string): Promise<KgPartition> {
    checkNamespace(namespace)
    await this.init()
    return this.partitions.get(namespace) ?? EMPTY
  }

  /**
   * Logs the change (durable before this resolves), then applies it in memory; a change that cannot be
   * logged changes nothing. A log that outgrew its snapshot is compacted off the write queue (`BackgroundCompaction`).
   */
  private async commit(namespace: string, graph: KgPartition, record: KgRecord): Promise<void> {
    const log = this.logs ? await this.logs.get(namespace) : undefined
    await log?.append(encode(record))
    graph.apply(record)
    this.partitions.set(namespace, graph)
    graph.version = ++this.changes
    if (log?.needsCompaction()) this.compaction.start(namespace, log)
  }

  private async load(): Promise<void> {
    if (!this.logs) return
    this.partitions.clear()
    for (const [namespace, { snapshot, records }] of await this.logs.openAll()) {
      if (!snapshot && records.length === 0) continue
      const graph = await runStepsYielding(replay(namespace, snapshot, records))
      graph.repackParts()
      this.partitions.set(namespace, graph)
      // a compaction a crash interrupted is finished now
      const log = await this.logs.get(namespace)
      if (log.pendingFold) this.compaction.start(namespace, log)
    }
  }
}

/** The namespace's graph from its snapshot and the records since, a step a row and a record (`load-steps.ts`). */
function* replay(namespace: string, snapshot: SnapshotPayload | undefined, records: readonly Buffer[]): LoadSteps<KgPartition> {
  try {
    const graph = !snapshot ? new KgPartition()
      : isCompactPayload(snapshot) ? yield* KgPartition.fromCompactParts(compactParts(snapshot.blocks()))
      : KgPartition.from(JSON.parse(snapshot.bytes().toString('utf8')) as Persisted)
    for (const record of records) {
      graph.apply(JSON.parse(record.toString('utf8')) as KgRecord)
      yield
    }
    return graph
  } catch (error) {
    // the checksums passed, so the bytes are what was written: a payload this build cannot read
    throw new UnexpectedResponseError(BACKEND, `knowledge graph of namespace ${namespace} is unreadable: ${errorMessage(error)}`, { cause: error })
  }
}

/** The next snapshot of a namespace from its last one (held or on disk) and the records since: what `load` builds, as a payload (`fold-thread.ts`). */
export function foldKnowledgeGraph(snapshot: SnapshotPayload | Buffer | undefined, records: Buffer[]): Uint8Array {
  return encodeCompactGraph(runSteps(replay('(fold)', Buffer.isBuffer(snapshot) ? new HeldPayload(snapshot) : snapshot, records)).toCompact())
}

/** A compact snapshot's derived entity row, as `fromCompact` holds it (the row's slots are taken, not copied). */
export function restoreEntity(row: CompactEntity, strings: CompactStrings, eachDoc?: (doc: number) => void, parts?: PartStore): DerivedEntity {
  const [id, fallbackName, name, slots] = row
  const derived = new DerivedEntity(id, fallbackName, parts)
  derived.restore(slots, strings, name, eachDoc)
  return derived
}

/** A compact snapshot's derived relation row; `canonical` gives the string of each end the caller holds. */
export function restoreRelation(
  row: CompactRelation, strings: CompactStrings, canonical: (id: string) => string, eachDoc?: (doc: number) => void, parts?: PartStore
): DerivedRelation {
  const [id, source, target, type, slots] = row
  const typeName = strings.types[type]
  if (typeName === undefined) throw new RangeError(`relation ${id}: no type ${type} in the snapshot's table`)
  const derived = new DerivedRelation(id, canonical(source), canonical(target), typeName, parts)
  derived.restore(slots, strings, undefined, eachDoc)
  return derived
}

export function compactEntityRow(derived: DerivedEntity, tables: CompactTables): CompactEntity {
  return [derived.id, derived.fallbackName, derived.name, derived.compactSlots(tables)]
}

/** The type's table index is taken before the parts' documents', as every snapshot since format 2 numbered them. */
export function compactRelationRow(derived: DerivedRelation, tables: CompactTables): CompactRelation {
  const type = tables.type(derived.type)
  return [derived.id, derived.source, derived.target, type, derived.compactSlots(tables)]
}

/** A legacy `knowledge-graph.json` as a snapshot payload: the same graph, checked for its format, in the compact form. */
function upgradeLegacy(bytes: Buffer): Buffer {
  const data = JSON.parse(bytes.toString('utf8')) as Persisted
  if (data.format !== 1) throw new Error(`unknown format ${String(data.format)}`)
  if (!Array.isArray(data.entities) || !Array.isArray(data.relations)) throw new Error('entities and relations must be arrays')
  return encodeCompactGraph(KgPartition.from(data).toCompact())
}

/**
 * The `limit` best (score descending, id ascending) entries, without sorting them all: scores are small
 * integers, so entries are bucketed by score and only the buckets that reach the limit are sorted.
 */
function selectBest(buckets: ReadonlyMap<number, string[]>, limit: number): Array<[string, number]> {
  const best: Array<[string, number]> = []
  for (const score of [...buckets.keys()].sort((a, b) => b - a)) {
    if (best.length >= limit) break
    const ids = buckets.get(score)!
    const need = limit - best.length
    const chosen = ids.length <= need ? ids.sort() : smallest(ids, need)
    for (const id of chosen) best.push([id, score])
  }
  return best
}

/** The `k` smallest strings in ascending order, by a bounded insertion into a sorted array (k is small). */
function smallest(ids: readonly string[], k: number): string[] {
  const kept: string[] = []
  for (const id of ids) {
    if (kept.length === k && id >= kept[k - 1]!) continue
    let lo = 0
    let hi = kept.length
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (kept[mid]! < id) lo = mid + 1
      else hi = mid
    }
    kept.splice(lo, 0, id)
    if (kept.length > k) kept.pop()
  }
  return kept
}

const relationItem = (held: HeldRelation): KgRelation => (held instanceof DerivedRelation ? held.item() : held)

function copyEntity(entity: KgEntity): KgEntity {
  const copy: KgEntity = { ...entity, aliases: [...entity.aliases], source_chunk_ids: [...entity.source_chunk_ids] }
  if (entity.derived_from) copy.derived_from = entity.derived_from.map((p) => ({ ...p, chunk_ids: [...p.chunk_ids] }))
  return copy
}

function copyRelation(relation: KgRelation): KgRelation {
  const copy: KgRelation = { ...relation }
  if (relation.derived_from) copy.derived_from = relation.derived_from.map((p) => ({ ...p, chunk_ids: [...p.chunk_ids] }))
  return copy
}

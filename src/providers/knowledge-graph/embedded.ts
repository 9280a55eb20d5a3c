import { randomUUID } from 'node:crypto'
import { mkdir, open, readFile, rename } from 'node:fs/promises'
import { join } from 'node:path'
import { analyze } from '../../text/cjk-analyzer.js'
import { backendName, probeHealth, type BackendHealth } from '../errors.js'
import {
  UnknownEntitiesError,
  type KgEntity,
  type KgEntityNames,
  type KgKeywordHit,
  type KgNeighbourhood,
  type KgRelation,
  type KgWrite,
  type KnowledgeGraphStore
} from './port.js'

export interface EmbeddedKnowledgeGraphOptions {
  /** Directory holding `knowledge-graph.json`; without it the graph lives in memory only. */
  dir?: string
}

interface Persisted {
  format: 1
  entities: KgEntity[]
  relations: KgRelation[]
}

const FILE_NAME = 'knowledge-graph.json'

const byId = (a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

/**
 * The knowledge graph in process: entities and relations in maps, adjacency and a token index beside them,
 * the whole graph written to one JSON file (temp file, fsync, rename) after every change.
 */
export class EmbeddedKnowledgeGraphStore implements KnowledgeGraphStore {
  readonly backend = 'memory' as const
  private readonly entities = new Map<string, KgEntity>()
  private readonly relations = new Map<string, KgRelation>()
  /** Entity id -> ids of the relations that touch it. */
  private readonly adjacency = new Map<string, Set<string>>()
  /**
   * Token -> (entity slot -> 2 when the name has the token, else 1 for the description): the keyword score
   * of `searchKeywords` is the sum of these over the query's tokens. Slots are small integers, so a query
   * adds scores in a typed array rather than a map keyed by id.
   */
  private readonly tokenIndex = new Map<string, Map<number, number>>()
  private readonly entityTokens = new Map<string, string[]>()
  private readonly slotOf = new Map<string, number>()
  private readonly slotIds: Array<string | undefined> = []
  private readonly freeSlots: number[] = []
  /** A fresh token per process, so a version seen before a restart never equals one after it. */
  private readonly epoch = randomUUID()
  private changes = 0
  private initialised: Promise<void> | undefined
  /** Writes run one after another, so the file always holds a state the memory held. */
  private queue: Promise<unknown> = Promise.resolve()

  constructor(private readonly options: EmbeddedKnowledgeGraphOptions = {}) {}

  init(): Promise<void> {
    this.initialised ??= this.load().catch((error: unknown) => {
      this.initialised = undefined
      throw error
    })
    return this.initialised
  }

  async upsert(write: KgWrite): Promise<void> {
    await this.init()
    return this.serialise(async () => {
      const entities = write.entities ?? []
      const relations = write.relations ?? []
      const incoming = new Set(entities.map((e) => e.id))
      const missing: string[] = []
      const references: UnknownEntitiesError['references'] = []
      relations.forEach((relation, index) => {
        for (const field of ['source', 'target'] as const) {
          const id = relation[field]
          if (incoming.has(id) || this.entities.has(id)) continue
          references.push({ index, field, id })
          if (!missing.includes(id)) missing.push(id)
        }
      })
      if (missing.length > 0) throw new UnknownEntitiesError(missing, references)
      if (entities.length === 0 && relations.length === 0) return

      const undo: Array<() => void> = []
      for (const entity of entities) {
        const previous = this.entities.get(entity.id)
        this.putEntity(copyEntity(entity))
        undo.push(() => (previous ? this.putEntity(previous) : this.removeEntityOnly(entity.id)))
      }
      for (const relation of relations) {
        const previous = this.relations.get(relation.id)
        this.putRelation({ ...relation })
        undo.push(() => {
          this.removeRelation(relation.id)
          if (previous) this.putRelation(previous)
        })
      }
      await this.commit(undo)
    })
  }

  async deleteEntity(id: string): Promise<boolean> {
    await this.init()
    return this.serialise(async () => {
      const entity = this.entities.get(id)
      if (!entity) return false
      const removed = [...(this.adjacency.get(id) ?? [])].map((rid) => this.relations.get(rid)!)
      for (const relation of removed) this.removeRelation(relation.id)
      this.removeEntityOnly(id)
      await this.commit([
        () => {
          this.putEntity(entity)
          for (const relation of removed) this.putRelation(relation)
        }
      ])
      return true
    })
  }

  async getEntities(ids: readonly string[]): Promise<KgEntity[]> {
    await this.init()
    const found = new Map<string, KgEntity>()
    for (const id of ids) {
      const entity = this.entities.get(id)
      if (entity) found.set(id, copyEntity(entity))
    }
    return [...found.values()].sort(byId)
  }

  async count(): Promise<{ entities: number; relations: number }> {
    await this.init()
    return { entities: this.entities.size, relations: this.relations.size }
  }

  async version(): Promise<string> {
    await this.init()
    return `${this.epoch}:${this.changes}`
  }

  async names(): Promise<KgEntityNames[]> {
    await this.init()
    return [...this.entities.values()]
      .map((e) => ({ id: e.id, name: e.name, aliases: [...e.aliases] }))
      .sort(byId)
  }

  async neighbourhood(ids: readonly string[]): Promise<KgNeighbourhood> {
    await this.init()
    const entityIds = new Set<string>()
    const relationIds = new Set<string>()
    for (const id of ids) {
      if (!this.entities.has(id)) continue
      entityIds.add(id)
      for (const rid of this.adjacency.get(id) ?? []) {
        relationIds.add(rid)
        const relation = this.relations.get(rid)!
        entityIds.add(relation.source)
        entityIds.add(relation.target)
      }
    }
    return {
      entities: [...entityIds].map((id) => copyEntity(this.entities.get(id)!)).sort(byId),
      relations: [...relationIds].map((rid) => ({ ...this.relations.get(rid)! })).sort(byId)
    }
  }

  async searchKeywords(tokens: readonly string[], limit: number): Promise<KgKeywordHit[]> {
    await this.init()
    const query = [...new Set(tokens)]
    if (query.length === 0 || limit <= 0) return []
    const scores = new Int32Array(this.slotIds.length)
    const touched: number[] = []
    for (const token of query) {
      for (const [slot, weight] of this.tokenIndex.get(token) ?? []) {
        if (scores[slot] === 0) touched.push(slot)
        scores[slot] = scores[slot]! + weight
      }
    }
    const buckets = new Map<number, string[]>()
    for (const slot of touched) {
      const score = scores[slot]!
      let bucket = buckets.get(score)
      if (!bucket) buckets.set(score, (bucket = []))
      bucket.push(this.slotIds[slot]!)
    }
    return selectBest(buckets, limit).map(([id, score]) => ({ entity: copyEntity(this.entities.get(id)!), score }))
  }

  health(): Promise<BackendHealth> {
    return probeHealth(backendName('knowledge-graph', 'memory'), () => this.init())
  }

  async close(): Promise<void> {
    await this.queue.catch(() => undefined)
  }

  private serialise<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(task, task)
    this.queue = run.catch(() => undefined)
    return run
  }

  /** Persists the current state; if that fails, undoes the in-memory change (newest first) and rethrows. */
  private async commit(undo: Array<() => void>): Promise<void> {
    try {
      await this.persist()
    } catch (error) {
      for (const step of undo.reverse()) step()
      throw error
    }
    this.changes++
  }

  private async load(): Promise<void> {
    if (!this.options.dir) return
    let text: string
    try {
      text = await readFile(join(this.options.dir, FILE_NAME), 'utf8')
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return
      throw error
    }
    const data = JSON.parse(text) as Persisted
    if (data.format !== 1) throw new Error(`${FILE_NAME}: unknown format ${String(data.format)}`)
    this.entities.clear()
    this.relations.clear()
    this.adjacency.clear()
    this.tokenIndex.clear()
    this.entityTokens.clear()
    this.slotOf.clear()
    this.slotIds.length = 0
    this.freeSlots.length = 0
    for (const entity of data.entities) this.putEntity(entity)
    for (const relation of data.relations) this.putRelation(relation)
  }

  private async persist(): Promise<void> {
    const dir = this.options.dir
    if (!dir) return
    await mkdir(dir, { recursive: true })
    const file = join(dir, FILE_NAME)
    const tmp = `${file}.${process.pid}.${randomUUID()}.tmp`
    const data: Persisted = {
      format: 1,
      entities: [...this.entities.values()].sort(byId),
      relations: [...this.relations.values()].sort(byId)
    }
    const handle = await open(tmp, 'w')
    try {
      await handle.writeFile(JSON.stringify(data))
      await handle.sync()
    } finally {
      await handle.close()
    }
    await rename(tmp, file)
  }

  private putEntity(entity: KgEntity): void {
    this.unindexTokens(entity.id)
    this.entities.set(entity.id, entity)
    let slot = this.slotOf.get(entity.id)
    if (slot === undefined) {
      slot = this.freeSlots.pop() ?? this.slotIds.length
      this.slotOf.set(entity.id, slot)
      this.slotIds[slot] = entity.id
    }
    const name = new Set(analyze(entity.name))
    const weights = new Map<string, number>()
    for (const token of name) weights.set(token, 2)
    for (const token of analyze(entity.description ?? '')) if (!name.has(token)) weights.set(token, 1)
    for (const [token, weight] of weights) {
      let postings = this.tokenIndex.get(token)
      if (!postings) this.tokenIndex.set(token, (postings = new Map()))
      postings.set(slot, weight)
    }
    this.entityTokens.set(entity.id, [...weights.keys()])
  }

  /** Removes the entity alone; its relations are the caller's business. */
  private removeEntityOnly(id: string): void {
    this.unindexTokens(id)
    this.entities.delete(id)
    const slot = this.slotOf.get(id)
    if (slot !== undefined) {
      this.slotOf.delete(id)
      this.slotIds[slot] = undefined
      this.freeSlots.push(slot)
    }
    if (this.adjacency.get(id)?.size === 0) this.adjacency.delete(id)
  }

  private unindexTokens(id: string): void {
    const tokens = this.entityTokens.get(id)
    const slot = this.slotOf.get(id)
    if (!tokens || slot === undefined) return
    for (const token of tokens) {
      const postings = this.tokenIndex.get(token)
      postings?.delete(slot)
      if (postings?.size === 0) this.tokenIndex.delete(token)
    }
    this.entityTokens.delete(id)
  }

  private putRelation(relation: KgRelation): void {
    this.removeRelation(relation.id)
    this.relations.set(relation.id, relation)
    for (const end of [relation.source, relation.target]) {
      let ids = this.adjacency.get(end)
      if (!ids) this.adjacency.set(end, (ids = new Set()))
      ids.add(relation.id)
    }
  }

  private removeRelation(id: string): void {
    const relation = this.relations.get(id)
    if (!relation) return
    this.relations.delete(id)
    for (const end of [relation.source, relation.target]) {
      const ids = this.adjacency.get(end)
      ids?.delete(id)
      if (ids?.size === 0) this.adjacency.delete(end)
    }
  }
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

function copyEntity(entity: KgEntity): KgEntity {
  return { ...entity, aliases: [...entity.aliases], source_chunk_ids: [...entity.source_chunk_ids] }
}

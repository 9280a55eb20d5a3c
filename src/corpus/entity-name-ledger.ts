/**
 * What the entity-names applier knows of each namespace's graph between its runs (issue 44: a run that reads every
 * name costs what the namespace holds): each entity's record ids and each record's text with how many entities hold
 * it, as of its last run, and the entities the graph's writes touched since. A run then reads the names of those
 * entities only. Held in the process, so it is right only for a graph no other process writes (the embedded store);
 * a namespace it does not know (after a start-up, a drop, a failed run, a rebuild) gets a whole reconcile, which
 * builds it again.
 */
import { entityNameKey, entityNameRecordId } from '../kernel/entity-names.js'
import type { KgEntityNames } from '../providers/knowledge-graph/port.js'

/** One namespace's names: an entity's record ids (one id alone as a string), each record's text and holder count. */
interface NamespaceNames {
  byEntity: Map<string, string | string[]>
  records: Map<string, { text: string; holders: number }>
}

/** Every distinct name and alias text of one entity, by record id. */
export function recordsOf(entity: { name: string; aliases: readonly string[] }): Map<string, string> {
  const texts = new Map<string, string>()
  for (const raw of [entity.name, ...entity.aliases]) {
    const key = entityNameKey(raw)
    if (key !== '') texts.set(entityNameRecordId(key), key)
  }
  return texts
}

const idsOf = (held: string | string[] | undefined): readonly string[] => (held === undefined ? [] : typeof held === 'string' ? [held] : held)

export class EntityNameLedger {
  readonly #names = new Map<string, NamespaceNames>()
  /** Per namespace, the entities touched since its last run began (`all`: not known, a whole reconcile is due). */
  readonly #touched = new Map<string, Set<string> | 'all'>()

  /** After a graph write: these entities may have been created, renamed or removed. */
  touch(namespace: string, entityIds: Iterable<string>): void {
    const touched = this.#touched.get(namespace)
    if (touched === 'all') return
    const set = touched ?? new Set<string>()
    for (const id of entityIds) set.add(id)
    this.#touched.set(namespace, set)
  }

  /** What the namespace holds is not known any more (a drop, a write whose entities are unknown, a failed run, a rebuild). */
  forget(namespace: string): void {
    this.#names.delete(namespace)
    this.#touched.set(namespace, 'all')
  }

  /**
   * At a run's start: the entities to read again, or `all` when the run must read the whole namespace (one not known).
   * Writes after this point are the next run's.
   */
  take(namespace: string): ReadonlySet<string> | 'all' {
    const touched = this.#touched.get(namespace)
    this.#touched.delete(namespace)
    return touched === 'all' || !this.#names.has(namespace) ? 'all' : touched ?? new Set()
  }

  /** The whole namespace's names, as a whole reconcile read them: what every record wants, by id. */
  rebuild(namespace: string, entities: Iterable<KgEntityNames>): Map<string, string> {
    const names: NamespaceNames = { byEntity: new Map(), records: new Map() }
    for (const entity of entities) this.#set(names, entity.id, recordsOf(entity))
    this.#names.set(namespace, names)
    return new Map([...names.records].map(([id, { text }]) => [id, text]))
  }

  /**
   * The touched entities' names as they are now (an entity absent: removed): the records whose holders changed
   * between none and some, each with its text and whether any entity holds it now.
   */
  update(namespace: string, touched: ReadonlySet<string>, current: readonly KgEntityNames[]): Map<string, { text: string; wanted: boolean }> {
    const names = this.#names.get(namespace)
    if (!names) throw new Error(`entity names of namespace ${namespace} are not known: a whole reconcile is due`)
    const now = new Map(current.map((e) => [e.id, e]))
    const changed = new Map<string, string>()
    for (const id of touched) {
      for (const record of idsOf(names.byEntity.get(id))) changed.set(record, names.records.get(record)!.text)
      const entity = now.get(id)
      const records = entity ? recordsOf(entity) : new Map<string, string>()
      for (const [record, text] of records) changed.set(record, text)
      this.#set(names, id, records)
    }
    return new Map([...changed].map(([record, text]) => [record, { text, wanted: names.records.has(record) }]))
  }

  /** Replaces an entity's records, counting holders; a record no entity holds goes. */
  #set(names: NamespaceNames, entityId: string, records: ReadonlyMap<string, string>): void {
    for (const record of idsOf(names.byEntity.get(entityId))) {
      const held = names.records.get(record)!
      if (--held.holders === 0) names.records.delete(record)
    }
    for (const [record, text] of records) {
      const held = names.records.get(record)
      if (held) held.holders += 1
      else names.records.set(record, { text, holders: 1 })
    }
    const ids = [...records.keys()]
    if (ids.length === 0) names.byEntity.delete(entityId)
    else names.byEntity.set(entityId, ids.length === 1 ? ids[0]! : ids)
  }
}

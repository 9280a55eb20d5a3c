/**
 * The derived graph's bookkeeping, shared by every store: which ids a set of contributions touches, and what the
 * stored state of those ids becomes (`replaceDerived` in `port.ts`). Pure: a store reads the touched ids, calls
 * `planDerivedWrite`, and applies the plan in one atomic write.
 */
import { deriveRelationId, type KgContribution, type KgDerivation, type KgEntity, type KgRelation } from './port.js'

/** Prefix of every derived id: an imported id may look the same, and then wins (`blocked`). */
const DERIVED_ID_PREFIX = 'd:'

export const derivedEntityId = (key: string): string => `${DERIVED_ID_PREFIX}${key}`

export const derivedRelationId = (relation: { source: string; target: string; type: string }): string =>
  deriveRelationId({ source: derivedEntityId(relation.source), target: derivedEntityId(relation.target), type: relation.type })

/** The derived ids the contributions name. */
export function contributedIds(contributions: ReadonlyMap<string, KgContribution>): { entities: string[]; relations: string[] } {
  const entities = new Set<string>()
  const relations = new Set<string>()
  for (const contribution of contributions.values()) {
    for (const e of contribution.entities) entities.add(derivedEntityId(e.key))
    for (const r of contribution.relations) relations.add(derivedRelationId(r))
  }
  return { entities: [...entities].sort(compare), relations: [...relations].sort(compare) }
}

/** What to write: entities and relations to put (whole), ids to remove, ids an imported item holds. */
export interface DerivedPlan {
  entities: KgEntity[]
  relations: KgRelation[]
  removeEntities: string[]
  removeRelations: string[]
  blocked: string[]
  /** The same puts as the written documents' parts alone (the items built from them and the stored items' other parts). */
  parts: DerivedParts
}

/** A derived write as its documents' parts of each item it puts (the other documents' parts are the stored item's). */
export interface DerivedParts {
  docs: string[]
  entities: { id: string; name: string; written: KgDerivation[] }[]
  relations: { id: string; source: string; target: string; type: string; written: KgDerivation[] }[]
}

/**
 * What a store holds of one id a derived write touches, as the planner reads it: whether an imported item holds the
 * id, the written documents' parts of a derived one and how many parts it holds in all. A store that keeps an item's
 * parts by document gives this without reading the other documents' parts.
 */
export interface StoredDerivedItem {
  id: string
  imported: boolean
  /** An entity's name, a relation's ends and type, as stored. */
  name?: string
  source?: string
  target?: string
  type?: string
  /** The parts of the written documents (those of `contributions`). */
  replaced: KgDerivation[]
  /** How many parts of other documents it holds. */
  others: number
}

/** A derived write's plan without whole items: its size is what the write wrote. */
export type DerivedWritePlan = Omit<DerivedPlan, 'entities' | 'relations'> & { written: { entities: number; relations: number } }

/**
 * The plan that turns what a store holds of the ids the documents of `contributions` touch (`StoredDerivedItem`: those
 * they contributed to before and those they contribute now) into the state `replaceDerived` promises, as the written
 * documents' parts of each item it puts (no whole items). Only what changes is in the plan.
 */
export function planDerivedWrite(
  stored: { entities: readonly StoredDerivedItem[]; relations: readonly StoredDerivedItem[] },
  contributions: ReadonlyMap<string, KgContribution>
): DerivedWritePlan {
  const docs = new Set(contributions.keys())
  const storedEntities = new Map(stored.entities.map((e) => [e.id, e]))
  const storedRelations = new Map(stored.relations.map((r) => [r.id, r]))
  type Slot = { others: number; replaced: KgDerivation[]; written: KgDerivation[] }
  const entityParts = new Map<string, Slot & { name: string }>()
  const relationParts = new Map<string, Slot & { source: string; target: string; type: string }>()
  // what other documents contribute stays; what these documents contributed before is compared with what they do now
  for (const e of stored.entities) {
    if (!e.imported) entityParts.set(e.id, { name: e.name!, others: e.others, replaced: e.replaced, written: [] })
  }
  for (const r of stored.relations) {
    if (!r.imported) relationParts.set(r.id, { source: r.source!, target: r.target!, type: r.type!, others: r.others, replaced: r.replaced, written: [] })
  }
  const blocked = new Set<string>()
  const imported = (id: string, map: ReadonlyMap<string, StoredDerivedItem>) => {
    const item = map.get(id)
    if (item?.imported) blocked.add(id)
    return item?.imported === true
  }
  for (const [docId, contribution] of [...contributions].sort(([a], [b]) => compare(a, b))) {
    for (const e of contribution.entities) {
      const id = derivedEntityId(e.key)
      if (imported(id, storedEntities)) continue
      const slot = entityParts.get(id) ?? { name: e.name, others: 0, replaced: [], written: [] }
      slot.written.push({
        doc_id: docId, chunk_ids: [...e.chunk_ids], count: e.mentions, name: e.name,
        ...(e.type ? { type: e.type } : {}), ...(e.description ? { description: e.description } : {}), ...(e.llm ? { llm: true as const } : {})
      })
      entityParts.set(id, slot)
    }
    for (const r of contribution.relations) {
      const id = derivedRelationId(r)
      const source = derivedEntityId(r.source)
      const target = derivedEntityId(r.target)
      if (imported(id, storedRelations) || imported(source, storedEntities) || imported(target, storedEntities)) continue
      const slot = relationParts.get(id) ?? { source, target, type: r.type, others: 0, replaced: [], written: [] }
      slot.written.push({ doc_id: docId, chunk_ids: [...r.chunk_ids], count: r.count, ...(r.llm ? { llm: true as const } : {}) })
      relationParts.set(id, slot)
    }
  }

  // An item is built from its parts alone (`entityOf`, `relationOf`), so it is unchanged exactly when these
  // documents' parts are: comparing those keeps a write's cost to what it wrote, however many documents an item has.
  const plan: DerivedWritePlan = {
    removeEntities: [], removeRelations: [], blocked: [...blocked].sort(compare), written: { entities: 0, relations: 0 },
    parts: { docs: [...docs].sort(compare), entities: [], relations: [] }
  }
  for (const [id, { name, others, replaced, written }] of [...entityParts].sort(([a], [b]) => compare(a, b))) {
    if (others + written.length === 0) {
      if (storedEntities.has(id)) plan.removeEntities.push(id)
      continue
    }
    if (storedEntities.has(id) && sameParts(replaced, written)) continue
    plan.parts.entities.push({ id, name, written: byDoc(written) })
  }
  const remaining = new Set([...entityParts].filter(([, slot]) => slot.others + slot.written.length > 0).map(([id]) => id))
  for (const [id, { source, target, type, others, replaced, written }] of [...relationParts].sort(([a], [b]) => compare(a, b))) {
    // an end this write does not touch stays as it is; a touched one must keep a part
    const ends = (end: string) => remaining.has(end) || !entityParts.has(end)
    if (others + written.length === 0 || !ends(source) || !ends(target)) {
      if (storedRelations.has(id)) plan.removeRelations.push(id)
      continue
    }
    if (storedRelations.has(id) && sameParts(replaced, written)) continue
    plan.parts.relations.push({ id, source, target, type, written: byDoc(written) })
  }
  plan.written = { entities: plan.parts.entities.length, relations: plan.parts.relations.length }
  return plan
}

/** The derived entities a plan puts or removes, ascending (`KgDerivedWriteResult.entityIds`). */
export function touchedEntities(plan: Pick<DerivedWritePlan, 'parts' | 'removeEntities'>): string[] {
  return [...plan.parts.entities.map((e) => e.id), ...plan.removeEntities].sort(compare)
}

export function relationOf(id: string, source: string, target: string, type: string, parts: KgDerivation[]): KgRelation {
  return { id, source, target, type, weight: parts.reduce((sum, p) => sum + p.count, 0), derived_from: byDoc(parts) }
}

/** Whether these documents contribute to an item exactly what they did before (as canonical JSON, in document order). */
function sameParts(before: readonly KgDerivation[], now: readonly KgDerivation[]): boolean {
  return before.length === now.length && canonical(byDoc([...before])) === canonical(byDoc([...now]))
}

export function entityOf(id: string, storedName: string, parts: KgDerivation[]): KgEntity {
  const ordered = byDoc(parts)
  const first = <K extends 'name' | 'type' | 'description'>(key: K) => ordered.find((p) => p[key] !== undefined)?.[key]
  const chunkIds = [...new Set(ordered.flatMap((p) => p.chunk_ids))]
  const type = first('type')
  const description = first('description')
  return {
    id,
    name: first('name') ?? storedName,
    aliases: [],
    ...(type ? { type } : {}),
    ...(description ? { description } : {}),
    source_chunk_ids: chunkIds,
    derived_from: ordered
  }
}

const byDoc = (parts: readonly KgDerivation[]) => [...parts].sort((a, b) => compare(a.doc_id, b.doc_id))

/** Parts compare as canonical JSON (keys sorted), so a re-derivation that changed nothing writes nothing. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => compare(a, b))) : v)
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

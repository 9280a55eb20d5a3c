/**
 * How the Neo4j knowledge graph keeps a derived item's parts: one part node per contributing document
 * (`KgEntityPart` / `KgRelationPart {ns, item, doc, chunk_ids, count, name?, type?, description?, llm?}`) beside the
 * item, which holds how many parts it has (`derived_parts`), its fields (an entity's name, type and description, as
 * the first part in document order that has each gives them) and which document gives each field. A derived write
 * creates and deletes the parts of the documents it writes and sets the item's few properties: nothing it writes
 * grows with the documents citing the item. A read builds the item from its parts (`entityOf`, `relationOf`).
 *
 * A version before this kept the parts as one JSON property (`derived_json`) beside their documents
 * (`derived_docs`); such an item is read as it is and turned into parts by the first derived write that changes it.
 */
import { analyze } from '../../kernel/cjk-analyzer.js'
import { entityOf, relationOf, type StoredDerivedItem } from './derived.js'
import type { KgDerivation, KgEntity, KgRelation } from './port.js'

const FIELDS = ['name', 'type', 'description'] as const
type Field = (typeof FIELDS)[number]
/** The document whose part gives each field of a derived entity (null: no part has it). */
export type Givers = Record<Field, string | null>

/** Cypher projection of a part node. */
export const PART = (v: string) => `${v} {.doc, .chunk_ids, .count, .name, .type, .description, .llm}`

export function partFromMap(value: unknown): KgDerivation {
  const m = value as Record<string, unknown>
  const part: KgDerivation = { doc_id: String(m.doc), chunk_ids: ((m.chunk_ids as unknown[] | null) ?? []).map(String), count: Number(m.count) }
  for (const key of FIELDS) if (m[key] != null) part[key] = String(m[key])
  if (m.llm === true) part.llm = true
  return part
}

export function partRow(ns: string, item: string, part: KgDerivation): Record<string, unknown> {
  return {
    ns, item, doc: part.doc_id, chunk_ids: [...part.chunk_ids], count: part.count,
    name: part.name ?? null, type: part.type ?? null, description: part.description ?? null, llm: part.llm ?? null
  }
}

/** An entity as the store reads it back: old form (`derived_json`), parts (`derived_parts` and its part nodes), or imported. */
export function entityFromMap(m: Record<string, unknown>, parts: readonly unknown[] | null | undefined): KgEntity {
  if (m.derived_json == null && m.derived_parts != null) return entityOf(String(m.id), String(m.name), (parts ?? []).map(partFromMap))
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

export function relationFromMap(m: Record<string, unknown>, source: unknown, target: unknown, parts?: readonly unknown[] | null): KgRelation {
  if (m.derived_json == null && m.derived_parts != null) {
    return relationOf(String(m.id), String(source), String(target), String(m.type), (parts ?? []).map(partFromMap))
  }
  const relation: KgRelation = { id: String(m.id), source: String(source), target: String(target), type: String(m.type), weight: Number(m.weight ?? 1) }
  if (m.description != null) relation.description = String(m.description)
  if (m.derived_json != null) relation.derived_from = JSON.parse(String(m.derived_json)) as KgDerivation[]
  return relation
}

/**
 * A stored item a derived write touches, as its first read gives it: `all` holds every part of an item of the old form
 * (or of none: a new item), `replaced` the written documents' parts of an item kept as parts, with their nodes' ids.
 */
export interface StoredPartsItem {
  id: string
  imported: boolean
  /** Old form: every part (it is turned into part nodes when the write changes it). */
  all?: KgDerivation[]
  /** Kept as parts: how many it has, and those of the written documents with their element ids. */
  count?: number
  replaced: Array<{ element: string; part: KgDerivation }>
  name?: string
  type?: string
  description?: string
  givers?: Givers
  weight?: number
  source?: string
  target?: string
  relationType?: string
}

/** What the planner needs of a stored item (`planDerivedWrite`). */
export function plannerView(item: StoredPartsItem, docs: ReadonlySet<string>): StoredDerivedItem {
  const base = { id: item.id, imported: item.imported, name: item.name, source: item.source, target: item.target, type: item.relationType }
  if (item.imported) return { ...base, replaced: [], others: 0 }
  if (item.all) {
    const replaced = item.all.filter((p) => docs.has(p.doc_id))
    return { ...base, replaced, others: item.all.length - replaced.length }
  }
  return { ...base, replaced: item.replaced.map((r) => r.part), others: (item.count ?? 0) - item.replaced.length }
}

/** The first document, in document order, whose part has each field, among `parts`. */
export function giversOf(parts: readonly KgDerivation[]): Givers {
  const givers: Givers = { name: null, type: null, description: null }
  for (const key of FIELDS) {
    for (const p of parts) if (p[key] !== undefined && (givers[key] === null || p.doc_id < givers[key]!)) givers[key] = p.doc_id
  }
  return givers
}

/**
 * An entity's fields after a write replaced the parts of `docs` by `written`, from what it held (`stored`), reading no
 * other part: a field's document changes only to a written one before it, unless the written documents held the field
 * and lost it; those fields are named in `rescan` (the first other part with the field must be read).
 */
export function nextGivers(
  stored: { givers: Givers }, docs: ReadonlySet<string>, written: readonly KgDerivation[]
): { givers: Givers; rescan: Field[] } {
  const givers: Givers = { ...stored.givers }
  const rescan: Field[] = []
  for (const key of FIELDS) {
    const first = written.filter((p) => p[key] !== undefined).map((p) => p.doc_id).sort()[0] ?? null
    const current = stored.givers[key]
    if (current === null || !docs.has(current)) givers[key] = current === null || (first !== null && first < current) ? first : current
    else if (first !== null && first <= current) givers[key] = first
    else {
      givers[key] = first
      rescan.push(key)
    }
  }
  return { givers, rescan }
}

/** The entity node of a derived entity kept as parts: its fields, tokens, part count and the documents giving its fields. */
export function derivedEntityRow(
  ns: string, id: string, fields: { name: string; type?: string; description?: string }, count: number, givers: Givers
): Record<string, unknown> {
  const nameTokens = [...new Set(analyze(fields.name))]
  const descriptionTokens = [...new Set(analyze(fields.description ?? ''))]
  return {
    ns, id, name: fields.name, aliases: [], type: fields.type ?? null, description: fields.description ?? null, source: null, source_chunk_ids: [],
    name_tokens: nameTokens, description_tokens: descriptionTokens, kw: [...new Set([...nameTokens, ...descriptionTokens])].join(' '),
    derived_parts: count, derived_name_doc: givers.name, derived_type_doc: givers.type, derived_description_doc: givers.description
  }
}

export function derivedRelationRow(ns: string, id: string, type: string, weight: number, count: number): Record<string, unknown> {
  return { ns, id, type, description: null, weight, derived_parts: count }
}

export { FIELDS as DERIVED_FIELDS, type Field as DerivedField }

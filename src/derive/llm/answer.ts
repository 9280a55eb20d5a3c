/**
 * What an LLM's extraction answers for one chunk, checked, and what a document's chunks then contribute to the
 * derived graph: the same contribution shape the rules give (`deriveDocument`), each item marked `llm`.
 * Pure: the HTTP calls, the cache and the retries are src/corpus/llm-extraction/. docs/llm-extraction.md.
 */
import { chunkIndexOf } from '../../kernel/chunk-payload.js'
import type { KgContributedEntity, KgContributedRelation, KgContribution } from '../../providers/knowledge-graph/port.js'
import { nameKey } from '../normalise.js'
import type { DerivationOptions } from '../options.js'

/** One chunk's extraction as the model gave it (after the checks of `parseExtraction`). */
export interface ChunkExtraction {
  entities: Array<{ name: string; type?: string; description?: string }>
  relations: Array<{ source: string; target: string; type: string; description?: string }>
}

/**
 * The JSON Schema the answer must follow: sent as `response_format: {type: 'json_schema'}` when so configured, and
 * the rule `parseExtraction` checks in any case (a server that ignores `response_format` is caught here).
 */
export const EXTRACTION_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['entities', 'relations'],
  properties: {
    entities: {
      type: 'array',
      items: {
        type: 'object', additionalProperties: false, required: ['name', 'type', 'description'],
        properties: { name: { type: 'string' }, type: { type: 'string' }, description: { type: 'string' } }
      }
    },
    relations: {
      type: 'array',
      items: {
        type: 'object', additionalProperties: false, required: ['source', 'target', 'type', 'description'],
        properties: { source: { type: 'string' }, target: { type: 'string' }, type: { type: 'string' }, description: { type: 'string' } }
      }
    }
  }
} as const

/** Why an answer is not usable: the extractor asks again (a model may answer well the next time). */
export class MalformedExtractionError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'MalformedExtractionError'
  }
}

/**
 * The extraction in a message's content: a JSON object with `entities` and `relations` arrays of the schema's items
 * (a ```json fence around it is taken off; `type` and `description` may be missing or empty). Anything else throws
 * `MalformedExtractionError`.
 */
export function parseExtraction(content: string): ChunkExtraction {
  const text = content.trim().replace(/^```(?:json)?\s*([\s\S]*?)\s*```$/u, '$1')
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw new MalformedExtractionError(`not JSON: ${text.slice(0, 80)}`)
  }
  if (!isObject(value) || !Array.isArray(value.entities) || !Array.isArray(value.relations)) {
    throw new MalformedExtractionError('not an object with the arrays entities and relations')
  }
  const optional = (item: Record<string, unknown>, key: string, where: string): string | undefined => {
    const v = item[key]
    if (v === undefined || v === null) return undefined
    if (typeof v !== 'string') throw new MalformedExtractionError(`${where}.${key} is not a string`)
    return v.trim() === '' ? undefined : v.trim()
  }
  const required = (item: Record<string, unknown>, key: string, where: string): string => {
    const v = optional(item, key, where)
    if (v === undefined) throw new MalformedExtractionError(`${where}.${key} is missing or empty`)
    return v
  }
  const entities = value.entities.map((item, i) => {
    if (!isObject(item)) throw new MalformedExtractionError(`entities[${i}] is not an object`)
    const where = `entities[${i}]`
    const type = optional(item, 'type', where)
    const description = optional(item, 'description', where)
    return { name: required(item, 'name', where), ...(type ? { type } : {}), ...(description ? { description } : {}) }
  })
  const relations = value.relations.map((item, i) => {
    if (!isObject(item)) throw new MalformedExtractionError(`relations[${i}] is not an object`)
    const where = `relations[${i}]`
    const description = optional(item, 'description', where)
    return {
      source: required(item, 'source', where), target: required(item, 'target', where), type: required(item, 'type', where),
      ...(description ? { description } : {})
    }
  })
  return { entities, relations }
}

/** Longest relation type kept, in characters; a longer one is a sentence, not a type. */
const MAX_RELATION_TYPE = 24

/**
 * What one document's chunks contribute by their extractions (chunks without one contribute nothing): entities
 * merged by normalised name (the name, type and description first given, in chunk order; `mentions` the chunks that
 * name it), relations by ends and type (`count` the chunks that state it). A relation's ends are entities even when
 * the model listed them only there. Names are kept by the rules' thresholds and stop list. Every item is marked `llm`.
 */
export function llmContribution(
  chunks: ReadonlyArray<{ id: string }>,
  extractions: ReadonlyMap<string, ChunkExtraction>,
  options: DerivationOptions
): KgContribution {
  const stop = new Set(options.stopWords.map(nameKey))
  const keep = (name: string) => {
    const key = nameKey(name)
    const length = [...key].length
    return length >= options.minNameLength && length <= options.maxNameLength && !stop.has(key) && /\p{L}/u.test(key) ? key : undefined
  }
  const entities = new Map<string, KgContributedEntity>()
  const relations = new Map<string, KgContributedRelation>()
  const note = (chunkId: string, name: string, type?: string, description?: string): string | undefined => {
    const key = keep(name)
    if (!key) return undefined
    let entity = entities.get(key)
    if (!entity) entities.set(key, (entity = { key, name: name.trim(), chunk_ids: [], mentions: 0, llm: true }))
    if (!entity.chunk_ids.includes(chunkId)) {
      entity.chunk_ids.push(chunkId)
      entity.mentions += 1
    }
    if (entity.type === undefined && type) entity.type = type
    if (entity.description === undefined && description) entity.description = cut(description, options.maxDescriptionLength)
    return key
  }
  for (const chunk of chunks) {
    const extraction = extractions.get(chunk.id)
    if (!extraction) continue
    for (const e of extraction.entities) note(chunk.id, e.name, e.type, e.description)
    for (const r of extraction.relations) {
      const source = note(chunk.id, r.source)
      const target = note(chunk.id, r.target)
      const type = r.type.trim()
      if (!source || !target || source === target || [...type].length > MAX_RELATION_TYPE) continue
      const id = `${source}\u0000${type}\u0000${target}`
      const relation = relations.get(id) ?? { source, target, type, chunk_ids: [], count: 0, llm: true as const }
      if (!relation.chunk_ids.includes(chunk.id)) {
        relation.chunk_ids.push(chunk.id)
        relation.count += 1
      }
      relations.set(id, relation)
    }
  }
  return {
    entities: [...entities.values()].sort((a, b) => compare(a.key, b.key)),
    relations: [...relations.values()].sort((a, b) => compare(a.source, b.source) || compare(a.type, b.type) || compare(a.target, b.target))
  }
}

/**
 * One document's contribution by the rules and by the LLM, as one: an entity both found keeps the rules' name, the
 * LLM's type and description where it gives them (else the rules'), the chunks of both in chunk order, the larger
 * count, and the `llm` mark; a relation both found likewise. Sorted as `deriveDocument` sorts.
 */
export function mergeContributions(rules: KgContribution, llm: KgContribution): KgContribution {
  const entities = new Map(rules.entities.map((e) => [e.key, e] as const))
  for (const e of llm.entities) {
    const r = entities.get(e.key)
    const type = e.type ?? r?.type
    const description = e.description ?? r?.description
    entities.set(e.key, !r ? e : {
      key: e.key, name: r.name, ...(type ? { type } : {}), ...(description ? { description } : {}),
      chunk_ids: inChunkOrder([...r.chunk_ids, ...e.chunk_ids]), mentions: Math.max(r.mentions, e.mentions), llm: true
    })
  }
  const relationKey = (r: KgContributedRelation) => `${r.source}\u0000${r.type}\u0000${r.target}`
  const relations = new Map(rules.relations.map((r) => [relationKey(r), r] as const))
  for (const e of llm.relations) {
    const r = relations.get(relationKey(e))
    relations.set(relationKey(e), !r ? e : { ...r, chunk_ids: inChunkOrder([...r.chunk_ids, ...e.chunk_ids]), count: Math.max(r.count, e.count), llm: true })
  }
  return {
    entities: [...entities.values()].sort((a, b) => compare(a.key, b.key)),
    relations: [...relations.values()].sort((a, b) => compare(a.source, b.source) || compare(a.type, b.type) || compare(a.target, b.target))
  }
}

/** Chunk ids once each, by their index in the document. */
function inChunkOrder(ids: readonly string[]): string[] {
  return [...new Set(ids)].sort((a, b) => (chunkIndexOf(a) ?? 0) - (chunkIndexOf(b) ?? 0) || compare(a, b))
}

function cut(text: string, max: number): string {
  const chars = [...text]
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join('')}…`
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

/**
 * Knowledge-graph ingestion (docs/api.md, "Graphrag in detail"): the body schema, a pure validator whose problems name the
 * field and the item (`relations[3].target: unknown entity "X"`), and readers of `.json` and `.jsonl` files for the CLI.
 *
 * File forms:
 * - `.json`: the request body, `{"entities": [...], "relations": [...]}`.
 * - `.jsonl`: one object per line, either `{"entity": {...}}` or `{"relation": {...}}`; blank lines are
 *   skipped. Order does not matter: the whole file is one write.
 */
import { readFile } from 'node:fs/promises'
import { extname } from 'node:path'
import { Type, type Static } from 'typebox'
import { NamespaceSchema } from '../schemas/common.js'
import { checkAgainst } from '../schemas/validation.js'
import {
  deriveRelationId,
  type KgEntity,
  type KgRelation
} from '../providers/knowledge-graph/port.js'

/** Longest id, name, type or source accepted, in characters. */
const MAX_SHORT_TEXT = 512
/** Longest description accepted, in characters. */
const MAX_DESCRIPTION = 10_000

const Short = (description: string) => Type.String({ minLength: 1, maxLength: MAX_SHORT_TEXT, description })

const GraphEntityInputSchema = Type.Object({
  id: Short('Entity id; re-ingesting an id replaces the entity.'),
  name: Short('Name matched in questions (NFKC, case-insensitive for Latin).'),
  aliases: Type.Optional(Type.Array(Short('Another name matched in questions.'))),
  type: Type.Optional(Short('Entity type, e.g. `organization`.')),
  description: Type.Optional(Type.String({ maxLength: MAX_DESCRIPTION, description: 'Searched by the keyword fallback.' })),
  source: Type.Optional(Short('Where the entity comes from (document path or URL).')),
  source_chunk_ids: Type.Optional(Type.Array(Short('Chunk id (`<doc id>#<index>`) the entity was taken from.')))
})
const GraphRelationInputSchema = Type.Object({
  id: Type.Optional(Short('Relation id; default `<source>-[<type>]-><target>`.')),
  source: Short('Id of the source entity, in this request or already stored.'),
  target: Short('Id of the target entity, in this request or already stored.'),
  type: Short('Relation type, e.g. `located_in`.'),
  description: Type.Optional(Type.String({ maxLength: MAX_DESCRIPTION })),
  weight: Type.Optional(Type.Number({ minimum: 0, description: 'Orders relations (higher first); default 1.' }))
})
export const GraphIngestBodySchema = Type.Object(
  {
    entities: Type.Optional(Type.Array(GraphEntityInputSchema)),
    relations: Type.Optional(Type.Array(GraphRelationInputSchema)),
    namespace: Type.Optional(NamespaceSchema)
  },
  {
    description: 'Entities and relations of the knowledge graph (docs/api.md, "Graphrag in detail"); written all or nothing.',
    examples: [
      {
        entities: [
          { id: 'pku', name: '北京大学', aliases: ['北大'], type: 'organization', description: '位于北京的综合性大学' },
          { id: 'beijing', name: '北京', type: 'city' }
        ],
        relations: [{ source: 'pku', target: 'beijing', type: 'located_in', description: '校址在海淀区', weight: 1 }]
      }
    ]
  }
)
export type GraphIngestBody = Static<typeof GraphIngestBodySchema>

/** A 400 for a bad graph body: every problem names its field, e.g. `relations[3].target: unknown entity "X"`. */
export class GraphIngestError extends Error {
  override name = 'GraphIngestError'
  constructor(readonly problems: string[]) {
    super(`invalid graph body: ${problems.join('; ')}`)
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const quote = (v: unknown) => JSON.stringify(v)

const checkGraphSchema = checkAgainst(GraphIngestBodySchema)
const GRAPH_BODY_FIELDS = new Set(['entities', 'relations', 'namespace'])

/**
 * The one check of a graph body, for `POST /ingest/graph`, the CLI and the demo loader alike: the schema as
 * the route runs it (same coercion, same message), then what a schema cannot say: an unknown top-level
 * field, blank names and ids, ids given twice within the body, and relation endpoints against the body's
 * entities plus `known` (ids already stored; without it endpoints outside the body are not checked here,
 * and the store refuses them). Every problem names the field and the value, in field order; `[]` when it
 * can be written (a schema misfit is reported alone).
 */
export function validateGraphBody(body: unknown, known?: ReadonlySet<string>): string[] {
  const misfit = checkGraphSchema(body)
  if (misfit !== undefined) return [misfit]
  const valid = body as GraphIngestBody
  const problems: string[] = []
  for (const key of Object.keys(valid)) {
    if (!GRAPH_BODY_FIELDS.has(key)) problems.push(`${key}: unknown field (expected entities, relations)`)
  }
  const filled = (at: string, value: string | undefined) => {
    if (value !== undefined && value.trim() === '') problems.push(`${at}: must not be empty (got ${quote(value)})`)
  }

  const entityIds = new Map<string, number>()
  ;(valid.entities ?? []).forEach((e, i) => {
    const at = `entities[${i}]`
    filled(`${at}.id`, e.id)
    filled(`${at}.name`, e.name)
    e.aliases?.forEach((a, k) => filled(`${at}.aliases[${k}]`, a))
    filled(`${at}.type`, e.type)
    filled(`${at}.source`, e.source)
    e.source_chunk_ids?.forEach((c, k) => filled(`${at}.source_chunk_ids[${k}]`, c))
    const first = entityIds.get(e.id)
    if (first !== undefined) problems.push(`${at}.id: duplicate of entities[${first}].id ${quote(e.id)}`)
    else entityIds.set(e.id, i)
  })
  const relationIds = new Map<string, number>()
  ;(valid.relations ?? []).forEach((r, i) => {
    const at = `relations[${i}]`
    filled(`${at}.id`, r.id)
    filled(`${at}.source`, r.source)
    filled(`${at}.target`, r.target)
    filled(`${at}.type`, r.type)
    for (const field of ['source', 'target'] as const) {
      const id = r[field]
      if (known && !entityIds.has(id) && !known.has(id)) problems.push(`${at}.${field}: unknown entity ${quote(id)}`)
    }
    const id = r.id ?? deriveRelationId(r)
    const first = relationIds.get(id)
    if (first !== undefined) problems.push(`${at}.id: duplicate of relations[${first}] (id ${quote(id)})`)
    else relationIds.set(id, i)
  })
  return problems
}

/** The stored form of a valid body: optional lists filled in, relation ids derived, weights defaulted. */
/** The entity ids a graph body writes (none for a body refused): the entities whose names it may change. */
export function entityIdsOf(body: unknown): string[] {
  return validateGraphBody(body).length > 0 ? [] : (body as GraphIngestBody).entities?.map((e) => e.id) ?? []
}

export function toGraphWrite(body: GraphIngestBody): { entities: KgEntity[]; relations: KgRelation[] } {
  return {
    entities: (body.entities ?? []).map((e) => {
      const entity: KgEntity = { id: e.id, name: e.name, aliases: e.aliases ?? [], source_chunk_ids: e.source_chunk_ids ?? [] }
      if (e.type !== undefined) entity.type = e.type
      if (e.description !== undefined) entity.description = e.description
      if (e.source !== undefined) entity.source = e.source
      return entity
    }),
    relations: (body.relations ?? []).map((r) => {
      const relation: KgRelation = {
        id: r.id ?? deriveRelationId(r),
        source: r.source,
        target: r.target,
        type: r.type,
        weight: r.weight ?? 1
      }
      if (r.description !== undefined) relation.description = r.description
      return relation
    })
  }
}

/** What a graph upsert wrote. */
export interface GraphIngestResult {
  entities: number
  relations: number
}

/**
 * Reads a `.json` or `.jsonl` graph file into one body (see the file forms above). Syntax errors name the
 * file and line; the body is not validated here.
 */
export async function readGraphFile(path: string): Promise<GraphIngestBody> {
  const ext = extname(path).toLowerCase()
  if (ext !== '.json' && ext !== '.jsonl' && ext !== '.ndjson') throw new Error(`${path}: a graph file is .json or .jsonl`)
  const text = await readFile(path, 'utf8')
  if (ext === '.json') {
    try {
      return JSON.parse(text) as GraphIngestBody
    } catch (error) {
      throw new Error(`${path}: not valid JSON: ${(error as Error).message}`)
    }
  }
  return parseGraphJsonl(text, path)
}

/** Parses the `.jsonl` form: `{"entity": {...}}` or `{"relation": {...}}` per line. */
export function parseGraphJsonl(text: string, name = 'input'): GraphIngestBody {
  const entities: unknown[] = []
  const relations: unknown[] = []
  const problems: string[] = []
  text.split(/\r?\n/).forEach((line, i) => {
    if (line.trim() === '') return
    let value: unknown
    try {
      value = JSON.parse(line)
    } catch (error) {
      problems.push(`${name}:${i + 1}: not valid JSON: ${(error as Error).message}`)
      return
    }
    const keys = isObject(value) ? Object.keys(value) : []
    if (isObject(value) && keys.length === 1 && 'entity' in value) entities.push(value['entity'])
    else if (isObject(value) && keys.length === 1 && 'relation' in value) relations.push(value['relation'])
    else problems.push(`${name}:${i + 1}: expected {"entity": {...}} or {"relation": {...}}`)
  })
  if (problems.length > 0) throw new GraphIngestError(problems)
  return { entities, relations } as GraphIngestBody
}

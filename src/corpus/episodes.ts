/**
 * Episodic ingestion (docs/episodic.md): a pure validator, the edge texts (docs/episodic.md, "Edge texts"), and
 * `ingestEpisodes` / `deleteEpisodes` writing the graph store and the six vector collections.
 */
import { Type, type Static } from 'typebox'
import { NamespaceSchema } from '../schemas/common.js'
import { checkAgainst } from '../schemas/validation.js'
import type { Embedder } from '../providers/embedder/port.js'
import type {
  EpisodeGraph, EpisodicEdge, EpisodicGraphStore, EpisodicNode
} from '../providers/episodic-graph/port.js'
import { DEFAULT_NAMESPACE } from '../providers/namespace.js'
import type { VectorRecord, VectorStore } from '../providers/vector-store/port.js'
import { EPISODIC_COLLECTIONS, EPISODE_OWNED_COLLECTIONS } from '../providers/episodic-graph/collections.js'
import type { Exclusive } from './write-lock.js'

const Text = (description: string) => Type.String({ description })

/** The longest entity-link description, in characters (code points). */
const MAX_LINK_DESCRIPTION_CHARS = 2000

const EntityRefSchema = Type.Union([
  Type.String({ description: 'Entity id, listed in `entities` of the same request or already stored. Prefer the object form with a description.' }),
  Type.Object({
    id: Text('Entity id.'),
    description: Type.Optional(Text(
      'What the entity is or did in this Episode (or facet), e.g. "本次改造只动它的响应层"; at most 2,000 characters. ' +
      'It goes into the edge text (docs/episodic.md, difference 7), so each Episode linked to the entity gets its own ' +
      'edge text and cost; without it every such Episode shares the entity\'s own description.')),
    edge_text: Type.Optional(Text('Edge label; generated when absent (docs/episodic.md, "Edge texts").'))
  })
])

export const EpisodesIngestBodySchema = Type.Object({
  namespace: Type.Optional(NamespaceSchema),
  entities: Type.Optional(Type.Array(Type.Object({
    id: Text('Entity id.'),
    name: Text('Entity name, embedded into `Entity_name`.'),
    description: Type.Optional(Text('Entity description.'))
  }))),
  episodes: Type.Array(Type.Object({
    id: Text('Episode id.'),
    name: Text('Title.'),
    summary: Text('Summary, embedded into `Episode_summary`; may use `【title】content` sections.'),
    signature: Type.Optional(Type.String()),
    mentioned_time_start: Type.Optional(Text('ISO 8601.')),
    mentioned_time_end: Type.Optional(Text('ISO 8601.')),
    mentioned_time_confidence: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    mentioned_time_text: Type.Optional(Type.String()),
    created_at: Type.Optional(Text('ISO 8601.')),
    entities: Type.Optional(Type.Array(EntityRefSchema)),
    facets: Type.Optional(Type.Array(Type.Object({
      id: Text('Facet id.'),
      search_text: Text('Embedded into `Facet_search_text`.'),
      facet_type: Type.Optional(Type.String()),
      description: Type.Optional(Type.String()),
      anchor_text: Type.Optional(Text('Embedded into `Facet_anchor_text`.')),
      aliases: Type.Optional(Type.Array(Type.String())),
      edge_text: Type.Optional(Text('has_facet edge label; generated when absent.')),
      entities: Type.Optional(Type.Array(EntityRefSchema)),
      points: Type.Optional(Type.Array(Type.Object({
        id: Text('FacetPoint id.'),
        search_text: Text('Embedded into `FacetPoint_search_text`.'),
        description: Type.Optional(Type.String()),
        aliases: Type.Optional(Type.Array(Type.String())),
        edge_text: Type.Optional(Text('has_point edge label; generated when absent.'))
      })))
    })))
  }))
}, { description: 'Episodes with their facets, points and entities (docs/episodic.md).' })
export type EpisodesIngestBody = Static<typeof EpisodesIngestBodySchema>
type EntityRef = Static<typeof EntityRefSchema>

export { EPISODIC_COLLECTIONS,  }

/** A 400 for a bad ingest body: every problem names its field, e.g. `episodes[2].facets[0].entities[1]: unknown entity "N9"`. */
export class EpisodeIngestError extends Error {
  override name = 'EpisodeIngestError'
  constructor(readonly problems: string[]) {
    super(`invalid episodes body: ${problems.join('; ')}`)
  }
}

/** `truncate`: strip; longer than `n` code points keeps `n - 1`, right-stripped, plus "…". */
export function truncateText(s: string | null | undefined, n: number): string {
  const t = (s ?? '').trim()
  const chars = [...t]
  if (chars.length <= n) return t
  return `${chars.slice(0, n - 1).join('').trimEnd()}…`
}

/** has_facet: `"{search_text}: {description≤300}"`, or just the search text. */
export function hasFacetEdgeText(facet: { search_text: string; description?: string | null }): string {
  const d = truncateText(facet.description, 300)
  return d ? `${facet.search_text}: ${d}` : facet.search_text
}

/** has_point: `"{facet} -> {point}: {description≤200}"`, or without the description. */
export function hasPointEdgeText(facetSearchText: string, point: { search_text: string; description?: string | null }): string {
  const d = truncateText(point.description, 200)
  return d ? `${facetSearchText} -> ${point.search_text}: ${d}` : `${facetSearchText} -> ${point.search_text}`
}

/** Episode involves_entity: `"{name} | {context or description ≤200}"`, or just the name. */
export function episodeEntityEdgeText(name: string, description?: string | null): string {
  const d = truncateText(description, 200)
  return d ? `${name} | ${d}` : name
}

/** Facet involves_entity: `"{name} | {desc≤180} (in: {facet≤50})"` and its shorter forms. */
export function facetEntityEdgeText(name: string, description: string | null | undefined, facetSearchText: string | null | undefined): string {
  const d = truncateText(description, 180)
  const f = truncateText(facetSearchText, 50)
  if (d && f) return `${name} | ${d} (in: ${f})`
  if (d) return `${name} | ${d}`
  if (f) return `${name} (in: ${f})`
  return name
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const refId = (ref: unknown): string | undefined =>
  typeof ref === 'string' ? ref : isObject(ref) && typeof ref['id'] === 'string' ? ref['id'] : undefined

/** Every entity id the body refers to that it does not define itself (to look up in the store). */
function externalEntityRefs(body: unknown): string[] {
  if (!isObject(body)) return []
  const defined = new Set(Array.isArray(body['entities']) ? body['entities'].map(refId).filter((x) => x !== undefined) : [])
  const refs = new Set<string>()
  const visit = (list: unknown): void => {
    if (!Array.isArray(list)) return
    for (const r of list) {
      const id = refId(r)
      if (id !== undefined && !defined.has(id)) refs.add(id)
    }
  }
  for (const ep of Array.isArray(body['episodes']) ? body['episodes'] : []) {
    if (!isObject(ep)) continue
    visit(ep['entities'])
    for (const f of Array.isArray(ep['facets']) ? ep['facets'] : []) if (isObject(f)) visit(f['entities'])
  }
  return [...refs].sort()
}

const checkEpisodesSchema = checkAgainst(EpisodesIngestBodySchema)

/**
 * The one check of an episodes body, for `POST /ingest/episodes`, the CLI and the demo loader alike: the
 * schema as the route runs it (same coercion, same message), then what a schema cannot say: blank texts,
 * times that do not parse, ids given twice, references to entities neither in the body nor stored, ids
 * stored as another type, link descriptions over {@link MAX_LINK_DESCRIPTION_CHARS}. Returns every
 * problem, each naming the field and the value (empty when valid; a schema misfit is reported alone).
 * `stored` gives the type of already-stored ids the body refers to (from `EpisodicGraphStore.nodeTypes`).
 */
export function validateEpisodesBody(body: unknown, stored: ReadonlyMap<string, string> = new Map()): string[] {
  const misfit = checkEpisodesSchema(body)
  if (misfit !== undefined) return [misfit]
  const valid = body as EpisodesIngestBody
  const problems: string[] = []
  const seen = new Map<string, string>()
  const claim = (id: string, where: string): void => {
    const first = seen.get(id)
    if (first !== undefined) problems.push(`${where}.id: duplicate id "${id}" (also ${first})`)
    else seen.set(id, where)
  }
  const filled = (value: string, at: string): void => {
    if (value.trim() === '') problems.push(`${at}: must not be empty (got ${JSON.stringify(value)})`)
  }
  const storedAs = (id: string, where: string, type: string): void => {
    const t = stored.get(id)
    if (t !== undefined && t !== type) problems.push(`${where}.id: "${id}" is already a ${t}`)
  }

  const defined = new Set<string>()
  ;(valid.entities ?? []).forEach((e, i) => {
    const where = `entities[${i}]`
    filled(e.id, `${where}.id`); filled(e.name, `${where}.name`)
    claim(e.id, where)
    defined.add(e.id)
    storedAs(e.id, where, 'Entity')
  })
  const checkRefs = (list: readonly EntityRef[] | undefined, where: string, episodeId: string): void => {
    list?.forEach((r, k) => {
      const at = `${where}[${k}]`
      const id = typeof r === 'string' ? r : r.id
      const length = typeof r === 'object' && r.description !== undefined ? [...r.description].length : 0
      if (length > MAX_LINK_DESCRIPTION_CHARS) {
        problems.push(`${at}.description: ${length} characters, over the ${MAX_LINK_DESCRIPTION_CHARS} allowed ` +
          `(Episode "${episodeId}", entity "${id}")`)
      }
      if (defined.has(id)) return
      const t = stored.get(id)
      if (t === undefined) problems.push(`${at}: unknown entity "${id}"`)
      else if (t !== 'Entity') problems.push(`${at}: "${id}" is a ${t}, not an entity`)
    })
  }
  const time = (value: string | undefined, at: string): number | undefined => {
    if (value === undefined) return undefined
    const t = Date.parse(value)
    if (Number.isNaN(t)) problems.push(`${at}: must be an ISO 8601 time (got ${JSON.stringify(value)})`)
    return t
  }

  valid.episodes.forEach((ep, i) => {
    const where = `episodes[${i}]`
    filled(ep.id, `${where}.id`); filled(ep.name, `${where}.name`); filled(ep.summary, `${where}.summary`)
    const start = time(ep.mentioned_time_start, `${where}.mentioned_time_start`)
    const end = time(ep.mentioned_time_end, `${where}.mentioned_time_end`)
    time(ep.created_at, `${where}.created_at`)
    if ((ep.mentioned_time_start === undefined) !== (ep.mentioned_time_end === undefined)) {
      problems.push(`${where}: mentioned_time_start and mentioned_time_end go together (got only ` +
        `${ep.mentioned_time_start === undefined ? 'mentioned_time_end' : 'mentioned_time_start'})`)
    } else if (start !== undefined && end !== undefined && start > end) {
      problems.push(`${where}.mentioned_time_end: ${ep.mentioned_time_end} is before mentioned_time_start ${ep.mentioned_time_start}`)
    }
    claim(ep.id, where)
    storedAs(ep.id, where, 'Episode')
    checkRefs(ep.entities, `${where}.entities`, ep.id)
    ;(ep.facets ?? []).forEach((f, j) => {
      const fw = `${where}.facets[${j}]`
      filled(f.id, `${fw}.id`); filled(f.search_text, `${fw}.search_text`)
      claim(f.id, fw)
      checkRefs(f.entities, `${fw}.entities`, ep.id)
      ;(f.points ?? []).forEach((p, k) => {
        const pw = `${fw}.points[${k}]`
        filled(p.id, `${pw}.id`); filled(p.search_text, `${pw}.search_text`)
        claim(p.id, pw)
      })
    })
  })
  return problems
}

const ms = (iso: string | undefined): number | undefined => (iso === undefined ? undefined : Date.parse(iso))

function clean<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && v !== null && v !== '')) as T
}

const linkDescription = (r: { description?: string }): { description?: string } =>
  r.description && r.description.trim() !== '' ? { description: r.description } : {}

/** Turns a valid body into the graph change (nodes in m-flow's property names, edges with texts). */
export function buildEpisodeGraphs(body: EpisodesIngestBody, storedEntities: ReadonlyMap<string, EpisodicNode> = new Map()): {
  entities: EpisodicNode[]
  episodes: EpisodeGraph[]
} {
  const entities = (body.entities ?? []).map((e): EpisodicNode => clean({ id: e.id, type: 'Entity', name: e.name, description: e.description }))
  const entityById = new Map<string, EpisodicNode>([...storedEntities, ...entities.map((e) => [e.id, e] as const)])
  const entityName = (id: string): string => entityById.get(id)?.name ?? id
  const refParts = (ref: EntityRef): { id: string; description?: string; edge_text?: string } =>
    typeof ref === 'string' ? { id: ref } : ref

  const episodes = body.episodes.map((ep): EpisodeGraph => {
    const episode: EpisodicNode = clean({
      id: ep.id, type: 'Episode', name: ep.name, summary: ep.summary, signature: ep.signature,
      mentioned_time_start_ms: ms(ep.mentioned_time_start), mentioned_time_end_ms: ms(ep.mentioned_time_end),
      mentioned_time_confidence: ep.mentioned_time_confidence, mentioned_time_text: ep.mentioned_time_text,
      created_at: ms(ep.created_at)
    })
    const nodes: EpisodicNode[] = []
    const edges: EpisodicEdge[] = []
    for (const f of ep.facets ?? []) {
      nodes.push(clean({
        id: f.id, type: 'Facet', name: f.search_text, search_text: f.search_text, facet_type: f.facet_type,
        description: f.description, anchor_text: f.anchor_text
      }))
      edges.push({ from: ep.id, to: f.id, relationship_name: 'has_facet', edge_text: f.edge_text || hasFacetEdgeText(f) })
      for (const p of f.points ?? []) {
        nodes.push(clean({ id: p.id, type: 'FacetPoint', name: p.search_text, search_text: p.search_text, description: p.description }))
        edges.push({ from: f.id, to: p.id, relationship_name: 'has_point', edge_text: p.edge_text || hasPointEdgeText(f.search_text, p) })
      }
      for (const ref of f.entities ?? []) {
        const r = refParts(ref)
        const description = r.description ?? entityById.get(r.id)?.description
        edges.push({
          from: f.id, to: r.id, relationship_name: 'involves_entity',
          edge_text: r.edge_text || facetEntityEdgeText(entityName(r.id), description, f.search_text), ...linkDescription(r)
        })
      }
    }
    for (const ref of ep.entities ?? []) {
      const r = refParts(ref)
      // Difference 7: the link's own description (m-flow's context_description) wins over the entity's.
      const description = r.description ?? entityById.get(r.id)?.description
      edges.push({
        from: ep.id, to: r.id, relationship_name: 'involves_entity',
        edge_text: r.edge_text || episodeEntityEdgeText(entityName(r.id), description), ...linkDescription(r)
      })
    }
    return { episode, nodes, edges }
  })
  return { entities, episodes }
}

/** Advice on the shape of the memory (m-flow's input rules); never an error, the data is the user's. */
export interface IngestWarning {
  /** The offending field, e.g. `episodes[2].facets[0].search_text`. */
  field: string
  message: string
}

/** A facet label shorter than this (code points) names a category, not this Episode's topic. */
const MIN_FACET_LABEL_CHARS = 6
/** A facet label owned by more Episodes than this cannot tell them apart. */
const MAX_EPISODES_PER_FACET_LABEL = 2
/** At most this many warnings are listed; `warnings_total` counts them all. */
export const MAX_LISTED_WARNINGS = 100

const quoteIds = (ids: readonly string[]): string =>
  ids.slice(0, 5).map((id) => `"${id}"`).join(', ') + (ids.length > 5 ? `, … (${ids.length} in all)` : '')

/**
 * The input rules of m-flow's extraction, checked on a valid body: a facet label is a topic label of
 * 15–50 characters naming what this Episode's facet is about (warned below 6 characters, or when more
 * than 2 Episodes own it, counting the stored ones that this body does not replace), and an entity link
 * says what the entity is or did there (difference 7). `storedOwners`: stored Episodes per facet label
 * (`EpisodicGraphStore.facetLabelEpisodes`).
 */
export function episodeWarnings(body: EpisodesIngestBody, storedOwners: ReadonlyMap<string, readonly string[]> = new Map()): IngestWarning[] {
  const warnings: IngestWarning[] = []
  const replaced = new Set(body.episodes.map((e) => e.id))
  const owners = new Map<string, Set<string>>()
  for (const [label, ids] of storedOwners) owners.set(label, new Set(ids.filter((id) => !replaced.has(id))))
  for (const ep of body.episodes) {
    for (const f of ep.facets ?? []) {
      const set = owners.get(f.search_text) ?? new Set<string>()
      set.add(ep.id)
      owners.set(f.search_text, set)
    }
  }
  const links = (list: readonly EntityRef[] | undefined, where: string, owner: string): void => {
    list?.forEach((ref, k) => {
      if (typeof ref === 'object' && ref.description && ref.description.trim() !== '') return
      const id = typeof ref === 'string' ? ref : ref.id
      warnings.push({
        field: `${where}[${k}]`,
        message: `the link from ${owner} to entity "${id}" has no description: give it as {"id": "${id}", "description": "…"}, ` +
          'what the entity is or did there; otherwise every Episode linked to it gets the same edge text and cost'
      })
    })
  }
  body.episodes.forEach((ep, i) => {
    const where = `episodes[${i}]`
    ;(ep.facets ?? []).forEach((f, j) => {
      const fw = `${where}.facets[${j}]`
      const length = [...f.search_text.trim()].length
      if (length < MIN_FACET_LABEL_CHARS) {
        warnings.push({
          field: `${fw}.search_text`,
          message: `facet label "${f.search_text}" is ${length} characters: name what this Episode's facet is about ` +
            'in 15 to 50 characters (a topic label such as "流式返回灰度发布的回滚方案", not a category such as "结果")'
        })
      }
      const sharing = [...(owners.get(f.search_text) ?? [])].sort()
      if (sharing.length > MAX_EPISODES_PER_FACET_LABEL) {
        warnings.push({
          field: `${fw}.search_text`,
          message: `facet label "${f.search_text}" is shared by ${sharing.length} Episodes (${quoteIds(sharing)}): ` +
            'a label that many Episodes share cannot tell them apart; name what this Episode\'s facet is about'
        })
      }
      links(f.entities, `${fw}.entities`, `facet "${f.id}"`)
    })
    links(ep.entities, `${where}.entities`, `Episode "${ep.id}"`)
  })
  return warnings
}

export interface EpisodicIngestPorts {
  graph: EpisodicGraphStore
  vectors: VectorStore
  embedder: Embedder
}

export interface EpisodicIngestOptions {
  /** `COLLECTION_PREFIX`: collections are `${prefix}${name}`. Default ''. */
  collectionPrefix?: string
  /** The namespace written to; default `default`. */
  namespace?: string
  /**
   * Runs the store writes alone among the replicas writing this namespace's Episodes (the write lock the write path
   * passes); the write checks `lease.assertHeld()` before each store write.
   */
  exclusive: Exclusive
}

/** What an Episode write wrote: nodes by kind, edges and vectors. */
interface EpisodeCounts {
  episodes: number
  facets: number
  points: number
  entities: number
  edges: number
  vectors: number
}

export interface EpisodicIngestResult extends EpisodeCounts {
  /** The first {@link MAX_LISTED_WARNINGS} warnings of {@link episodeWarnings}. */
  warnings: IngestWarning[]
  warnings_total: number
}

/**
 * Validates and writes a body: the graph (atomic) and the six vector collections. Re-ingesting an
 * Episode id replaces it. Throws {@link EpisodeIngestError} (400) before writing anything when the body
 * is invalid; provider errors otherwise.
 *
 * Order: embed everything first (the slow, failure-prone step, before any write); then each collection
 * drops the Episode's earlier vectors and writes the new ones in one atomic write; then the graph; then
 * vectors of entities and labels that nothing uses any more go.
 */
export async function ingestEpisodes(ports: EpisodicIngestPorts, body: unknown, options: EpisodicIngestOptions): Promise<EpisodicIngestResult> {
  const namespace = options.namespace ?? DEFAULT_NAMESPACE
  // The schema first: it coerces ids as the route does, before they are looked up in the store.
  const misfit = checkEpisodesSchema(body)
  if (misfit !== undefined) throw new EpisodeIngestError([misfit])
  const refs = externalEntityRefs(body)
  const ids = isObject(body) && Array.isArray(body['episodes'])
    ? [...refs, ...body['episodes'].flatMap((e) => (isObject(e) && typeof e['id'] === 'string' ? [e['id']] : []))]
    : refs
  const stored = await ports.graph.nodeTypes(namespace, ids)
  const problems = validateEpisodesBody(body, stored)
  if (problems.length > 0) throw new EpisodeIngestError(problems)
  const valid = body as EpisodesIngestBody

  // Names of stored entities the body links to, for their edge texts.
  const storedEntities = new Map<string, EpisodicNode>()
  const external = refs.filter((id) => stored.get(id) === 'Entity')
  if (external.length > 0) {
    const fragment = await ports.graph.describe(namespace, external)
    for (const id of external) {
      const node = fragment.nodes.get(id)
      if (node) storedEntities.set(id, node)
    }
  }
  const { entities, episodes } = buildEpisodeGraphs(valid, storedEntities)
  const facetLabels = [...new Set(valid.episodes.flatMap((e) => (e.facets ?? []).map((f) => f.search_text)))]
  const warnings = episodeWarnings(valid, await ports.graph.facetLabelEpisodes(namespace, facetLabels))

  const { embedded: _embedded, borrowed: _borrowed, ...written } = await writeEpisodeGraphs(ports, { entities, episodes }, options)
  return { ...written, warnings: warnings.slice(0, MAX_LISTED_WARNINGS), warnings_total: warnings.length }
}

/** What `writeEpisodeGraphs` wrote, and where its vectors came from. */
export interface EpisodeGraphsWritten extends EpisodeCounts {
  /** Distinct texts embedded now (a text several records hold is embedded once). */
  embedded: number
  /** Records whose vector was given (`vectorFor`), not embedded. */
  borrowed: number
}

/**
 * Writes Episode graphs and their vectors (the six collections, `${collectionPrefix}<name>`): each collection drops the
 * Episodes' earlier vectors and writes the new ones in one atomic write; then the graph; then vectors of entities and
 * labels that nothing uses any more go. Everything is embedded first, before any write; `vectorFor` gives the vector
 * of a record that has one already (by collection and id: it is not embedded).
 */
export async function writeEpisodeGraphs(
  ports: EpisodicIngestPorts,
  change: { entities: readonly EpisodicNode[]; episodes: readonly EpisodeGraph[]; deleteEpisodeIds?: readonly string[] },
  options: EpisodicIngestOptions & { vectorFor?: (collection: string, id: string) => Float32Array | undefined }
): Promise<EpisodeGraphsWritten> {
  const { entities, episodes } = change
  const namespace = options.namespace ?? DEFAULT_NAMESPACE
  const prefix = options.collectionPrefix ?? ''
  const records = new Map<string, Array<Omit<VectorRecord, 'vector'> & { given?: Float32Array }>>(EPISODIC_COLLECTIONS.map((c) => [c, []]))
  const add = (collection: string, id: string, text: string | null | undefined, docId: string): void => {
    if (!text || text.trim() === '') return
    const given = options.vectorFor?.(collection, id)
    records.get(collection)!.push({ id, payload: { doc_id: docId, text }, ...(given ? { given } : {}) })
  }
  const labels = new Set<string>()
  for (const { episode, nodes, edges } of episodes) {
    add('Episode_summary', episode.id, episode.summary, episode.id)
    for (const n of nodes) {
      if (n.type === 'Facet') {
        add('Facet_search_text', n.id, n.search_text, episode.id)
        add('Facet_anchor_text', n.id, n.anchor_text, episode.id)
      } else add('FacetPoint_search_text', n.id, n.search_text, episode.id)
    }
    for (const e of edges) labels.add(e.edge_text || e.relationship_name)
  }
  for (const e of entities) add('Entity_name', e.id, e.name, e.id)
  for (const l of [...labels].sort()) add('RelationType_relationship_name', l, l, l)

  const all = [...records.values()].flat()
  const missing = [...new Set(all.filter((r) => r.given === undefined).map((r) => r.payload.text))]
  const embedded = missing.length > 0 ? await ports.embedder.embedPassages(missing) : []
  const byText = new Map(missing.map((t, i) => [t, embedded[i]!] as const))

  const episodeIds = [...new Set([...(change.deleteEpisodeIds ?? []), ...episodes.map((e) => e.episode.id)])]
  // Two writers of one Episode id would mix their vectors (each write deletes the points the other upserted)
  // and leave the graph of one beside the vectors of the other: the whole store part takes turns.
  await options.exclusive(async (lease) => {
    await Promise.all(EPISODIC_COLLECTIONS.map(async (c) => {
      const upsert = records.get(c)!.map(({ given, ...r }) => ({ ...r, vector: given ?? byText.get(r.payload.text)! }))
      const ownedByEpisode = EPISODE_OWNED_COLLECTIONS.has(c)
      if (upsert.length === 0 && !(ownedByEpisode && episodeIds.length > 0)) return
      await ports.vectors.ensureCollection(`${prefix}${c}`, ports.embedder.dimensions)
      lease.assertHeld()
      await ports.vectors.write(`${prefix}${c}`, namespace, { ...(ownedByEpisode ? { deleteDocIds: episodeIds } : {}), upsert })
    }))
    lease.assertHeld()
    const result = await ports.graph.apply(namespace, { entities, episodes, ...(change.deleteEpisodeIds ? { deleteEpisodeIds: change.deleteEpisodeIds } : {}) })
    lease.assertHeld()
    await removeUnusedVectors(ports, prefix, namespace, result.removedEntityIds, result.unusedLabels)
  })
  return {
    episodes: episodes.length,
    facets: episodes.reduce((n, e) => n + e.nodes.filter((x) => x.type === 'Facet').length, 0),
    points: episodes.reduce((n, e) => n + e.nodes.filter((x) => x.type === 'FacetPoint').length, 0),
    entities: entities.length,
    edges: episodes.reduce((n, e) => n + e.edges.length, 0),
    vectors: all.length,
    embedded: missing.length,
    borrowed: all.length - all.filter((r) => r.given === undefined).length
  }
}

async function removeUnusedVectors(
  ports: EpisodicIngestPorts, prefix: string, namespace: string, entityIds: readonly string[], labels: readonly string[]
): Promise<void> {
  if (entityIds.length > 0) await deleteVectorDocs(ports, `${prefix}Entity_name`, namespace, entityIds)
  if (labels.length > 0) await deleteVectorDocs(ports, `${prefix}RelationType_relationship_name`, namespace, labels)
}

/** Deletes by doc id; the store refuses writes to a missing collection, so it is ensured first. */
async function deleteVectorDocs(ports: EpisodicIngestPorts, collection: string, namespace: string, docIds: readonly string[]): Promise<void> {
  await ports.vectors.ensureCollection(collection, ports.embedder.dimensions)
  await ports.vectors.write(collection, namespace, { deleteDocIds: docIds })
}

/**
 * Deletes Episodes with their facets, points and vectors; entities another Episode uses stay, and
 * entities left with no edge go. Unknown ids are reported in `not_found`, not an error.
 */
export async function deleteEpisodes(
  ports: EpisodicIngestPorts,
  ids: readonly string[],
  options: EpisodicIngestOptions
): Promise<{ deleted: string[]; not_found: string[] }> {
  const prefix = options.collectionPrefix ?? ''
  const namespace = options.namespace ?? DEFAULT_NAMESPACE
  const deleted = await options.exclusive(async (lease) => {
    lease.assertHeld()
    const result = await ports.graph.apply(namespace, { deleteEpisodeIds: ids })
    if (result.deletedEpisodeIds.length > 0) {
      lease.assertHeld()
      await Promise.all([...EPISODE_OWNED_COLLECTIONS].map((c) =>
        deleteVectorDocs(ports, `${prefix}${c}`, namespace, result.deletedEpisodeIds)))
    }
    lease.assertHeld()
    await removeUnusedVectors(ports, prefix, namespace, result.removedEntityIds, result.unusedLabels)
    return result.deletedEpisodeIds
  })
  const gone = new Set(deleted)
  return { deleted, not_found: [...new Set(ids)].filter((id) => !gone.has(id)).sort() }
}

/**
 * `mode=graphrag`: a naive entity-neighbour lookup over the knowledge graph (docs/api.md, "Graphrag in detail").
 *
 * 1. Match: the entities whose name or alias occurs in the question (`match.ts`, an Aho-Corasick automaton
 *    rebuilt only when the store's version changes), then those whose name it holds in large part (`fragments.ts`).
 * 2. Expand: those entities and their one-hop neighbours, at most 50 per named entity (`expand.ts`); the named ones
 *    citing the best-supported chunk first (the named entities citing it weighted by their specificity, a hub least,
 *    and the relations between them), and each item's evidence so ordered (`support.ts`).
 * 3. Fallback, when nothing is named: keyword search over names and descriptions (`keyword.ts`); when that finds
 *    nothing either and the graph read is derived, the derived entities citing the chunks that best match the
 *    question lexically (`passages.ts`).
 * 4. Render items (`render.ts`). One leg, `graph`.
 */
import type { KgEntityNames, KnowledgeGraphStore, KgNeighbourhood } from '../../src/providers/knowledge-graph/port.js'
import { DEFAULT_NAMESPACE } from '../../src/providers/namespace.js'
import { analyze } from '../../src/kernel/cjk-analyzer.js'
import { resolveLegs, runRequiredLeg, type LegRun } from '../leg-runner.js'
import type { AdapterResult, ModeAdapter, StructuresRead } from '../types.js'
import type { GraphReach, GraphReachRequest } from '../graph-reach.js'
import { expandMatches, MAX_NEIGHBOURS, withRelations, type GraphCandidate } from './expand.js'
import { keywordCandidates } from './keyword.js'
import { DEFAULT_PASSAGE_FALLBACK, documentsOf, passageCandidates, passageMatches, passageSupport, type PassageFallbackOptions, type PassageSearch } from './passages.js'
import { DEFAULT_FRAGMENT_OPTIONS, type FragmentOptions } from './fragments.js'
import { buildNameMatcher, type NameMatch, type NameMatcher } from './match.js'
import { meaningMatches, type MeaningOptions, type NameSearch } from './meaning.js'
import { normalizeForMatch } from '../../src/kernel/entity-names.js'
import { renderItem } from './render.js'
import { MAX_EVIDENCE } from './evidence.js'
import { chunkSupport, nameTokens, orderBySupport, type ChunkSupport, type NameTokens } from './support.js'
import { GRAPHRAG_LEGS, type GraphragMetadata } from './spec.js'
import { graphragMatchStrength } from './strength.js'
import { reachedEntities } from './reach.js'

export interface GraphragRequest {
  query: string
  top_k: number
  /** Default `default`. */
  namespace?: string
  /** Relations shown per item (text and metadata); default from `GraphragDefaults`. */
  max_relations?: number
  /** Only entities of these types are items; matching and expansion are unchanged, so a named entity of another type still leads to its neighbours. */
  entity_types?: readonly string[]
  /** The imported graph, the derived one, or both; absent: the derived one only where nothing was imported. */
  structures?: StructuresRead
}

export interface GraphragDefaults {
  /** Relations shown per item when the request does not say. Default 10. */
  max_relations: number
  /**
   * The graph leg's deadline in milliseconds; the service passes `GRAPH_TIMEOUT_MS` (default 2000). Default here
   * 60000, so that a caller building the adapter alone sees the store's own errors and timeouts.
   */
  timeoutMs: number
  /** The store's name, as a timeout names it (`knowledge-graph:neo4j`). */
  backend: string
  /** Evidence chunks per item (`evidence.ts`). Default 5. */
  maxEvidence: number
  /** Names the question holds only in part (`fragments.ts`), or `false`: names and aliases in full only. Default `DEFAULT_FRAGMENT_OPTIONS`. */
  fragments: FragmentOptions | false
  /**
   * When neither the names nor the keyword fallback find anything on a derived graph: the derived entities citing the
   * chunks best matching the question (`passages.ts`; needs the `passages` port), or `false`: none. Default `DEFAULT_PASSAGE_FALLBACK`.
   */
  passages: PassageFallbackOptions | false
  /**
   * Entities found by meaning (`meaning.ts`; needs the `names` port): after the names the question holds, the entities
   * of the `limit` names and aliases nearest it whose similarity is at least `floor`, or `false`: none. Default `false`.
   */
  meaning: MeaningOptions | false
}

const GRAPHRAG_DEFAULTS: GraphragDefaults = {
  max_relations: 10, timeoutMs: 60_000, backend: 'knowledge-graph', maxEvidence: MAX_EVIDENCE, fragments: DEFAULT_FRAGMENT_OPTIONS,
  passages: DEFAULT_PASSAGE_FALLBACK, meaning: false
}

/**
 * Which part of a namespace's graph graphrag reads: the namespace's `structures` setting; without one, the imported
 * entities where there is any (a curated graph is not mixed with what derivation guessed), else the derived ones
 * (docs/derivation.md, "What each mode reads").
 */
type GraphPart = StructuresRead

type GraphragResult = AdapterResult<GraphragMetadata, 'graphrag'>

export interface GraphragAdapter extends ModeAdapter<GraphragRequest, GraphragMetadata, 'graphrag'> {
  /** Builds a namespace's name matcher now (e.g. at start-up) instead of on its first request. */
  warm(namespace: string): Promise<void>
  /** What hybrid's `graph` leg reads (`adapters/graph-reach.ts`): the named entities and their neighbours, with weighted evidence. */
  reach(request: GraphReachRequest, signal: AbortSignal): Promise<GraphReach>
}

/** What the adapter reads: the knowledge graph, and for the last fallback the namespace's lexical index (absent: no such fallback). */
export interface GraphragPorts {
  graph: KnowledgeGraphStore
  passages?: PassageSearch
  /** The namespace's entity names nearest a question (`meaning.ts`); absent: no match by meaning. */
  names?: NameSearch
}

export function createGraphragAdapter(
  ports: GraphragPorts,
  defaults: Partial<GraphragDefaults> = {}
): GraphragAdapter {
  const settings: GraphragDefaults = { ...GRAPHRAG_DEFAULTS, ...defaults }
  const { graph, passages, names } = ports
  const byMeaning = settings.meaning && names ? { options: settings.meaning, search: names } : undefined
  const graphLeg: LegRun = resolveLegs(GRAPHRAG_LEGS,
    { embedder: '', vectors: '', lexical: '', graph: settings.backend, episodes: '' },
    { embedding: 0, vector: 0, lexical: 0, graph: settings.timeoutMs }).graph
  /** Per namespace: the matcher of the version it was built from, and a rebuild under way. */
  const matchers = new Map<string, {
    cached?: { version: string; matcher: PartMatcher }
    building?: { version: string; promise: Promise<PartMatcher> }
  }>()

  /** The namespace's matcher for the store's current version, over the part it reads; concurrent requests share one rebuild. */
  const currentMatcher = async (namespace: string, structures: StructuresRead | undefined, signal?: AbortSignal): Promise<PartMatcher> => {
    const version = await graph.version(namespace, signal)
    const slotKey = `${namespace}\u0000${structures ?? ''}`
    let slot = matchers.get(slotKey)
    if (!slot) matchers.set(slotKey, (slot = {}))
    if (slot.cached?.version === version) return slot.cached.matcher
    if (slot.building?.version === version) return slot.building.promise
    const own = slot
    const promise = graph.names(namespace).then((names) => {
      const imported = names.filter((n) => !n.derived)
      const part: GraphPart = structures ?? (imported.length > 0 || names.length === 0 ? 'imported' : 'derived')
      const derived = names.filter((n) => n.derived)
      const joins = part === 'both' ? clashes(imported, derived) : new Map<string, string[]>()
      const joined = new Set([...joins.values()].flat())
      const read = part === 'imported' ? imported : part === 'derived' ? derived : [...imported, ...derived.filter((n) => !joined.has(n.id))]
      const tokens = new Map<string, readonly string[]>()
      const nameTokensOf: NameTokens = (entity) => {
        let known = tokens.get(entity.id)
        if (!known) tokens.set(entity.id, (known = nameTokens(entity)))
        return known
      }
      const matcher = Object.assign(buildNameMatcher(read, settings.fragments || undefined), { part, joins, joined, nameTokens: nameTokensOf })
      // A write between version() and names() gives a newer version next time, and another rebuild.
      own.cached = { version, matcher }
      return matcher
    })
    own.building = { version, promise }
    try {
      return await promise
    } finally {
      if (own.building?.promise === promise) delete own.building
    }
  }

  return {
    mode: 'graphrag',
    async warm(namespace: string) {
      await currentMatcher(namespace, undefined)
    },
    async retrieve(request: GraphragRequest, signal?: AbortSignal): Promise<GraphragResult> {
      const { value } = await runRequiredLeg(graphLeg, (cancel) => search(request, cancel), (r) => r.legs[0]?.hits ?? 0, signal)
      return value
    },
    reach
  }

  async function reach(request: GraphReachRequest, signal: AbortSignal): Promise<GraphReach> {
    const matcher = await currentMatcher(request.namespace, request.structures, signal)
    signal.throwIfAborted()
    if (matcher.entities === 0) return { entities: [], skipped: `the knowledge graph of namespace "${request.namespace}" is empty` }
    const matches = (await withMeaning(matcher.match(request.query), matcher, request.namespace, request.query, signal)).matches
    if (matches.length === 0) return { entities: [] }
    // The store cuts each named entity's neighbours by expandMatches' own rule, so the cut after it keeps the same ones:
    // the leg shows no relation of a named entity (graphrag's items do, its heaviest to any neighbour, so search reads whole).
    const hood = await graph.neighbourhood(request.namespace, matches.map((m) => m.entityId), signal, { maxNeighbours: MAX_NEIGHBOURS })
    signal.throwIfAborted()
    let candidates = expandMatches(matches, hood)
    if (matcher.joins.size > 0) candidates = await withJoinedEvidence(candidates, matcher.joins, request.namespace)
    const support = chunkSupport(candidates, request.query, matcher.nameTokens)
    const named = new Set(candidates.filter((c) => c.hop === 0).map((c) => c.entity.id))
    return { entities: reachedEntities(orderBySupport(candidates, support), named, support, request.maxEntities, request.maxEvidence) }
  }

  async function search(request: GraphragRequest, signal: AbortSignal): Promise<GraphragResult> {
    const started = performance.now()
    const namespace = request.namespace ?? DEFAULT_NAMESPACE
    const maxRelations = request.max_relations ?? settings.max_relations
    const types = request.entity_types ? new Set(request.entity_types) : undefined
    const matcher = await currentMatcher(namespace, request.structures, signal)
    signal.throwIfAborted()
    if (matcher.entities === 0) {
      return {
        items: [],
        legs: [{ name: 'graph', status: 'skipped', took_ms: round(performance.now() - started), hits: 0, reason: `the knowledge graph of namespace "${namespace}" is empty` }],
        match_strength: 'none'
      }
    }

    let candidates: GraphCandidate[]
    let hood: KgNeighbourhood
    /** With the passage fallback: the matched chunks' support, which orders each item's evidence. */
    let fromPassages: ChunkSupport | undefined
    let ranPassages = false
    const { matches, degraded } = await withMeaning(matcher.match(request.query), matcher, namespace, request.query, signal)
    if (matches.length > 0) {
      hood = await graph.neighbourhood(namespace, matches.map((m) => m.entityId), signal)
      candidates = expandMatches(matches, hood)
    } else {
      const tokens = [...new Set(analyze(request.query))]
      const hits = await graph.searchKeywords(namespace, tokens, request.top_k, types ? { types: [...types] } : {}, signal)
      signal.throwIfAborted()
      // the fallback searches the whole graph; only the part the matcher reads answers
      const ofPart = hits.filter((h) => matcher.part === 'both'
        ? !matcher.joined.has(h.entity.id)
        : (h.entity.derived_from !== undefined) === (matcher.part === 'derived'))
      if (ofPart.length === 0 && matcher.part !== 'imported' && settings.passages && passages) {
        ranPassages = true
        const found = await passageFallback(request, namespace, matcher, settings.passages, passages, types, signal)
        hood = found.hood
        candidates = found.candidates
        fromPassages = found.support
      } else {
        hood = await graph.neighbourhood(namespace, ofPart.map((h) => h.entity.id), signal)
        candidates = keywordCandidates(ofPart, tokens.length, hood)
      }
    }
    if (matcher.joins.size > 0) candidates = await withJoinedEvidence(candidates, matcher.joins, namespace)
    // every named entity supports a chunk, also one of a type the request leaves out
    const support = fromPassages ?? chunkSupport(candidates, request.query, matcher.nameTokens)
    const named = new Set(candidates.filter((c) => c.hop === 0 && c.matchedBy !== 'keyword' && c.matchedBy !== 'evidence').map((c) => c.entity.id))
    candidates = orderBySupport(candidates, fromPassages ? new Map() : support)
    if (types) candidates = candidates.filter((c) => c.entity.type !== undefined && types.has(c.entity.type))
    const names = new Map(hood.entities.map((e) => [e.id, e.name]))
    const nameOf = (id: string) => names.get(id) ?? id
    const items = withRelations(candidates.slice(0, request.top_k), named, maxRelations)
      .map((c, i) => renderItem(c, i + 1, nameOf, settings.maxEvidence, support))
    return {
      items,
      legs: [{ name: 'graph', status: 'ok', took_ms: round(performance.now() - started), hits: candidates.length }],
      match_strength: graphragMatchStrength(items),
      ...(ranPassages || degraded ? { uncacheable: true as const } : {})
    }
  }

  /** The name matches, then (with `meaning`) the entities found by meaning; `degraded` when the name search failed. */
  async function withMeaning(
    named: NameMatch[], matcher: PartMatcher, namespace: string, query: string, signal: AbortSignal
  ): Promise<{ matches: NameMatch[]; degraded?: true }> {
    if (!byMeaning) return { matches: named }
    try {
      return { matches: meaningMatches(named, await byMeaning.search(namespace, query, byMeaning.options.limit, signal), matcher, byMeaning.options.floor) }
    } catch (error) {
      // the vector store or the embedder down: graphrag answers by names, as without entity vectors
      if (signal.aborted) throw error
      return { matches: named, degraded: true }
    }
  }

  /**
   * The last fallback (`passages.ts`): the namespace's chunks best matching the question, the derived entities of
   * their documents that cite one of them (of the part read, of the request's types), the first `top_k` as candidates
   * with their relations. A lexical index that fails leaves the bundle empty, as before this fallback, rather than
   * failing the mode over a source it only falls back on.
   */
  async function passageFallback(
    request: GraphragRequest, namespace: string, matcher: PartMatcher, options: PassageFallbackOptions, search: PassageSearch,
    types: ReadonlySet<string> | undefined, signal: AbortSignal
  ): Promise<{ candidates: GraphCandidate[]; hood: KgNeighbourhood; support: ChunkSupport }> {
    const hits = await search(namespace, request.query, options.chunks, signal).catch((error: unknown) => {
      if (signal.aborted) throw error
      return []
    })
    signal.throwIfAborted()
    const empty: KgNeighbourhood = { entities: [], relations: [] }
    if (hits.length === 0) return { candidates: [], hood: empty, support: new Map() }
    const derived = (await graph.derivedOf(namespace, documentsOf(hits))).entities
    signal.throwIfAborted()
    const read = derived.filter((e) => !matcher.joined.has(e.id) && (!types || (e.type !== undefined && types.has(e.type))))
    const matches = passageMatches(hits, read).slice(0, request.top_k)
    const hood = matches.length === 0 ? empty : await graph.neighbourhood(namespace, matches.map((m) => m.entity.id), signal)
    return { candidates: passageCandidates(matches, hood), hood, support: passageSupport(hits) }
  }

  /** An imported entity's evidence, followed by the chunks of the derived entities of the same name (`both`). */
  async function withJoinedEvidence(candidates: GraphCandidate[], joins: ReadonlyMap<string, string[]>, namespace: string): Promise<GraphCandidate[]> {
    const wanted = [...new Set(candidates.flatMap((c) => joins.get(c.entity.id) ?? []))]
    if (wanted.length === 0) return candidates
    const chunks = new Map((await graph.getEntities(namespace, wanted)).map((e) => [e.id, e.source_chunk_ids] as const))
    return candidates.map((c) => {
      const more = (joins.get(c.entity.id) ?? []).flatMap((id) => chunks.get(id) ?? [])
      return more.length === 0 ? c : { ...c, entity: { ...c.entity, source_chunk_ids: [...new Set([...c.entity.source_chunk_ids, ...more])] } }
    })
  }
}

const round = (ms: number) => Math.round(ms * 100) / 100

/**
 * With `both`: the derived entities whose name or an alias is, normalised, an imported entity's name or alias, by
 * the imported entity's id (the first by id when several imported ones share it). The imported one wins the clash.
 */
function clashes(imported: readonly KgEntityNames[], derived: readonly KgEntityNames[]): Map<string, string[]> {
  const key = (name: string) => normalizeForMatch(name).replace(/\s+/g, ' ').trim()
  const owner = new Map<string, string>()
  for (const e of [...imported].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))) {
    for (const name of [e.name, ...e.aliases]) if (!owner.has(key(name))) owner.set(key(name), e.id)
  }
  const joins = new Map<string, string[]>()
  for (const d of derived) {
    const winner = [d.name, ...d.aliases].map((n) => owner.get(key(n))).find((id) => id !== undefined)
    if (winner !== undefined) joins.set(winner, [...(joins.get(winner) ?? []), d.id])
  }
  return joins
}

/** A namespace's matcher for one graph version, with what else is kept for that version: each name's analyzer tokens, filled as neighbours are met. */
type PartMatcher = NameMatcher & { part: GraphPart; joins: ReadonlyMap<string, string[]>; joined: ReadonlySet<string>; nameTokens: NameTokens }

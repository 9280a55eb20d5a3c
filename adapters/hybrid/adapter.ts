import type { Embedder } from '../../src/providers/embedder/port.js'
import type { LexicalIndex } from '../../src/providers/lexical-index/port.js'
import { DEFAULT_NAMESPACE } from '../../src/providers/namespace.js'
import { compileFilter, type MetadataCondition, type VectorFilter } from '../../src/providers/vector-store/filter.js'
import type { VectorStore } from '../../src/providers/vector-store/port.js'
import type { ChunkRecord } from '../../src/kernel/chunk-payload.js'
import type { LegReport } from '../../src/kernel/leg-report.js'
import { resolveLegs, runLeg, skippedLeg, type ResolvedLegs } from '../leg-runner.js'
import type { AdapterResult, ImageItem, ModeAdapter, RecallItem, RetrieveContext, StructuresRead } from '../types.js'
import type { ReachGraph } from '../graph-reach.js'
import { DEFAULT_FUSION, fuseLegs, impliedFusion, type Fusion, type LegHits } from './fusion.js'
import type { Normalisation } from './fusion-convex.js'
import { graphPassages, type GraphPassages } from './graph-passages.js'
import { HYBRID_LEGS, type HybridLeg, type HybridMetadata } from './spec.js'
import { hybridMatchStrength } from './strength.js'


/** Which chunks a hybrid request may return; every part must hold (AND). */
export interface HybridFilter {
  doc_ids?: readonly string[]
  /** The chunk's document source starts with it. */
  source_prefix?: string
  metadata?: readonly MetadataCondition[]
}

export interface HybridRequest {
  query: string
  top_k: number
  /** Default `default`. */
  namespace?: string
  legs?: readonly HybridLeg[]
  rrf_k?: number
  window?: number
  weights?: Partial<Record<HybridLeg, number>>
  /** How the legs are fused (default: `HybridDefaults.fusion`, else DEFAULT_FUSION); `alpha` and `normalisation` are convex's. */
  fusion?: Fusion
  alpha?: number
  normalisation?: Normalisation
  /** convex: the graph leg's weight (default DEFAULT_GRAPH_WEIGHT). */
  graph_weight?: number
  /** What the graph leg reads of the namespace's graph (the service fills in the namespace's setting). */
  structures?: StructuresRead
  /** Applied by both legs before they rank, so ranks (and RRF) are ranks among the chunks it keeps. */
  filter?: HybridFilter
  /** Also answer `image_items`: the namespace's pictures nearest the question, by the same question embedding. */
  include_images?: boolean
}

/** One namespace's corpus: its chunk catalog (for chunks the vector leg did not return, and for filters) and lexical index. */
export interface HybridCorpus {
  readonly collection: string
  readonly namespace: string
  readonly lexical: LexicalIndex
  readonly chunkCount: number
  chunk(id: string): ChunkRecord | undefined
  /**
   * Reads the chunks among `ids` that `chunk` cannot answer yet, where the corpus reads them on demand (a view of
   * the shared stores while the catalog is first read: the vector leg brings ids and scores only); a catalog holds
   * every chunk and has none.
   */
  prepare?(ids: readonly string[]): Promise<void>
  /** Ids of the documents whose source starts with `prefix`. */
  docIdsWithSourcePrefix(prefix: string): string[]
}

export interface HybridPorts {
  vectors: VectorStore
  embedder: Embedder
  /** The namespace's corpus; undefined when the namespace holds no documents. */
  corpus(namespace: string): HybridCorpus | undefined
  /** The knowledge graph as the `graph` leg reads it (the registry hands it graphrag's); absent: that leg is skipped. */
  graphReach?: ReachGraph
  /** The vector store's collection of the documents' pictures (src/corpus/images/); absent: `include_images` answers none. */
  images?: string
}

export interface HybridDefaults {
  rrfK: number
  window: number
  /** Fusion rule and convex settings; DEFAULT_FUSION when absent. */
  fusion?: Partial<Pick<typeof DEFAULT_FUSION, 'fusion' | 'alpha' | 'normalisation'>>
  /** Per-step timeouts in milliseconds (`graph`: the graph leg's, default 1000). */
  timeouts: { embedding: number; vector: number; lexical: number; graph?: number }
  /** The backend each step calls, as a timeout names it (`vector-store:qdrant`). */
  backends: { embedding: string; vector: string; lexical: string; graph?: string }
  /** The graph leg: entities kept (named first, then neighbours) and evidence chunks per entity (the cap). */
  graph?: { maxEntities: number; maxEvidence: number }
}

/** Entities the graph leg keeps, and chunks per entity (ApeMind's cap; graphrag shows 5 per item too). */
const GRAPH_LEG_DEFAULTS = { maxEntities: 50, maxEvidence: 5 }

export const HYBRID_DEFAULTS: HybridDefaults = {
  rrfK: 60,
  window: 50,
  timeouts: { embedding: 2000, vector: 1500, lexical: 1000 },
  backends: { embedding: 'embedder', vector: 'vector-store', lexical: 'lexical-index' }
}

/** Every requested leg failed; `legs` holds only the failed ones, and the message names each with its reason. */
export class AllLegsFailedError extends Error {
  constructor(readonly legs: LegReport[]) {
    super(legs.map((l) => `${l.name}: ${l.status}${l.reason ? ` (${l.reason})` : ''}`).join('; '))
  }
}

export type HybridAdapter = ModeAdapter<HybridRequest, HybridMetadata, 'hybrid'>
type HybridResult = AdapterResult<HybridMetadata, 'hybrid'>

export function createHybridAdapter(ports: HybridPorts, defaults: HybridDefaults = HYBRID_DEFAULTS): HybridAdapter {
  const legRuns: ResolvedLegs<keyof typeof HYBRID_LEGS> = resolveLegs(HYBRID_LEGS,
    { embedder: defaults.backends.embedding, vectors: defaults.backends.vector, lexical: defaults.backends.lexical, graph: defaults.backends.graph ?? 'knowledge-graph', episodes: '' },
    { embedding: defaults.timeouts.embedding, vector: defaults.timeouts.vector, lexical: defaults.timeouts.lexical, graph: defaults.timeouts.graph ?? 1000 })
  const graphSettings = defaults.graph ?? GRAPH_LEG_DEFAULTS

  async function retrieve(request: HybridRequest, signal?: AbortSignal, context: RetrieveContext = {}): Promise<HybridResult> {
    const legs = new Set<HybridLeg>(request.legs ?? ['vector', 'lexical'])
    const k = request.rrf_k ?? defaults.rrfK
    const window = request.window ?? defaults.window
    const namespace = request.namespace ?? DEFAULT_NAMESPACE
    const corpus = ports.corpus(namespace)
    // `default` always exists and runs its legs, as before namespaces; another namespace holding nothing is skipped
    if (!corpus || (corpus.chunkCount === 0 && namespace !== DEFAULT_NAMESPACE)) return skipEvery(legs, `namespace "${namespace}" is empty`)
    const filter = request.filter ? storeFilter(corpus, request.filter) : undefined
    if (filter?.doc_ids?.length === 0) return skipEvery(legs, 'the filter keeps no document')
    const keep = filter ? keptChunks(corpus, filter) : undefined

    // one question embedding for the vector leg and the pictures
    const embedding = legs.has('vector') || request.include_images ? embed(request.query, signal) : null
    const vectorLeg = legs.has('vector') ? vectorSearch(corpus, embedding!, window, filter, signal) : null
    const imagesLeg = request.include_images ? imageSearch(embedding!, namespace, request.top_k, filter, signal) : null
    const lexicalLeg = legs.has('lexical')
      ? runLeg(legRuns.lexical,
        (cancel) => corpus.lexical.search(request.query, window, {
          signal: cancel, ...(keep ? { filter: keep } : {}), ...(context.indexVersion !== undefined ? { stamp: context.indexVersion } : {})
        }), (h) => h.length, signal)
      : null
    const graphLeg = legs.has('graph') ? graphSearch(request, namespace, window, keep, signal) : null
    const [vector, lexical, graph, images] = await Promise.all([vectorLeg, lexicalLeg, graphLeg, imagesLeg])

    const reports: LegReport[] = [
      ...(vector ? vector.reports : [embedding ? (await embedding).report : skippedLeg('embedding', 'vector leg not requested'), skippedLeg('vector', 'not requested')]),
      lexical ? lexical.report : skippedLeg('lexical', 'not requested'),
      ...(graph ? [graph.report] : []),
      ...(images ? [images.report] : [])
    ]
    // a graph leg skipped (no graph to read) answered: nothing, as an empty namespace does
    const answered = (vector?.hits != null) || lexical?.ok === true || graph?.passages != null || graph?.report.status === 'skipped'
    if ((vector || lexical || graph) && !answered) throw new AllLegsFailedError(reports.filter((r) => r.status === 'error' || r.status === 'timeout'))

    const vectorHits = vector?.hits ?? []
    const lists: LegHits[] = []
    if (vector?.hits) lists.push({ leg: 'vector', hits: vectorHits })
    const lexicalHits = lexical?.ok ? lexical.value : []
    if (lexical?.ok) lists.push({ leg: 'lexical', hits: lexicalHits })
    const graphHits = graph?.passages?.hits ?? []
    if (graph?.passages) lists.push({ leg: 'graph', hits: graphHits })

    const fusion = { ...DEFAULT_FUSION, ...defaults.fusion }
    const fused = fuseLegs(lists, {
      fusion: impliedFusion(request) ?? fusion.fusion, k, window, weights: request.weights ?? {},
      alpha: request.alpha ?? fusion.alpha, normalisation: request.normalisation ?? fusion.normalisation,
      ...(request.graph_weight !== undefined ? { graphWeight: request.graph_weight } : {})
    })
    const vectorById = new Map(vectorHits.map((h) => [h.id, h]))
    const lexicalById = new Map(lexicalHits.map((h) => [h.id, h]))
    const graphById = new Map(graphHits.map((h) => [h.id, h]))
    const items: RecallItem<HybridMetadata, 'hybrid'>[] = []
    // The fused chunks in order, as many at a time as the answer still lacks: a view of the stores reads their
    // text first (a catalog holds every chunk: nothing to read); a chunk deleted between the legs' answers is skipped.
    for (let next = 0; items.length < request.top_k && next < fused.length;) {
      const batch = fused.slice(next, next + request.top_k - items.length)
      next += batch.length
      if (corpus.prepare) await corpus.prepare(batch.map((c) => c.id))
      for (const c of batch) {
        const chunk = corpus.chunk(c.id)
        if (!chunk) continue
        const legsMeta: HybridMetadata['legs'] = {}
        if (c.ranks.vector !== undefined) legsMeta.vector = { rank: c.ranks.vector, score: round4(vectorById.get(c.id)!.score) }
        if (c.ranks.lexical !== undefined) legsMeta.lexical = { rank: c.ranks.lexical, score: round4(lexicalById.get(c.id)!.score) }
        if (c.ranks.graph !== undefined) legsMeta.graph = { rank: c.ranks.graph, score: graphById.get(c.id)!.score }
        const paths = c.ranks.graph !== undefined ? graph?.passages?.paths.get(c.id) : undefined
        items.push({
          id: c.id,
          text: chunk.text,
          score: round6(c.score),
          source: chunk.source,
          mode: 'hybrid',
          metadata: {
            rank: items.length + 1,
            doc_id: chunk.doc_id,
            chunk_index: chunk.chunk_index,
            ...(chunk.title ? { title: chunk.title } : {}),
            ...(chunk.heading_path ? { heading_path: chunk.heading_path } : {}),
            ...(chunk.anchor ? { anchor: chunk.anchor } : {}),
            ...(chunk.page ? { page: chunk.page } : {}),
            ...(chunk.page_end ? { page_end: chunk.page_end } : {}),
            ...(chunk.metadata ? { doc_metadata: chunk.metadata } : {}),
            legs: legsMeta,
            ...(paths ? { graph_paths: paths } : {}),
            ...c.explanation
          }
        })
      }
    }
    const top = fused[0]
    const match_strength = hybridMatchStrength(
      items.length === 0 || !top ? undefined : { ranks: top.ranks, ...(vectorById.has(top.id) ? { vectorScore: vectorById.get(top.id)!.score } : {}) },
      lexical?.ok === true && lexicalHits.length === 0
    )
    // the graph changes with imports the documents' index version does not count: such an answer is not cached
    return { items, legs: reports, match_strength, ...(graph ? { uncacheable: true as const } : {}), ...(images ? { image_items: images.items } : {}) }
  }

  function embed(query: string, signal: AbortSignal | undefined) {
    return runLeg(legRuns.embedding, (cancel) => ports.embedder.embedQueries([query], cancel), (v) => v.length, signal)
  }

  /** The pictures nearest the question, ranked among themselves (a `filter`'s documents only; none with metadata conditions). */
  async function imageSearch(
    embedding: ReturnType<typeof embed>, namespace: string, limit: number, filter: VectorFilter | undefined, signal: AbortSignal | undefined
  ): Promise<{ items: ImageItem[]; report: LegReport }> {
    const collection = ports.images
    if (!collection) return { items: [], report: skippedLeg('images', 'this deployment keeps no pictures') }
    if (filter?.metadata?.length) return { items: [], report: skippedLeg('images', 'pictures carry no document metadata for filter.metadata to test') }
    const vector = await embedding
    if (!vector.ok) return { items: [], report: skippedLeg('images', 'query embedding failed') }
    const search = await runLeg(legRuns.vector, (cancel) => ports.vectors.search(collection, namespace, vector.value[0]!, limit,
      filter?.doc_ids ? { doc_ids: filter.doc_ids } : undefined, cancel), (h) => h.length, signal)
    const report = { ...search.report, name: 'images' }
    if (!search.ok) return { items: [], report }
    const items = search.value.map((hit): ImageItem => {
      const p = hit.payload as { doc_id: string; text: string; caption?: string; alt?: string; page?: number }
      return {
        id: hit.id, score: round6(hit.score), document: p.doc_id, ...(p.page !== undefined ? { page: p.page } : {}),
        caption: p.caption ?? p.alt ?? '', text: p.text,
        url: `/images/${encodeURIComponent(hit.id)}?namespace=${encodeURIComponent(namespace)}`
      }
    })
    return { items, report }
  }

  /** The graph leg: what the graph reaches from the question, as passages of the namespace kept by the filter. */
  async function graphSearch(
    request: HybridRequest, namespace: string, window: number, keep: ((id: string) => boolean) | undefined, signal: AbortSignal | undefined
  ): Promise<{ passages: GraphPassages | null; report: LegReport }> {
    const reach = ports.graphReach
    if (!reach) return { passages: null, report: skippedLeg('graph', 'this deployment gives hybrid no knowledge graph') }
    const outcome = await runLeg(legRuns.graph, async (cancel) => {
      const reached = await reach({
        query: request.query, namespace, ...(request.structures ? { structures: request.structures } : {}),
        maxEntities: graphSettings.maxEntities, maxEvidence: graphSettings.maxEvidence
      }, cancel)
      const kept = keep ? reached.entities.map((e) => ({ ...e, evidence: e.evidence.filter((c) => keep(c.chunk_id)) })) : reached.entities
      return { skipped: reached.skipped, passages: graphPassages(kept, window) }
    }, (v) => v.passages.hits.length, signal)
    if (!outcome.ok) return { passages: null, report: outcome.report }
    if (outcome.value.skipped !== undefined) return { passages: null, report: { ...skippedLeg('graph', outcome.value.skipped), took_ms: outcome.report.took_ms } }
    return { passages: outcome.value.passages, report: outcome.report }
  }

  async function vectorSearch(corpus: HybridCorpus, embedded: ReturnType<typeof embed>, window: number, filter: VectorFilter | undefined, signal: AbortSignal | undefined) {
    const embedding = await embedded
    if (!embedding.ok) {
      return { hits: null, reports: [embedding.report, skippedLeg('vector', 'query embedding failed')] }
    }
    const search = await runLeg(legRuns.vector,
      (cancel) => ports.vectors.rank(corpus.collection, corpus.namespace, embedding.value[0]!, window, filter, cancel), (h) => h.length, signal)
    return { hits: search.ok ? search.value : null, reports: [embedding.report, search.report] }
  }

  return { mode: 'hybrid', retrieve }
}

/** Every leg skipped for one reason (an empty namespace, a filter that keeps nothing): no backend is called. */
function skipEvery(legs: ReadonlySet<HybridLeg>, reason: string): HybridResult {
  const vector = legs.has('vector') ? reason : 'not requested'
  return {
    items: [],
    legs: [skippedLeg('embedding', legs.has('vector') ? reason : 'vector leg not requested'), skippedLeg('vector', vector),
      skippedLeg('lexical', legs.has('lexical') ? reason : 'not requested'), ...(legs.has('graph') ? [skippedLeg('graph', reason)] : [])],
    match_strength: 'none'
  }
}

/** The request's filter in the store's terms: a source prefix becomes the ids of the documents it names (from the catalog). */
function storeFilter(corpus: HybridCorpus, filter: HybridFilter): VectorFilter {
  let docIds = filter.doc_ids
  if (filter.source_prefix !== undefined) {
    const bySource = corpus.docIdsWithSourcePrefix(filter.source_prefix)
    const named = docIds ? new Set(docIds) : undefined
    docIds = named ? bySource.filter((id) => named.has(id)) : bySource
  }
  return { ...(docIds ? { doc_ids: docIds } : {}), ...(filter.metadata?.length ? { metadata: filter.metadata } : {}) }
}

/** The same filter over chunk ids, for the lexical leg: the chunk's document and metadata from the catalog. */
function keptChunks(corpus: HybridCorpus, filter: VectorFilter): (id: string) => boolean {
  const keep = compileFilter(filter)
  return (id) => {
    const c = corpus.chunk(id)
    return c !== undefined && keep(c)
  }
}

const round4 = (x: number) => Math.round(x * 1e4) / 1e4
const round6 = (x: number) => Math.round(x * 1e6) / 1e6

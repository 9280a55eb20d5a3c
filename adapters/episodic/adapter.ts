/**
 * The episodic mode adapter: m-flow's episodic bundle search (docs/episodic.md) over the configured
 * vector store, graph store and embedder. The steps are the pure functions of this folder; this file
 * only fetches (query embedding, vector recall, projection) and shapes recall-bundle items.
 */
import type { LegReport } from '../../src/kernel/leg-report.js'
import type { Embedder } from '../../src/providers/embedder/port.js'
import type { EpisodicGraphStore, TimeRangeMs } from '../../src/providers/episodic-graph/port.js'
import { DERIVED_COLLECTION_PREFIX, DERIVED_EPISODE_PREFIX, EPISODE_OWNED_COLLECTIONS } from '../../src/providers/episodic-graph/collections.js'
import { CONVERSATION_EPISODE_PREFIX } from '../../src/providers/episodic-graph/port.js'
import type { ServiceAnalyzer } from '../../src/kernel/analyzers.js'
import { DEFAULT_NAMESPACE } from '../../src/providers/namespace.js'
import type { VectorStore } from '../../src/providers/vector-store/port.js'
import type { AdapterResult, ModeAdapter, RecallItem, StructuresRead } from '../types.js'
import { evidenceOf, MAX_EPISODE_EVIDENCE } from './evidence.js'
import { citedTurns, turnsOf } from './turns.js'
import { DEFAULT_TURN_EVIDENCE, episodeOfTurnPoint, rescoreSessions, scoreTurns, sessionTimePenalty, turnsInContext, type ScoredTurns } from './turn-evidence.js'
import { storedTurnsOf } from '../../src/kernel/conversation-turns.js'
import { DEFAULT_EPISODIC_CONFIG, resolveEpisodicConfig, type EpisodicConfig } from './config.js'
import { normaliseCollections, type DistanceHit } from './normalise.js'
import { formatEpisodeTime } from './output.js'
import { effectiveVectorLimit, runEpisodicPipeline } from './pipeline.js'
import { preprocessQuery } from './preprocess.js'
import type { CollectionHits, DisplayMode, EpisodeBundle, EpisodicNode } from './types.js'
import { resolveLegs, runRequiredLeg, type LegRun } from '../leg-runner.js'
import { EPISODIC_LEGS, type EpisodicMetadata } from './spec.js'
import { episodicMatchStrength, topTie } from './strength.js'

export { EpisodicOptionError,    } from './config.js'

export interface EpisodicPorts {
  graph: EpisodicGraphStore
  vectors: VectorStore
  embedder: Embedder
}

export interface EpisodicAdapterDefaults {
  /** `COLLECTION_PREFIX`: collections are `${prefix}${name}`. Default ''. */
  collectionPrefix?: string
  /** Deployment-wide overrides of the tuning constants (`EpisodicConfig`). */
  config?: Partial<EpisodicConfig>
  /** Clock for relative query times, epoch ms. Default `Date.now`. */
  now?: () => number
  /** Per-step timeouts in milliseconds; a step that overruns fails the request (503 naming the backend). */
  timeouts?: { embedding: number; vector: number; graph: number }
  /** Evidence chunks per derived Episode item (`evidence.ts`). Default 5. */
  maxEvidence?: number
  /** The backend each step calls, as a timeout names it (`vector-store:qdrant`). */
  backends?: { embedding: string; vector: string; graph: string }
  /** The analyzer of the lexical index (`LEXICAL_STEMMING`): a conversation's turns are matched with it. Default `cjk-bigram`. */
  analyzer?: ServiceAnalyzer
}

/** The turns of a namespace's conversations scored per question: the nearest this many (all of a conversation of fewer). */
const TURN_POOL = 2000
const TURN_COLLECTION = 'FacetPoint_search_text'

/** The validated episodic request: the common fields plus `display_mode` and the tunable constants. */
export interface EpisodicRequest {
  query: string
  top_k: number
  /** The memory space searched; default `default`. */
  namespace?: string
  /** Only Episodes whose mentioned time overlaps it (EpisodicGraphStore.episodesInTimeRange). */
  time_range?: TimeRangeMs
  /** Imported Episodes, derived ones, or both; absent: the derived ones only where the namespace has no imported one. */
  structures?: StructuresRead
  display_mode?: DisplayMode
  [option: string]: unknown
}

const ms = (t: number): number => Math.round(t * 100) / 100
const iso = (v: number | null | undefined): string | null => (typeof v === 'number' ? new Date(v).toISOString() : null)

/** Creates the episodic adapter; nothing is fetched until the first request. */
export type EpisodicAdapter = ModeAdapter<EpisodicRequest, EpisodicMetadata, 'episodic'>

/** Runs one backend call under its leg's deadline, with a signal that cancels it; a failure fails the request. */
const within = async <T>(leg: LegRun, work: (signal: AbortSignal) => Promise<T>, signal: AbortSignal | undefined): Promise<T> =>
  (await runRequiredLeg(leg, work, () => 0, signal)).value

export function createEpisodicAdapter(ports: EpisodicPorts, defaults: EpisodicAdapterDefaults = {}): EpisodicAdapter {
  const base: EpisodicConfig = { ...DEFAULT_EPISODIC_CONFIG, ...defaults.config }
  const prefix = defaults.collectionPrefix ?? ''
  const now = defaults.now ?? Date.now
  const maxEvidence = defaults.maxEvidence ?? MAX_EPISODE_EVIDENCE
  const analyzer = defaults.analyzer ?? 'cjk-bigram'
  const timeouts = defaults.timeouts ?? { embedding: 2000, vector: 1500, graph: 2000 }
  const backends = defaults.backends ?? { embedding: 'embedder', vector: 'vector-store', graph: 'episodic-graph' }
  const legs = resolveLegs(EPISODIC_LEGS,
    { embedder: backends.embedding, vectors: backends.vector, episodes: backends.graph, lexical: '', graph: '' },
    { embedding: timeouts.embedding, vector: timeouts.vector, graph: timeouts.graph, lexical: 0 })

  return {
    mode: 'episodic',
    async retrieve(request: EpisodicRequest, signal?: AbortSignal): Promise<AdapterResult<EpisodicMetadata, 'episodic'>> {
      // Which collections are searched is deployment configuration, not a request option.
      const { query: _q, collections: _c, namespace: requested, time_range: timeRange, structures, ...overrides } = request
      const namespace = requested ?? DEFAULT_NAMESPACE
      const cfg = resolveEpisodicConfig(overrides, base)
      const pre = preprocessQuery(request.query, cfg, now())
      const limit = effectiveVectorLimit(pre, cfg)
      const reports: LegReport[] = []

      // A time range keeps the Episodes it overlaps, before any search: the vector searches of their own
      // collections and the bundles are restricted to them, so top_k comes from the Episodes that match.
      let t = performance.now()
      let inRange: Set<string> | undefined
      if (timeRange) {
        inRange = new Set(await within(legs.time_range, (cancel) => ports.graph.episodesInTimeRange(namespace, timeRange, cancel), signal))
        if (inRange.size === 0) {
          const reason = `no Episode of namespace "${namespace}" has a mentioned time in the range`
          return {
            items: [], match_strength: 'none',
            legs: [{ name: 'time_range', status: 'ok', took_ms: ms(performance.now() - t), hits: 0 },
              ...['embedding', 'vector'].map((name) => ({ name, status: 'skipped' as const, took_ms: 0, hits: 0, reason }))]
          }
        }
        reports.push({ name: 'time_range', status: 'ok', took_ms: ms(performance.now() - t), hits: inRange.size })
      }

      t = performance.now()
      const [vector] = await within(legs.embedding, (cancel) => ports.embedder.embedQueries([pre.vector_query], cancel), signal)
      reports.push({ name: 'embedding', status: 'ok', took_ms: ms(performance.now() - t), hits: 1 })
      signal?.throwIfAborted()

      t = performance.now()
      // Raw cosine per node before normalisation: it says how close the winning evidence really is.
      const rawSimilarity = new Map<string, number>()
      // Imported Episodes and derived ones live in collections of their own: what is read is what is searched.
      const search = (part: string) => Promise.all(cfg.collections.map(async (collection) => {
        const filter = inRange && EPISODE_OWNED_COLLECTIONS.has(collection) ? { doc_ids: [...inRange] } : undefined
        const found = await within(legs.vector, (cancel) => ports.vectors.search(`${prefix}${part}${collection}`, namespace, vector!, limit, filter, cancel), signal)
        return found.map((h) => ({ id: h.id, score: h.score, distance: 1 - h.score, text: h.payload.text }))
      }))
      const [imported, derived] = await Promise.all([
        structures === 'derived' ? undefined : search(''),
        structures === 'imported' ? undefined : search(DERIVED_COLLECTION_PREFIX)
      ])
      const importedHits = imported?.some((l) => l.length > 0) ?? false
      const read: StructuresRead = structures ?? (importedHits || !derived ? 'imported' : 'derived')
      const found = cfg.collections.map((_, i) => [
        ...(read !== 'derived' ? imported?.[i] ?? [] : []), ...(read !== 'imported' ? derived?.[i] ?? [] : [])
      ])
      for (const list of found) for (const h of list) if ((rawSimilarity.get(h.id) ?? -Infinity) < h.score) rawSimilarity.set(h.id, h.score)
      // A conversation's session is ranked, and cites its turns, by the turns' own evidence (turn-evidence.ts): the
      // turns are pooled by one wider search of their FacetPoints when the question's vector found any of them.
      const pointsAt = cfg.collections.indexOf(TURN_COLLECTION)
      let turnScores: ScoredTurns | undefined
      if (read !== 'imported' && pointsAt >= 0 && (derived?.[pointsAt] ?? []).some((h) => h.id.startsWith(CONVERSATION_EPISODE_PREFIX))) {
        const filter = inRange ? { doc_ids: [...inRange] } : undefined
        const wide = await within(legs.vector, (cancel) => ports.vectors.search(`${prefix}${DERIVED_COLLECTION_PREFIX}${TURN_COLLECTION}`, namespace, vector!, TURN_POOL, filter, cancel), signal)
        const pool = wide.filter((h) => h.id.startsWith(CONVERSATION_EPISODE_PREFIX) && h.id.includes('/t/'))
          .map((h) => ({ point: h.id, episode: episodeOfTurnPoint(h.id), text: h.payload.text, similarity: h.score }))
        turnScores = scoreTurns(pool, request.query, analyzer, DEFAULT_TURN_EVIDENCE)
      }
      const raw: DistanceHit[][] = found.map((list) => list.map(({ id, distance, text }) => ({ id, distance, text })))
      // Cosine similarity -> distance, then min-max by the request's rule (difference 6, or m-flow's per collection),
      // in the configured collection order whatever order the searches finished in.
      const hits: CollectionHits = normaliseCollections(
        Object.fromEntries(cfg.collections.map((c, i) => [c, raw[i]!])), cfg.normalisation)
      const hitCount = Object.values(hits).reduce((n, l) => n + l.length, 0)
      reports.push({ name: 'vector', status: 'ok', took_ms: ms(performance.now() - t), hits: hitCount })
      signal?.throwIfAborted()
      if (hitCount === 0 && namespace !== DEFAULT_NAMESPACE) {
        // Every collection came back empty: the namespace holds no episodic memory (a read creates none).
        reports.push({ name: 'graph', status: 'skipped', took_ms: 0, hits: 0, reason: `namespace "${namespace}" holds no Episodes` })
        return { items: [], legs: reports, match_strength: 'none' }
      }

      const time = pre.time_info
      const questionTime = time?.has_time && time.start_ms !== null && time.end_ms !== null ? { start_ms: time.start_ms, end_ms: time.end_ms } : null
      t = performance.now()
      let projections = 0
      const result = await runEpisodicPipeline(pre, hits, cfg, {
        project: (request) => {
          projections++
          return within(legs.graph, (cancel) => ports.graph.project(namespace, request, cancel), signal)
        },
        describe: (ids) => within(legs.graph, (cancel) => ports.graph.describe(namespace, ids, cancel), signal)
      }, {
        ...(inRange ? { episodes: inRange } : {}),
        // a projection may cross to the other part through a shared entity: only the part read answers
        ...(read !== 'both' ? { keep: (id: string) => id.startsWith(DERIVED_EPISODE_PREFIX) === (read === 'derived') } : {}),
        ...(turnScores ? {
          rescore: (bundles: EpisodeBundle[], nodes: ReadonlyMap<string, EpisodicNode>) => rescoreSessions(bundles, turnScores, CONVERSATION_EPISODE_PREFIX,
            (episode) => sessionTimePenalty(nodes.get(episode), questionTime, DEFAULT_TURN_EVIDENCE.timeWeight))
        } : {})
      })
      reports.push({
        name: 'graph', status: 'ok', took_ms: ms(performance.now() - t), hits: result.fragment.nodes.size,
        ...(projections === 0 ? { reason: 'no node hit: nothing to project' } : {})
      })

      const inContext = turnScores && turnsInContext(result.output.bundles.map((a) => storedTurnsOf(a.node)), turnScores, DEFAULT_TURN_EVIDENCE, questionTime)
      const items = result.output.bundles.map((a): RecallItem<EpisodicMetadata, 'episodic'> => {
        const b = a.bundle
        const node = a.node
        const score = 1 / (1 + b.score)
        const turns = inContext && b.episode_id.startsWith(CONVERSATION_EPISODE_PREFIX) ? citedTurns(node, inContext) : turnsOf(node, b, rawSimilarity)
        return {
          id: b.episode_id,
          text: a.block,
          score,
          source: `episode:${b.episode_id}`,
          mode: 'episodic',
          metadata: {
            rank: a.rank + 1,
            score_kind: 'bundle_cost',
            cost: b.score,
            normalisation: cfg.normalisation,
            best_path: b.best_path,
            best_support_id: b.best_support_id,
            best_facet_id: b.best_facet_id,
            best_point_id: b.best_point_id,
            best_entity_id: b.best_entity_id,
            support_similarity: round4(rawSimilarity.get(b.best_support_id ?? '') ?? null),
            name: node.name ?? null,
            time: formatEpisodeTime(node),
            mentioned_time_start: iso(node.mentioned_time_start_ms),
            mentioned_time_end: iso(node.mentioned_time_end_ms),
            created_at: iso(node.created_at),
            display_mode: cfg.display_mode,
            derived: typeof node.derived_doc === 'string',
            evidence: evidenceOf(node, b, score, maxEvidence),
            ...(turns ? { turns } : {}),
            ...(cfg.display_mode === 'detail' ? { edges: a.edges } : {}),
            query: {
              vector_query: pre.vector_query,
              keyword_terms: pre.use_hybrid ? pre.keyword_terms : [],
              hybrid_reason: pre.hybrid_reason,
              time_range: pre.time_info?.has_time
                ? { start: iso(pre.time_info.start_ms), end: iso(pre.time_info.end_ms), confidence: pre.time_info.confidence }
                : null,
              vector_limit: limit
            }
          }
        }
      })
      const top = items[0]
      const tie = topTie(result.output.bundles.map((a) => a.bundle))
      return {
        items, legs: reports, ...(tie ? { tie } : {}),
        match_strength: episodicMatchStrength(top ? top.metadata.support_similarity : undefined, tie !== undefined)
      }
    }
  }
}

const round4 = (x: number | null): number | null => (x === null ? null : Math.round(x * 1e4) / 1e4)

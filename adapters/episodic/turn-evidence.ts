/**
 * Turn-level evidence for conversation sessions (docs/conversations.md, "Reading"). A session's Episode is ranked, and
 * cites its turns, by what each turn itself shows of the question: its cosine and its BM25 over the pooled turns (the
 * service's analyzer, so English words are stemmed with the English model), each min-max normalised over the pool and
 * averaged, as hybrid fuses its legs for chunks. A session costs 1 - its best turn's score (plus the time weight when
 * the question names a time the session's does not meet); in the sessions shown, a turn also gains from its better neighbour and from
 * a question time that covers its own, and each item cites its turns scoring at least the `cited`-th best.
 */
import { ANALYZERS, type ServiceAnalyzer } from '../../src/kernel/analyzers.js'
import type { StoredTurn } from '../../src/kernel/conversation-turns.js'
import type { EpisodeBundle } from './types.js'

/** One turn as the wide search of the FacetPoints found it: its point id, its session's Episode id, text and cosine. */
export interface PooledTurn {
  point: string
  episode: string
  text: string
  similarity: number
}

export interface TurnEvidenceSettings {
  /** The vector's share of a turn's score (the rest is BM25's); 0.5 as hybrid's convex fusion. */
  vectorWeight: number
  /** Added to a shown turn's score at most, when the question names a time that covers the turn's. */
  timeWeight: number
  /** Turns cited per answer: a session cites its turns scoring at least the `cited`-th best turn of the pool. */
  cited: number
  /** A shown session's turn gains this share of its better neighbour's score (the turn said just before or after). */
  neighbourWeight: number
  /** A shown session's turn gains this share of its session's best turn's score. */
  sessionWeight: number
}

/** Chosen on LoCoMo conversations 2-9 (docs/conversations.md, "Measured on LoCoMo-10"). */
export const DEFAULT_TURN_EVIDENCE: TurnEvidenceSettings = { vectorWeight: 0.5, timeWeight: 1, cited: 10, neighbourWeight: 0.6, sessionWeight: 0.2 }

const POINT_MARK = '/t/'

/** The session Episode a conversation turn's FacetPoint belongs to (`<episode>/t/<turn>`, the turn id URI-encoded). */
export const episodeOfTurnPoint = (point: string): string => point.slice(0, point.lastIndexOf(POINT_MARK))

export interface ScoredTurns {
  /** Each turn's score by point id: in [0, 1] from the pool; in context (turnsInContext), with what it gained. */
  score: Map<string, number>
  /** Each session's best turn: its point and score. */
  best: Map<string, { point: string; score: number }>
  /** The score a turn needs to be cited (the `cited`-th best of the pool). */
  threshold: number
}

function minMax(values: readonly number[]): (x: number) => number {
  let lo = Infinity
  let hi = -Infinity
  for (const v of values) { if (v < lo) lo = v; if (v > hi) hi = v }
  return hi > lo ? (x) => (x - lo) / (hi - lo) : (x) => (hi > 0 && x === hi ? 1 : 0)
}

// A turn's text never changes under its point id's text: its tokens are kept (the most recent, bounded) across questions.
const TOKEN_CACHE_SIZE = 50_000
const tokenCache = new Map<string, string[]>()

function analyzeWith(analyzer: ServiceAnalyzer, text: string): string[] {
  const key = `${analyzer}\u0000${text}`
  const held = tokenCache.get(key)
  if (held) return held
  const tokens = ANALYZERS[analyzer](text)
  if (tokenCache.size >= TOKEN_CACHE_SIZE) tokenCache.delete(tokenCache.keys().next().value!)
  tokenCache.set(key, tokens)
  return tokens
}

const K1 = 1.2
const B = 0.75

/** BM25 (k1 1.2, b 0.75) of `query` over `texts`, the pool as the corpus. */
export function bm25Scores(query: string, texts: readonly string[], analyzer: ServiceAnalyzer): number[] {
  const terms = [...new Set(ANALYZERS[analyzer](query))]
  if (terms.length === 0 || texts.length === 0) return texts.map(() => 0)
  const docs = texts.map((t) => analyzeWith(analyzer, t))
  const avg = docs.reduce((n, d) => n + d.length, 0) / docs.length || 1
  const wanted = new Set(terms)
  const counts = docs.map((d) => {
    const c = new Map<string, number>()
    for (const token of d) if (wanted.has(token)) c.set(token, (c.get(token) ?? 0) + 1)
    return c
  })
  const idf = new Map(terms.map((term) => {
    const df = counts.reduce((n, c) => n + (c.has(term) ? 1 : 0), 0)
    return [term, Math.log(1 + (docs.length - df + 0.5) / (df + 0.5))]
  }))
  return counts.map((c, i) => {
    let s = 0
    for (const [term, tf] of c) s += idf.get(term)! * (tf * (K1 + 1)) / (tf + K1 * (1 - B + B * docs[i]!.length / avg))
    return s
  })
}

/** How much of a turn's own time (its anchored mention, else its session's day) the question's time range covers, in [0, 1]. */
export function timeOverlap(turn: Pick<StoredTurn, 'time_ms' | 'mentioned'> | undefined, range: { start_ms: number; end_ms: number } | null): number {
  if (!turn || !range) return 0
  const day = 86_400_000
  const start = turn.mentioned?.start_ms ?? Math.floor(turn.time_ms / day) * day
  const end = turn.mentioned?.end_ms ?? start + day
  const overlap = Math.min(end, range.end_ms) - Math.max(start, range.start_ms)
  return overlap > 0 ? overlap / (end - start) : 0
}

/** Scores the pooled turns for `query`: the convex combination of their min-max normalised cosine and BM25. */
export function scoreTurns(pool: readonly PooledTurn[], query: string, analyzer: ServiceAnalyzer, settings: Pick<TurnEvidenceSettings, 'vectorWeight' | 'cited'>): ScoredTurns {
  const lexical = bm25Scores(query, pool.map((t) => t.text), analyzer)
  const v = minMax(pool.map((t) => t.similarity))
  const l = minMax(lexical)
  const score = new Map<string, number>()
  const best = new Map<string, { point: string; score: number }>()
  pool.forEach((t, i) => {
    const s = settings.vectorWeight * v(t.similarity) + (1 - settings.vectorWeight) * l(lexical[i]!)
    score.set(t.point, s)
    const held = best.get(t.episode)
    if (!held || s > held.score || (s === held.score && t.point < held.point)) best.set(t.episode, { point: t.point, score: s })
  })
  const sorted = [...score.values()].sort((a, b) => b - a)
  const threshold = sorted[Math.min(settings.cited, sorted.length) - 1] ?? 0
  return { score, best, threshold }
}

const sessionBundle = (episode: string, best: { point: string; score: number }, penalty: number): EpisodeBundle => ({
  episode_id: episode, score: 1 - best.score + penalty, best_path: 'point', best_support_id: best.point,
  best_facet_id: null, best_point_id: best.point, best_entity_id: null
})

/**
 * The bundles with every conversation session (an Episode id starting with `prefix`) costed 1 - its best turn's score
 * plus `penaltyOf` its Episode (sessionTimePenalty), those the pool holds but the projection did not reach added; a
 * session none of whose turns was pooled comes after them (its path cost + 1). Other Episodes keep their bundles.
 */
export function rescoreSessions(
  bundles: readonly EpisodeBundle[], scored: ScoredTurns, prefix: string, penaltyOf: (episode: string) => number = () => 0
): EpisodeBundle[] {
  const out: EpisodeBundle[] = []
  const seen = new Set<string>()
  for (const b of bundles) {
    if (!b.episode_id.startsWith(prefix)) { out.push(b); continue }
    seen.add(b.episode_id)
    const best = scored.best.get(b.episode_id)
    out.push(best ? sessionBundle(b.episode_id, best, penaltyOf(b.episode_id)) : { ...b, score: b.score + 1 })
  }
  for (const [episode, best] of scored.best) if (!seen.has(episode)) out.push(sessionBundle(episode, best, penaltyOf(episode)))
  return out
}

/**
 * The turns of the sessions shown (each session's stored turns in the order they were said) scored again in context:
 * a turn gains `neighbourWeight` of its better neighbour's score, `sessionWeight` of its session's best and, when the
 * question names a time, `timeWeight` times the share of the turn's time within it (timeOverlap); the threshold is
 * then the `cited`-th best of these turns.
 */
export function turnsInContext(
  sessions: ReadonlyArray<readonly Pick<StoredTurn, 'point' | 'time_ms' | 'mentioned'>[]>, scored: ScoredTurns,
  settings: TurnEvidenceSettings, range: { start_ms: number; end_ms: number } | null = null
): ScoredTurns {
  const score = new Map<string, number>()
  for (const turns of sessions) {
    const own = turns.map((t) => scored.score.get(t.point) ?? 0)
    const best = Math.max(0, ...own)
    turns.forEach((t, i) => {
      const neighbour = Math.max(own[i - 1] ?? 0, own[i + 1] ?? 0)
      score.set(t.point, own[i]! + settings.neighbourWeight * neighbour + settings.sessionWeight * best + settings.timeWeight * timeOverlap(t, range))
    })
  }
  const sorted = [...score.values()].sort((a, b) => b - a)
  return { score, best: scored.best, threshold: sorted[Math.min(settings.cited, sorted.length) - 1] ?? 0 }
}

/**
 * `weight` when the question names a time (`range`) that the Episode's mentioned time (a session's day widened by the
 * times its turns name) does not meet, else 0: added to a session's cost, so that costs stay at 0 or more.
 */
export function sessionTimePenalty(
  node: { mentioned_time_start_ms?: number | null; mentioned_time_end_ms?: number | null } | undefined,
  range: { start_ms: number; end_ms: number } | null, weight: number
): number {
  if (!range) return 0
  const start = node?.mentioned_time_start_ms
  const end = node?.mentioned_time_end_ms
  const meets = typeof start === 'number' && typeof end === 'number' && Math.min(end, range.end_ms) > Math.max(start, range.start_ms)
  return meets ? 0 : weight
}

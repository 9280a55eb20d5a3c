import type { MatchStrength } from '../adapters/types.js'
import { Errors } from './errors.js'
import { responseCacheKey, type Cache } from './providers/cache/index.js'
import type { ModeTable } from './modes.js'
import type { Mode } from './schemas/recall-bundle.js'
import type { RetrieveBody, RetrieveQuery } from './schemas/retrieve.js'
import type { RetrieveResponse } from './schemas/recall-item.js'

/** A validated retrieve request, the same whether it came by GET or POST. */
export type RetrieveRequest = Omit<RetrieveBody, 'top_k'> & { top_k: number }

/** Options that belong to one mode; sending them with another is a mistake worth a 400. */
const MODE_OPTIONS: Record<string, readonly (keyof RetrieveRequest)[]> = {
  hybrid: ['legs', 'rrf_k', 'window', 'weights'],
  graphrag: ['max_relations'],
  episodic: ['episodic']
}

export function fromQueryString(q: RetrieveQuery): RetrieveRequest {
  return {
    mode: q.mode, query: q.q, top_k: q.top_k ?? 10,
    ...(q.legs !== undefined ? { legs: [...new Set(q.legs.split(','))] as RetrieveRequest['legs'] } : {}),
    ...(q.rrf_k !== undefined ? { rrf_k: q.rrf_k } : {}),
    ...(q.window !== undefined ? { window: q.window } : {})
  }
}

export function fromBody(b: RetrieveBody): RetrieveRequest {
  return { ...b, top_k: b.top_k ?? 10 }
}

/** Checks what the schema cannot: blank and over-long queries, options of another mode. */
export function checkRequest(r: RetrieveRequest, maxQueryChars: number): void {
  if (r.query.trim() === '') throw new Errors.badRequest('query is blank')
  const length = [...r.query].length
  if (length > maxQueryChars) throw new Errors.badRequest(`query is ${length} characters long; the limit is ${maxQueryChars} (MAX_QUERY_CHARS)`)
  for (const [mode, options] of Object.entries(MODE_OPTIONS)) {
    if (mode === r.mode) continue
    const misplaced = options.filter((k) => r[k] !== undefined)
    if (misplaced.length > 0) throw new Errors.badRequest(`${misplaced.join(', ')} apply to mode=${mode} only, not mode=${r.mode}`)
  }
}

export interface CachedRetrievalDeps {
  modes: ModeTable
  cache: Cache
  /** 0 turns the response cache off. */
  ttlSeconds: number
  indexVersion(mode: Mode): Promise<string>
  onCacheLookup?(hit: boolean): void
  onLegs?(mode: string, legs: RetrieveResponse['legs']): void
}

/** What a cached answer ends with; a hit rewrites this tail (the rest is sent as stored, unparsed). */
const CACHED_TAIL = '"cached":false,"took_ms":'

/**
 * Answers from the response cache when it holds this exact request at the current index version;
 * otherwise runs the mode and caches the answer, unless a leg timed out or failed (a degraded answer
 * should not outlive the fault). A hit is returned as the stored JSON text with only `cached` and
 * `took_ms` rewritten, so the hot path neither parses nor re-serialises the bundle.
 */
export async function retrieveCached(deps: CachedRetrievalDeps, r: RetrieveRequest): Promise<{ body: RetrieveResponse | string; cached: boolean }> {
  const started = performance.now()
  // No version (its store is down) means no caching for this request; the mode itself will say why.
  const version = deps.ttlSeconds > 0 ? await deps.indexVersion(r.mode as Mode).catch(() => undefined) : undefined
  const key = version === undefined ? undefined : responseCacheKey(r.mode, r, version)
  if (key) {
    const hit = await deps.cache.get(key)
    const tail = hit === undefined ? -1 : hit.lastIndexOf(CACHED_TAIL)
    const usable = hit !== undefined && tail > 0 && hit.startsWith('{"mode":') && hit.endsWith('}')
    deps.onCacheLookup?.(usable)
    if (usable) {
      const tookMs = Math.round((performance.now() - started) * 100) / 100
      return { body: `${hit.slice(0, tail)}"cached":true,"took_ms":${tookMs}}`, cached: true }
    }
  }
  const response = await retrieve(deps.modes, r)
  deps.onLegs?.(r.mode, response.legs)
  if (key && response.legs.every((l) => l.status === 'ok' || l.status === 'skipped')) {
    await deps.cache.set(key, JSON.stringify(response), deps.ttlSeconds)
  }
  return { body: response, cached: false }
}

export async function retrieve(modes: ModeTable, r: RetrieveRequest): Promise<RetrieveResponse> {
  const started = performance.now()
  const adapter = modes[r.mode as Mode]
  const { mode: _mode, episodic, ...options } = r
  const result = await adapter.retrieve({ ...options, ...(episodic ?? {}) } as never)
  const match_strength: MatchStrength = result.match_strength ?? (result.items.length === 0 ? 'none' : 'weak')
  return {
    mode: r.mode,
    query: r.query,
    recall_bundle: result.items,
    legs: result.legs,
    match_strength,
    cached: false,
    took_ms: Math.round((performance.now() - started) * 100) / 100
  } as RetrieveResponse
}

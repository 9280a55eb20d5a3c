import type { FastifyInstance } from 'fastify'
import type { ReadState } from './generations.js'
import type { AdapterResult, MatchStrength, RetrieveContext } from '../adapters/types.js'
import { Errors } from './errors.js'
import type { StartupStep } from './kernel/startup-steps.js'
import { responseCacheKey, type Cache } from './providers/cache/index.js'
import { legBackendsOf, MODE_DEFINITIONS, modeDefinition, type Mode, type ModeTable } from './modes.js'
import { DEFAULT_NAMESPACE } from './providers/namespace.js'
import { misplacedFilter, normaliseFilter } from './request-filter.js'
import type { RetrieveBody, RetrieveQuery } from './schemas/retrieve.js'
import type { RetrieveResponse } from './schemas/recall-item.js'
import { READS_STRUCTURES, readsStructures, structuresOf, withRetrievalDefaults, type RetrievalDefaults } from './retrieval-defaults.js'

/** A validated retrieve request, the same whether it came by GET or POST. */
export type RetrieveRequest = Omit<RetrieveBody, 'top_k' | 'namespace'> & { top_k: number; namespace: string }

const withoutMinGeneration = ({ min_generation: _, ...r }: RetrieveRequest) => r

/** The start-up steps (src/services.ts) each mode waits for before it answers. */
export const MODE_STARTUP_STEPS: Record<Mode, readonly StartupStep[]> =
  Object.fromEntries(MODE_DEFINITIONS.map((d) => [d.name, d.startup])) as Record<Mode, readonly StartupStep[]>

/** Options that belong to one mode; sending them with another is a mistake worth a 400. */
const MODE_OPTIONS: ReadonlyArray<readonly [Mode, readonly string[]]> =
  MODE_DEFINITIONS.map((d) => [d.name, Object.keys(d.options)] as const)

/** Every mode's option names, which are not the mode's adapter's own business (common fields are). */
const ALL_OPTIONS: ReadonlySet<string> = new Set(MODE_OPTIONS.flatMap(([, options]) => options))

export function fromQueryString(q: RetrieveQuery): RetrieveRequest {
  return {
    mode: q.mode, query: q.q, top_k: q.top_k ?? 10, namespace: q.namespace ?? DEFAULT_NAMESPACE,
    ...modeDefinition(q.mode).fromQuery(q as Record<string, unknown>),
    ...(q.structures !== undefined ? { structures: q.structures } : {}),
    ...(q.min_generation !== undefined ? { min_generation: q.min_generation } : {})
  } as RetrieveRequest
}

export function fromBody(b: RetrieveBody): RetrieveRequest {
  return { ...b, top_k: b.top_k ?? 10, namespace: b.namespace ?? DEFAULT_NAMESPACE }
}

/**
 * Checks what the schema cannot (blank and over-long queries, options and filters of another mode, filter
 * times) and returns the request with its filter normalised; `where` names the request in messages.
 */
export function checkRequest(r: RetrieveRequest, maxQueryChars: number, where = 'body'): RetrieveRequest {
  checkQuery(r.query, maxQueryChars)
  const misplaced = misplacedOptions(r, `${where}/`)
  if (misplaced) throw new Errors.badRequest(misplaced)
  return withNormalisedFilter(r, where)
}

/** The request with its filter (if any) normalised; a bad filter time is a 400 named under `where`. */
export function withNormalisedFilter(r: RetrieveRequest, where = 'body'): RetrieveRequest {
  return r.filter ? { ...r, filter: normaliseFilter(r.filter, `${where}/filter`) } : r
}

export function checkQuery(query: string, maxQueryChars: number): void {
  if (query.trim() === '') throw new Errors.badRequest('query is blank')
  // The UTF-16 length bounds the code-point count from above, so only long queries are counted.
  if (query.length > maxQueryChars) {
    const length = [...query].length
    if (length > maxQueryChars) throw new Errors.badRequest(`query is ${length} characters long; the limit is ${maxQueryChars} (MAX_QUERY_CHARS)`)
  }
}

/** What is wrong when the request carries options (or filter parts, named under `at`) of another mode than its own, else undefined. */
export function misplacedOptions(r: Pick<RetrieveBody, 'mode'> & Partial<RetrieveBody>, at = ''): string | undefined {
  if (r.structures !== undefined && !readsStructures(r as { mode: string; legs?: readonly string[] })) {
    return `structures applies to mode=${[...READS_STRUCTURES].join(', mode=')} and mode=hybrid with the graph leg only, not mode=${r.mode}` +
      (r.mode === 'hybrid' ? ` without "graph" in legs` : '')
  }
  for (const [mode, options] of MODE_OPTIONS) {
    if (mode === r.mode) continue
    const misplaced = options.filter((k) => (r as Record<string, unknown>)[k] !== undefined)
    if (misplaced.length > 0) return `${misplaced.join(', ')} apply to mode=${mode} only, not mode=${r.mode}`
  }
  return modeDefinition(r.mode).checkOptions?.(r as Record<string, unknown>, at) ?? misplacedFilter(r.mode as Mode, r.filter, at)
}

/** Whether answering `r` embeds the query, and so waits in the model's queue. */
function embedsQuery(r: RetrieveRequest): boolean {
  return modeDefinition(r.mode).embedsQuery(r as Record<string, unknown>)
}

export interface CachedRetrievalDeps {
  modes: ModeTable
  cache: Cache
  /** 0 turns the response cache off. */
  ttlSeconds: number
  /**
   * The generation a read sees and its cache version (none: not cached), waiting for `minGeneration`; with
   * `withoutCatalog`, the read needs no document catalog (src/runtime.ts).
   */
  readState(mode: Mode, namespace: string, minGeneration?: number, read?: { withoutCatalog?: boolean }): Promise<ReadState>
  onCacheLookup?(hit: boolean): void
  /** Called when the answer is not cached, before the mode runs; may refuse by throwing (overload). */
  beforeRun?(r: RetrieveRequest): void
  onLegs?(mode: string, legs: RetrieveResponse['legs']): void
  /** The namespace's stored retrieval defaults, filled into a hybrid request where it sets nothing. */
  retrievalDefaults?(namespace: string): Promise<RetrievalDefaults | undefined>
}

/** The retrieval dependencies of a built app: its modes, response cache, index versions, overload guard and metrics. */
export function retrievalDeps(app: FastifyInstance): CachedRetrievalDeps {
  const { runtime } = app
  const legBackends = legBackendsOf(runtime.names)
  return {
    modes: runtime.modes,
    cache: runtime.cache,
    ttlSeconds: runtime.config.cache.responseTtlSeconds,
    readState: (mode, namespace, minGeneration, read) => runtime.corpus.readState(mode, namespace, minGeneration, read),
    onCacheLookup: (hit: boolean) => app.metrics.cacheResult('response', hit),
    beforeRun: (r: RetrieveRequest) => { if (embedsQuery(r)) app.overload.checkEmbedding() },
    onLegs: (mode, legs) => {
      app.metrics.observeLegs(mode, legs)
      app.metrics.failedLegs(legBackends[mode as Mode], legs)
    },
    retrievalDefaults: (namespace) => app.runtime.retrievalDefaults.get(namespace)
  }
}

/** What a stored answer starts and ends with; a hit rewrites the tail (the rest is sent as stored). */
const CACHED_HEAD = '{"mode":'
const CACHED_TAIL = '"cached":false,"took_ms":'

/** The bytes of `stored` before its `"cached":false,"took_ms":` tail, or undefined when it is not a stored answer. */
function storedAnswerHead(stored: Buffer): Buffer | undefined {
  if (stored.toString('latin1', 0, CACHED_HEAD.length) !== CACHED_HEAD || stored[stored.length - 1] !== 0x7d) return undefined
  const tail = stored.lastIndexOf(CACHED_TAIL)
  return tail > 0 ? stored.subarray(0, tail) : undefined
}

/**
 * Answers from the response cache when it holds this exact request at the current index version;
 * otherwise runs the mode and caches the answer, unless a leg timed out or failed (a degraded answer
 * should not outlive the fault). A hit is returned as the stored UTF-8 bytes with only `cached` and
 * `took_ms` rewritten, so the hot path neither parses, re-serialises nor re-encodes the bundle.
 */
export async function retrieveCached(deps: CachedRetrievalDeps, asked: RetrieveRequest, signal?: AbortSignal): Promise<{ body: RetrieveResponse | Buffer; cached: boolean }> {
  const started = performance.now()
  // A namespace's stored retrieval defaults fill what a hybrid request leaves out (and so are part of its cache key).
  // graphrag and episodic read what the request's `structures` says, else the namespace's setting (part of the cache key too).
  const defaults = deps.retrievalDefaults && (asked.mode === 'hybrid' || (READS_STRUCTURES.has(asked.mode) && asked.structures === undefined))
    ? await deps.retrievalDefaults(asked.namespace) : undefined
  const r = asked.mode === 'hybrid' ? withRetrievalDefaults(asked, defaults) : asked
  const structures = asked.structures ?? structuresOf(r as { mode: string; legs?: readonly string[] }, defaults)
  // Read before the mode runs, so every write up to `generation` is in what it reads. No version (its store
  // is down, or a write is not recorded yet) means no caching for this request.
  // An unfiltered hybrid retrieve ranks on the stores alone, so it need not wait for a first read of the catalog.
  const { generation, version } = await deps.readState(r.mode as Mode, r.namespace, r.min_generation, { withoutCatalog: r.mode === 'hybrid' && !r.filter })
  const read = withoutMinGeneration(r)
  const key = version === undefined || deps.ttlSeconds <= 0 ? undefined : responseCacheKey(r.mode, structures ? { ...read, structures } : read, version)
  // The stored answer has no generation: a hit is valid at the current one (no write of its kind since).
  const generationTail = generation === undefined ? '' : `,"generation":${generation}`
  if (key) {
    const stored = await deps.cache.get(key)
    const head = stored === undefined ? undefined : storedAnswerHead(stored)
    deps.onCacheLookup?.(head !== undefined)
    if (head !== undefined) {
      const tookMs = Math.round((performance.now() - started) * 100) / 100
      return { body: Buffer.concat([head, Buffer.from(`"cached":true,"took_ms":${tookMs}${generationTail}}`, 'latin1')]), cached: true }
    }
  }
  deps.beforeRun?.(read)
  const response = await retrieve(deps.modes, read, signal, {
    ...(version === undefined ? {} : { indexVersion: version }), ...(structures ? { structures } : {})
  })
  deps.onLegs?.(r.mode, response.legs)
  if (key && !uncacheable.has(response) && response.legs.every((l) => l.status === 'ok' || l.status === 'skipped')) {
    await deps.cache.set(key, JSON.stringify(response), deps.ttlSeconds)
  }
  return { body: generation === undefined ? response : { ...response, generation }, cached: false }
}

/** Runs the request's mode; its filter, already normalised, goes to the adapter in the adapter's terms and comes back in the response. */
export async function retrieve(modes: ModeTable, r: RetrieveRequest, signal?: AbortSignal, context: RetrieveContext = {}): Promise<RetrieveResponse> {
  const started = performance.now()
  const definition = modeDefinition(r.mode)
  const adapter = modes[r.mode as Mode] as { retrieve(request: unknown, signal?: AbortSignal, context?: RetrieveContext): Promise<AdapterResult> }
  const { filter } = r
  const options = Object.fromEntries(Object.entries(r).filter(([k]) => ALL_OPTIONS.has(k)))
  // the request's own `structures` wins over the namespace's setting the caller read
  const structures = r.structures ?? context.structures
  const request = definition.adapterRequest({
    query: r.query, top_k: r.top_k, namespace: r.namespace, ...(structures ? { structures } : {})
  }, options, filter)
  const result = await adapter.retrieve(request, signal, structures ? { ...context, structures } : context)
  const match_strength: MatchStrength = result.match_strength ?? (result.items.length === 0 ? 'none' : 'weak')
  const response = {
    mode: r.mode,
    query: r.query,
    namespace: r.namespace,
    ...(filter ? { filter } : {}),
    recall_bundle: filter ? result.items.map((item) => ({ ...item, metadata: { ...item.metadata, filter } })) : result.items,
    legs: result.legs,
    match_strength,
    ...(result.tie ? { tie: result.tie } : {}),
    ...(result.image_items || r.include_images ? { image_items: result.image_items ?? [] } : {}),
    cached: false,
    took_ms: Math.round((performance.now() - started) * 100) / 100
  } as RetrieveResponse
  if (result.uncacheable) uncacheable.add(response)
  return response
}

/** Answers whose mode read beyond its own index (`AdapterResult.uncacheable`): never cached, and the body does not say so. */
const uncacheable = new WeakSet<RetrieveResponse>()

import { join } from 'node:path'
import type { QdrantClient } from '@qdrant/js-client-rest'
import { ANALYZERS } from '../../kernel/analyzers.js'
import { UnexpectedResponseError, type BackendHealth } from '../errors.js'
import { namespaceDir } from '../namespace.js'
import { pointIdOf } from '../vector-store/qdrant-point-ids.js'
import { analyzeBatch, LEXICAL_VECTOR, lexicalPointOf, WEIGHTED_VECTOR, type LexicalPayload } from './lexical-point.js'
import { LocalLexicalCopy } from './local-copy.js'
import type { LexicalChange, LexicalDocument, LexicalHit, LexicalIndex, LexicalSearchOptions } from './port.js'
import { scoreCandidates, scorePostings, type Candidate, type TermPostings } from './posting-scorer.js'
import { tokenId } from './token-id.js'
import { exactCeilingUnits, stalenessFactor } from './weighted-bound.js'
import { BACKEND, DF_PROBE, inNamespace, LOCAL_COPY_SEARCH_WAIT_MS, type Filter, type QdrantLexicalCollection } from './qdrant-collection.js'

/**
 * Distinct document lengths one facet request asks for; a chunk has at most a few hundred tokens, and the
 * request is repeated with a larger limit should a namespace ever have more (a large limit costs the server).
 */
const FACET_LENGTHS = 2048
/** Rounds of widening the server's candidates (×2 each) before a search falls back to whole posting lists. */
const MAX_ROUNDS = 4

/** Tokens whose df one namespace keeps per stamp; past it the map starts again. */
const CACHED_FREQUENCIES = 200_000

/** What a search read about a namespace at one stamp (see `statisticsStamp`). */
interface StampedStatistics {
  stamp: string
  n: number
  totalLength: number
  smallest: number
  df: Map<string, number>
}


/** Whether Qdrant refused a facet or an ordering because the field's payload index is missing or not built yet. */
function indexNotReady(error: unknown): boolean {
  return error instanceof UnexpectedResponseError && /no appropriate index for faceting|no range index for `order_by`/i.test(error.message)
}


/** One namespace's lexical leg in the shared collection. */
export class QdrantLexicalIndex implements LexicalIndex {
  private held = 0
  private heldLength = 0
  private changes = 0
  private stamped: StampedStatistics | undefined
  private readonly copy: LocalLexicalCopy | undefined
  /** Per search, its rounds (1 = proven by the first candidate set; 0 = answered from whole posting lists; -1 = the local copy). */
  readonly rounds: number[] = []
  /** Whether `rounds` is recorded (benchmarks). */
  recordRounds = false

  constructor(private readonly owner: QdrantLexicalCollection, readonly namespace: string) {
    const copy = owner.options.localCopy
    if (copy) this.copy = new LocalLexicalCopy(join(namespaceDir(copy.dir, namespace), 'chunks'), undefined, owner.analyzer)
  }

  /** Whether searches may be answered by the local copy now, as far as the copy itself knows (tests, benchmarks). */
  get localCopyReady(): boolean { return this.copy?.ready === true }

  /** Bytes the local copy holds in memory; 0 without one (benchmarks). */
  get localCopyBytes(): number { return this.copy?.memoryBytes ?? 0 }

  /** Resolves once the local copy has applied everything handed to it (tests, benchmarks). */
  async localCopyIdle(): Promise<void> {
    await this.copy?.idle()
  }

  /** Documents at the last call that counted them (the port's `size` is synchronous). */
  get size(): number { return this.held }

  get version(): number { return this.changes }

  /** The average length at the last count, if the namespace held anything. */
  get averageLength(): number | undefined { return this.held > 0 ? this.heldLength / this.held : undefined }

  async sync(documents: Iterable<LexicalDocument>): Promise<void> {
    const listed = Array.isArray(documents) ? documents as readonly LexicalDocument[] : [...documents]
    const wanted = new Map<string, string>()
    for (const d of listed) wanted.set(d.id, d.text)
    // The copy is rebuilt in the background; until it is done, searches rank on Qdrant. The service's documents are
    // the catalog read from the points, so it starts now; points of its own are written first (they may fail).
    // It is given the documents as they came when no id repeats: no second list of the namespace held meanwhile.
    const forCopy = () => wanted.size === listed.length ? listed : [...wanted].map(([id, text]) => ({ id, text }))
    const copy = () => { void this.copy?.sync(forCopy()) }
    if (this.owner.options.points === 'vector-store') {
      copy()
      if (!await this.owner.ensure(false)) return
      await this.backfill(wanted)
    } else {
      if (wanted.size === 0 && !await this.owner.ensure(false)) {
        this.held = 0
        copy()
        return
      }
      await this.owner.ensure(true)
      const stored = await this.storedIds()
      const remove = [...stored].filter((id) => !wanted.has(id))
      await this.writeOwn(remove, [...wanted].map(([id, text]) => ({ id, text })))
      copy()
    }
    this.changes += 1
    await this.recount()
  }

  async write(change: LexicalChange): Promise<void> {
    if (this.owner.options.points === 'own') {
      await this.owner.ensure(true)
      await this.writeOwn(change.delete ?? [], change.upsert ?? [])
    }
    // with `vector-store`, the vector store's write carried this change in the same points
    await this.copy?.write(change)
    this.changes += 1
    this.stamped = undefined
    // the count only informs the next write's reference length (any is correct): a failed count fails nothing,
    // and a healthy copy counts without asking Qdrant (at 100k chunks the facet costs 160 ms), even while this
    // write's change is still being applied to it
    if (this.copy?.counted) {
      this.held = this.copy.size
      this.heldLength = this.copy.totalLength
    } else if (await this.owner.ensure(false)) {
      await this.recount().catch(() => undefined)
    }
  }

  /** The ids among `ids` whose points carry the lexical leg (`lex_aref` came with it); none before the collection exists. */
  async holding(ids: readonly string[]): Promise<Set<string>> {
    if (ids.length === 0 || !await this.owner.ensure(false)) return new Set()
    const held = new Set<string>()
    for (let i = 0; i < ids.length; i += this.batch) {
      const points = ids.slice(i, i + this.batch).map((id) => pointIdOf(id, this.namespace))
      for (const id of await this.storedIds([{ has_id: points }, { must_not: [{ is_empty: { key: 'lex_aref' } }] }])) held.add(id)
    }
    return held
  }

  /**
   * Ranked on the server from `lexw`, proven exact on the client (docs/scale-out.md, "Ranking on the server"):
   * the candidates are re-scored exactly, and their set is widened until no unseen document can reach the top
   * `limit`; after {@link MAX_ROUNDS} rounds, or while some point lacks `lexw`, from whole posting lists.
   */
  async search(query: string, limit: number, options: LexicalSearchOptions = {}): Promise<LexicalHit[]> {
    if (!(Math.floor(limit) >= 1)) return []
    const complete = this.owner.options.localCopy?.complete
    const observe = this.owner.options.onSearch
    // A change still being applied to a copy that holds the namespace otherwise is waited for, within a bound: it
    // usually lands in a few ms, where ranking on Qdrant costs tens of ms at 100k chunks (seconds on a busy machine).
    const settled = () => this.copy!.settled(this.owner.options.localCopy?.waitMs ?? LOCAL_COPY_SEARCH_WAIT_MS)
    if (this.copy && complete === 'sole-writer' && await settled()) {
      observe?.('local-copy')
      return this.fromCopy(query, limit, options)
    }
    const stamp = options.stamp ?? await this.stamp()
    const proven = complete === 'sole-writer' || (typeof complete === 'function' && stamp !== undefined && complete(this.namespace, stamp))
    if (this.copy && complete !== 'sole-writer' && proven && await settled()) {
      observe?.('local-copy')
      return this.fromCopy(query, limit, options)
    }
    observe?.(!this.copy ? 'qdrant:copy-off' : !proven ? 'qdrant:copy-behind' : 'qdrant:copy-not-ready')
    const counts = new Map<string, number>()
    for (const t of ANALYZERS[this.owner.analyzer](query)) counts.set(t, (counts.get(t) ?? 0) + 1)
    if (counts.size === 0) return []
    if (!await this.owner.ensure(false)) return []
    const k = Math.floor(limit)
    const tokens = [...counts.keys()]
    const held = stamp !== undefined && this.stamped?.stamp === stamp ? this.stamped : undefined
    const unknown = held ? tokens.filter((t) => !held.df.has(t)) : tokens
    const [{ n, totalLength, unweighted, smallest }, listedUnknown] = await Promise.all([
      held ? { ...held, unweighted: 0 } : this.freshStatistics(),
      unknown.length > 0 ? this.listedFrequencies(unknown) : Promise.resolve([])
    ])
    const listedOf = new Map(unknown.map((t, i) => [t, listedUnknown[i]!]))
    const listed = tokens.map((t) => held?.df.get(t) ?? listedOf.get(t)!)
    if (n === 0) return []
    // a point without `lexw` (written before it, not yet backfilled) would be missed by the server's ranking
    if (unweighted > 0 || smallest === undefined) return this.exhaustive(counts, limit, options.filter, 0)
    const avgLength = totalLength / n
    const idfOf = (df: number) => Math.log(((n - df + 0.5) / (df + 0.5)) + 1)
    // The first round's query uses, for a token listed to the probe's end, the idf at df = probe: an upper
    // bound of its idf (idf falls as df grows), so the first candidates' server scores still bound exact scores
    // from above; its exact df is counted meanwhile. A df reused from the stamp is exact already.
    const probe = this.owner.options.dfProbe ?? DF_PROBE
    const frequent = unknown.filter((t) => listedOf.get(t)! >= probe)
    const queryOf = (terms: readonly { id: number; count: number; idf: number }[]) => {
      const values = new Map<number, number>()
      for (const t of terms) values.set(t.id, (values.get(t.id) ?? 0) + (t.idf * t.count))
      const indices = [...values.keys()].sort((a, b) => a - b)
      return { indices, values: indices.map((i) => values.get(i)!) }
    }
    const probed = tokens.map((t, i) => ({ token: t, id: tokenId(t), count: counts.get(t)!, idf: idfOf(listed[i]!) }))
      .filter((_, i) => listed[i]! > 0)
    if (probed.length === 0) {
      this.keep(stamp, held, { n, totalLength, smallest }, tokens.map((t) => [t, 0]))
      return []
    }
    let size = (4 * k) + 16
    const [counted, firstPoints] = await Promise.all([this.documentFrequencies(frequent), this.candidates(queryOf(probed), size)])
    const dfs = new Map(tokens.map((t, i) => [t, listed[i]!]))
    frequent.forEach((t, i) => dfs.set(t, counted[i]!))
    this.keep(stamp, held, { n, totalLength, smallest }, [...dfs])
    const terms = tokens.filter((t) => dfs.get(t)! > 0).map((t) => ({ token: t, id: tokenId(t), count: counts.get(t)!, idf: idfOf(dfs.get(t)!) }))
    const factor = stalenessFactor(avgLength, smallest)
    const queryTokens = terms.reduce((m, t) => m + t.count, 0)
    for (let round = 1; round <= MAX_ROUNDS; round++, size *= 2) {
      const points = round === 1 ? firstPoints : await this.candidates(queryOf(terms), size)
      const scored = scoreCandidates(avgLength, terms, points.map(candidateOf), options.filter)
      const complete = points.length < size
      const kth = scored[k - 1]
      if (complete || (kth !== undefined && kth.units > exactCeilingUnits(points[points.length - 1]!.score, factor, queryTokens))) {
        this.record(round)
        return scored.slice(0, k).map((s) => ({ id: s.id, score: s.units / 1e4 }))
      }
    }
    return this.exhaustive(counts, limit, options.filter, 0)
  }

  private fromCopy(query: string, limit: number, options: LexicalSearchOptions): Promise<LexicalHit[]> {
    this.record(-1)
    return this.copy!.search(query, limit, options)
  }

  /** The namespace's stamp now; undefined (read everything again) when there is none or it cannot be read. */
  private async stamp(): Promise<string | undefined> {
    const read = this.owner.options.statisticsStamp
    return read ? read(this.namespace).catch(() => undefined) : undefined
  }

  /** Keeps what this search read under the stamp it read first (never a stamp read after its statistics). */
  private keep(stamp: string | undefined, held: StampedStatistics | undefined, read: { n: number; totalLength: number; smallest: number },
    frequencies: Iterable<[string, number]>): void {
    if (stamp === undefined) return
    const kept = (this.stamped?.stamp === stamp ? this.stamped : held) ?? { stamp, ...read, df: new Map<string, number>() }
    if (kept.df.size > CACHED_FREQUENCIES) kept.df.clear()
    for (const [t, df] of frequencies) kept.df.set(t, df)
    this.stamped = kept
  }

  /** N, the total length, points without `lexw` and the smallest reference length, read now (three requests in parallel). */
  private async freshStatistics(): Promise<{ n: number; totalLength: number; unweighted: number; smallest: number | undefined }> {
    const [{ n, totalLength }, unweighted, smallest] = await Promise.all([this.statistics(), this.unweighted(), this.smallestReference()])
    return { n, totalLength, unweighted, smallest }
  }

  private record(rounds: number): void {
    if (this.recordRounds) this.rounds.push(rounds)
  }

  /** Today's exact path and the fallback: every posting of every query token, scored on the client. */
  private async exhaustive(counts: ReadonlyMap<string, number>, limit: number, filter: ((id: string) => boolean) | undefined, rounds: number): Promise<LexicalHit[]> {
    const tokens = [...counts.keys()]
    // The statistics and the postings in parallel: the postings' limit is the last known N, and should a
    // posting list fill it (the namespace grew meanwhile), they are asked again with the N just read.
    const guess = Math.max(this.held, 1)
    const [{ n, totalLength }, first] = await Promise.all([this.statistics(), this.postings(tokens, guess)])
    this.record(rounds)
    if (n === 0) return []
    const answers = first.some((points) => points.length >= guess) && n > guess ? await this.postings(tokens, n) : first
    const terms: TermPostings[] = tokens.map((t, i) => ({
      count: counts.get(t)!,
      postings: answers[i]!.map((p) => {
        const payload = p.payload as Partial<LexicalPayload> & { id?: unknown } | null | undefined
        if (!payload || typeof payload.id !== 'string' || typeof payload.lex_len !== 'number') {
          throw new UnexpectedResponseError(BACKEND, 'a point of the lexical leg has no id or lex_len in its payload')
        }
        return { id: payload.id, tf: payload.lex_split?.[t] ?? p.score, length: payload.lex_len }
      })
    }))
    return scorePostings(n, totalLength, terms, limit, filter)
  }

  /** The top `size` points of the namespace by `lexw` · `vector`, with what their exact scores need. */
  private async candidates(vector: { indices: number[]; values: number[] }, size: number) {
    const { points } = await this.owner.read(() => this.owner.client.query(this.owner.options.collection, {
      ...this.owner.consistency,
      query: vector,
      using: WEIGHTED_VECTOR,
      filter: { must: [inNamespace(this.namespace)] },
      limit: size,
      with_payload: { include: ['id', 'lex_len', 'lex_terms', 'lex_split'] },
      with_vector: [LEXICAL_VECTOR]
    }))
    return points
  }

  /** df of each token in the namespace: exact counts of the points whose `lex_terms` hold it, in parallel. */
  private documentFrequencies(tokens: readonly string[]): Promise<number[]> {
    return Promise.all(tokens.map((t) => this.owner.count({ must: [inNamespace(this.namespace), { key: 'lex_terms', match: { value: t } }] })))
  }

  /** How many of the namespace's points lack `lexw` (their `lex_aref`, written with it, is empty). */
  private async unweighted(): Promise<number> {
    return this.owner.count({ must: [inNamespace(this.namespace), { is_empty: { key: 'lex_aref' } }] })
  }

  /** The smallest reference length in the namespace (the `lex_aref` index, in order); undefined when none has one. */
  private async smallestReference(): Promise<number | undefined> {
    // while its index is being built the server cannot order by it: undefined sends the search down the exhaustive path
    const { points } = await this.owner.read(() => this.owner.client.scroll(this.owner.options.collection, {
      ...this.owner.consistency, limit: 1, filter: { must: [inNamespace(this.namespace)] }, order_by: { key: 'lex_aref', direction: 'asc' },
      with_payload: { include: ['lex_aref'] }, with_vector: false
    })).catch((error: unknown) => {
      if (indexNotReady(error)) return { points: [] }
      throw error
    })
    const aref = (points[0]?.payload as { lex_aref?: unknown } | null | undefined)?.lex_aref
    return typeof aref === 'number' && aref >= 1 ? aref : undefined
  }

  /** Per token, how many of its postings a listing of at most {@link DF_PROBE} (ids only, one batch request) found: its df when below. */
  private async listedFrequencies(tokens: readonly string[]): Promise<number[]> {
    const answers = await this.owner.read(() => this.owner.client.queryBatch(this.owner.options.collection, {
      ...this.owner.consistency,
      searches: tokens.map((t) => ({
        query: { indices: [tokenId(t)], values: [1] },
        using: LEXICAL_VECTOR,
        filter: { must: [inNamespace(this.namespace), { key: 'lex_terms', match: { value: t } }] },
        limit: this.owner.options.dfProbe ?? DF_PROBE,
        with_payload: false,
        with_vector: false
      }))
    }))
    return tokens.map((_, i) => answers[i]?.points.length ?? 0)
  }

  health(): Promise<BackendHealth> {
    return this.owner.health()
  }

  /** Per token, up to `limit` points of the namespace holding it (`lex_terms` confirms the token: docs/scale-out.md). */
  private async postings(tokens: readonly string[], limit: number) {
    const answers = await this.owner.read(() => this.owner.client.queryBatch(this.owner.options.collection, {
      ...this.owner.consistency,
      searches: tokens.map((t) => ({
        query: { indices: [tokenId(t)], values: [1] },
        using: LEXICAL_VECTOR,
        filter: { must: [inNamespace(this.namespace), { key: 'lex_terms', match: { value: t } }] },
        limit,
        with_payload: { include: ['id', 'lex_len', 'lex_split'] },
        with_vector: false
      }))
    }))
    return tokens.map((_, i) => answers[i]?.points ?? [])
  }

  async close(): Promise<void> {
    await this.copy?.close()
  }

  /** After a drop: nothing held. */
  async forget(): Promise<void> {
    this.stamped = undefined
    this.held = 0
    this.heldLength = 0
    this.changes += 1
    await this.copy?.drop()
  }

  /** N and the total length of the namespace's points that carry the lexical leg: one exact facet over `lex_len`. */
  private async statistics(): Promise<{ n: number; totalLength: number }> {
    let hits: { value: unknown; count: number }[]
    try {
      for (let limit = FACET_LENGTHS; ; limit *= 4) {
        ;({ hits } = await this.owner.read(() => this.owner.client.facet(this.owner.options.collection, {
          ...this.owner.consistency, key: 'lex_len', exact: true, limit, filter: { must: [inNamespace(this.namespace)] }
        })))
        if (hits.length < limit) break
      }
    } catch (error) {
      if (!indexNotReady(error)) throw error
      hits = await this.scannedLengths()
    }
    let n = 0
    let totalLength = 0
    for (const h of hits) {
      n += h.count
      totalLength += Number(h.value) * h.count
    }
    this.held = n
    this.heldLength = totalLength
    return { n, totalLength }
  }

  /**
   * The facet's answer read by scrolling every point's `lex_len`: while Qdrant builds the `lex_len` index over
   * points written before it (an upgraded collection), it refuses the facet for minutes at 100k chunks.
   */
  private async scannedLengths(): Promise<{ value: number; count: number }[]> {
    const counts = new Map<number, number>()
    let offset: string | number | undefined
    for (;;) {
      const page = await this.owner.read(() => this.owner.client.scroll(this.owner.options.collection, {
        ...this.owner.consistency, limit: 2048, filter: { must: [inNamespace(this.namespace)] },
        with_payload: { include: ['lex_len'] }, with_vector: false, ...(offset !== undefined ? { offset } : {})
      }))
      for (const p of page.points) {
        const length = (p.payload as { lex_len?: unknown } | null | undefined)?.lex_len
        if (typeof length === 'number') counts.set(length, (counts.get(length) ?? 0) + 1)
      }
      const next = page.next_page_offset
      if (next === undefined || next === null) break
      offset = next as string | number
    }
    return [...counts].map(([value, count]) => ({ value, count }))
  }

  private async recount(): Promise<void> {
    await this.statistics()
  }

  /** Our ids of the namespace's points, read page by page. */
  private async storedIds(extra?: Filter['must']): Promise<Set<string>> {
    const ids = new Set<string>()
    let offset: string | number | undefined
    for (;;) {
      const page = await this.owner.read(() => this.owner.client.scroll(this.owner.options.collection, {
        ...this.owner.consistency, limit: this.batch, filter: { must: [inNamespace(this.namespace), ...(extra ?? [])] },
        with_payload: { include: ['id'] }, with_vector: false, ...(offset !== undefined ? { offset } : {})
      }))
      for (const p of page.points) {
        const id = (p.payload as { id?: unknown } | null | undefined)?.id
        if (typeof id === 'string') ids.add(id)
      }
      const next = page.next_page_offset
      if (next === undefined || next === null) return ids
      offset = next as string | number
    }
  }

  private get batch(): number { return this.owner.options.batchSize ?? 256 }

  /** Points of its own: the deletes, then the upserts, in ordered batch requests of one slice each. */
  private async writeOwn(deletes: readonly string[], upserts: readonly LexicalDocument[]): Promise<void> {
    const { collection } = this.owner.options
    const replaced = new Set(upserts.map((d) => d.id))
    const gone = deletes.filter((id) => !replaced.has(id)).map((id) => pointIdOf(id, this.namespace))
    const { tokens, averageLength } = analyzeBatch(upserts.map((d) => d.text), this.owner.analyzer)
    const reference = this.averageLength ?? averageLength
    const points = upserts.map((d, i) => {
      const lex = lexicalPointOf(tokens[i]!, reference)
      return {
        id: pointIdOf(d.id, this.namespace),
        vector: { [LEXICAL_VECTOR]: lex.sparse, [WEIGHTED_VECTOR]: lex.weighted },
        payload: { ...lex.payload, id: d.id, namespace: this.namespace }
      }
    })
    // the deletes with the first slice, then a request per slice: one request for all could pass Qdrant's 32 MB limit
    const requests: Parameters<QdrantClient['batchUpdate']>[1]['operations'][] = []
    for (let i = 0; i < points.length || (i === 0 && gone.length > 0); i += this.batch) {
      const slice = points.slice(i, i + this.batch)
      requests.push([...(i === 0 && gone.length > 0 ? [{ delete: { points: gone } }] : []), ...(slice.length > 0 ? [{ upsert: { points: slice } }] : [])])
    }
    for (const operations of requests) await this.owner.call(() => this.owner.writer.batchUpdate(collection, { wait: true, operations }))
  }

  /**
   * The lexical leg of the namespace's points written without one (by a version before it), from their texts
   * in `wanted`: only that vector and those payload keys are written; the dense vector stays.
   */
  private async backfill(wanted: ReadonlyMap<string, string>): Promise<void> {
    // `lex_aref` came with `lexw`: a point without it lacks `lexw` (and perhaps the whole leg)
    const missing = [...await this.storedIds([{ is_empty: { key: 'lex_aref' } }])].filter((id) => wanted.has(id))
    const { collection } = this.owner.options
    if (missing.length > 0) await this.statistics()
    for (let i = 0; i < missing.length; i += this.batch) {
      const ids = missing.slice(i, i + this.batch)
      const { tokens, averageLength } = analyzeBatch(ids.map((id) => wanted.get(id)!), this.owner.analyzer)
      const reference = this.averageLength ?? averageLength
      const slice = ids.map((id, j) => ({ id, point: pointIdOf(id, this.namespace), lex: lexicalPointOf(tokens[j]!, reference) }))
      // each operation only where the point still lacks the leg: a write of the service meanwhile (both legs in one
      // upsert) is kept whole, never paired with this text's vectors or payload
      const lacking = { is_empty: { key: 'lex_aref' } }
      await this.owner.call(() => this.owner.writer.batchUpdate(collection, {
        wait: true,
        operations: [
          { update_vectors: { points: slice.map((s) => ({ id: s.point, vector: { [LEXICAL_VECTOR]: s.lex.sparse, [WEIGHTED_VECTOR]: s.lex.weighted } })), update_filter: { must: [lacking] } } },
          ...slice.map((s) => ({ set_payload: { payload: { ...s.lex.payload }, filter: { must: [{ has_id: [s.point] }, lacking] } } }))
        ]
      }))
    }
  }
}

/** A point of the server's candidates as {@link scoreCandidates} reads it. */
function candidateOf(point: { payload?: Record<string, unknown> | null | undefined; vector?: unknown }): Candidate {
  const payload = point.payload as Partial<LexicalPayload> & { id?: unknown } | null | undefined
  const lex = (point.vector as Record<string, { indices?: number[]; values?: number[] }> | null | undefined)?.[LEXICAL_VECTOR]
  if (!payload || typeof payload.id !== 'string' || typeof payload.lex_len !== 'number' || !Array.isArray(payload.lex_terms) || !lex?.indices || !lex.values) {
    throw new UnexpectedResponseError(BACKEND, 'a point of the lexical leg lacks its id, lex_len, lex_terms or lex vector')
  }
  return { id: payload.id, length: payload.lex_len, terms: payload.lex_terms, indices: lex.indices, values: lex.values, split: payload.lex_split }
}
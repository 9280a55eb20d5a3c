import { QdrantClient, type Schemas } from '@qdrant/js-client-rest'
import {
  abortError,
  BackendTimeoutError,
  BackendUnavailableError,
  UnexpectedResponseError,
  probeHealth,
  type BackendHealth
} from '../errors.js'
import { checkNamespace, DEFAULT_NAMESPACE } from '../namespace.js'
import { LEXICAL_PAYLOAD_KEYS } from '../lexical-index/lexical-point.js'
import type { MetadataCondition, VectorFilter, VectorHit, VectorPayload, VectorRank, VectorRecord, VectorStore, VectorWrite } from './port.js'
import { checkClusterSettings, creationParams, replicationFixFor, retryReplicaReads, SINGLE_NODE, type QdrantClusterSettings } from './qdrant-cluster.js'
import { retryOnceOnClosedSocket } from './socket-retry.js'
import { BACKEND, mapError } from './qdrant-errors.js'
import { pointIdOf } from './qdrant-point-ids.js'

/**
 * A sparse vector the points of one collection carry beside their dense vector (the lexical leg on Qdrant,
 * docs/scale-out.md): every upsert into `collection` writes both, so one point write carries both legs.
 */
export interface AttachedSparseVector {
  collection: string
  /** The sparse vectors' names in the collection. */
  names: readonly string[]
  /**
   * The sparse vectors of a record (one per name), and the payload keys that go with them (prefixed `lex_`, kept
   * out of reads); `batch` is the write's whole upsert, `namespace` its namespace.
   */
  encode(record: VectorRecord, namespace: string, batch: readonly VectorRecord[]): {
    vectors: Record<string, { indices: number[]; values: number[] }>; payload: Record<string, unknown>
  }
}

export interface QdrantVectorStoreOptions {
  /** Base URL of Qdrant's REST API, e.g. `http://127.0.0.1:6333`. */
  url: string
  apiKey?: string
  /** Client-side limit for each reading HTTP request (search, scroll, count, health), in milliseconds. */
  timeoutMs: number
  /** Client-side limit for each writing request (collections, indexes, upserts, deletes), in milliseconds. Default `timeoutMs`. */
  writeTimeoutMs?: number
  /** Points per upsert request, and per scroll page. Default 256. */
  batchSize?: number
  /** A sparse vector written with every point of one collection (the lexical leg); none by default. */
  sparse?: AttachedSparseVector
  /** Shards, replicas and consistency of the collections (docs/deployment.md). Default: one server's ({@link SINGLE_NODE}). */
  cluster?: QdrantClusterSettings
}

/** The payload field holding a point's namespace, indexed as Qdrant's multitenancy advises. */
const NAMESPACE_FIELD = 'namespace'
/** Most namespaces one facet request lists. */
const MAX_NAMESPACES = 100_000
/** The points a version before namespaces wrote: no namespace in their payload. */
const WITHOUT_NAMESPACE = { must: [{ is_empty: { key: NAMESPACE_FIELD } }] }

/** Payload as stored in Qdrant: the port payload plus our own id under `id` (point ids are UUIDs) and the namespace. */
type StoredPayload = VectorPayload & { id: string; namespace: string }

/**
 * `VectorStore` on Qdrant: one collection per name, unnamed vectors with cosine distance, keyword payload
 * indexes on `doc_id` and on `namespace`, the latter with `is_tenant: true`, as Qdrant advises for
 * multitenancy (one collection shared by every tenant rather than a collection per tenant, which Qdrant warns
 * against past a few): every search, scroll, count and delete carries a filter on the namespace. Points of a
 * collection written before namespaces existed get `namespace: default` when the collection is first ensured.
 * Writes are not atomic here: upserts go first, then the deleted documents' other points, so a document is
 * never missing while it is re-ingested.
 */
export class QdrantVectorStore implements VectorStore {
  readonly backend = 'qdrant' as const
  private readonly client: QdrantClient
  private readonly writer: QdrantClient
  /** Searches: a client without its own timeout, so that each query carries one signal (deadline and caller). */
  private readonly searcher: QdrantClient
  private readonly timeoutMs: number
  private readonly batchSize: number
  private readonly sparse: AttachedSparseVector | undefined
  private readonly cluster: QdrantClusterSettings
  /** Where the collections are, for the commands a refusal names. */
  private readonly server: { url: string; apiKey?: string | undefined }
  /**
   * Our id of each point id this instance has written or read (a point id is a function of the id and namespace,
   * so an entry never goes stale): `rank` then asks Qdrant for no payload at all, whose reading costs the server
   * more than the search (bench/results/vector-leg.log.md); ids it has not seen are fetched once.
   */
  private readonly idOfPoint = new Map<string, string>()
  /** Collections this instance has checked or created, with their dimension: ingestion ensures before every write. */
  private readonly ensured = new Map<string, number>()
  private closed = false

  constructor(options: QdrantVectorStoreOptions) {
    this.batchSize = options.batchSize ?? 256
    if (!Number.isInteger(this.batchSize) || this.batchSize <= 0) {
      throw new RangeError(`batchSize must be a positive integer, got ${this.batchSize}`)
    }
    this.sparse = options.sparse
    this.cluster = options.cluster ?? SINGLE_NODE
    this.server = { url: options.url, apiKey: options.apiKey }
    this.client = qdrantClient(options, options.timeoutMs)
    this.writer = qdrantClient(options, options.writeTimeoutMs ?? options.timeoutMs)
    // The client's timeout middleware replaces a request's own signal; an infinite timeout leaves it out.
    this.searcher = qdrantClient(options, Number.POSITIVE_INFINITY)
    this.timeoutMs = options.timeoutMs
  }

  async ensureCollection(collection: string, dimensions: number): Promise<void> {
    if (!Number.isInteger(dimensions) || dimensions <= 0) {
      throw new RangeError(`dimensions must be a positive integer, got ${dimensions}`)
    }
    const known = this.ensured.get(collection)
    if (known === dimensions) return
    if (known !== undefined) throw new RangeError(`collection ${collection} has ${known} dimensions, not ${dimensions}`)
    const { exists } = await this.call(() => this.client.collectionExists(collection))
    if (!exists) {
      try {
        await this.call(() =>
          this.writer.createCollection(collection, {
            vectors: { size: dimensions, distance: 'Cosine' },
            ...creationParams(this.cluster),
            ...(this.sparse?.collection === collection
              ? { sparse_vectors: Object.fromEntries(this.sparse.names.map((n) => [n, { modifier: 'none' as const }])) }
              : {})
          })
        )
      } catch (error) {
        // another replica may have created it meanwhile (409); the size check below decides
        if (!(error instanceof UnexpectedResponseError && /\b409\b|already exists/i.test(error.message))) throw error
      }
    }
    const info = await this.call(() => this.client.getCollection(collection))
    const vectors = info.config.params.vectors as { size?: number; distance?: string } | undefined
    if (vectors?.size !== dimensions) {
      throw new RangeError(`collection ${collection} has ${String(vectors?.size)} dimensions, not ${dimensions}`)
    }
    const params = info.config.params as Record<string, unknown>
    checkClusterSettings(BACKEND, collection, params, this.cluster, await replicationFixFor(this.server, collection, params, this.cluster))
    // creating an index that exists is a no-op in Qdrant, so this also repairs a collection made elsewhere
    await this.call(() =>
      this.writer.createPayloadIndex(collection, { field_name: 'doc_id', field_schema: 'keyword', wait: true })
    )
    await this.call(() =>
      this.writer.createPayloadIndex(collection, {
        field_name: NAMESPACE_FIELD, field_schema: { type: 'keyword', is_tenant: true }, wait: true
      })
    )
    this.ensured.set(collection, dimensions)
  }

  async write(collection: string, namespace: string, change: VectorWrite): Promise<void> {
    checkNamespace(namespace)
    const upserts = change.upsert ?? []
    const deleteDocIds = [...(change.deleteDocIds ?? [])]
    const sparse = this.sparse?.collection === collection ? this.sparse : undefined
    const points = upserts.map((record) => {
      if ('id' in record.payload && record.payload.id !== record.id) {
        throw new RangeError(`record ${record.id}: payload key "id" is reserved for the record id on Qdrant`)
      }
      if (NAMESPACE_FIELD in record.payload) throw new RangeError(`record ${record.id}: payload key "namespace" is reserved`)
      const dense = Array.from(record.vector)
      if (sparse) {
        const extra = sparse.encode(record, namespace, upserts)
        return {
          id: pointIdOf(record.id, namespace),
          vector: { '': dense, ...extra.vectors },
          payload: { ...record.payload, ...extra.payload, id: record.id, namespace } satisfies StoredPayload
        }
      }
      return {
        id: pointIdOf(record.id, namespace),
        vector: dense,
        payload: { ...record.payload, id: record.id, namespace } satisfies StoredPayload
      }
    })
    for (const point of points) this.learn(point.id, point.payload.id)
    for (let i = 0; i < points.length; i += this.batchSize) {
      const batch = points.slice(i, i + this.batchSize)
      await this.repeatable(() => this.writer.upsert(collection, { wait: true, points: batch }))
    }
    if (deleteDocIds.length > 0) {
      // the port's delete-then-upsert, done in the other order: the points just upserted are kept out of the delete
      const keep = points.map((p) => p.id)
      await this.repeatable(() =>
        this.writer.delete(collection, {
          wait: true,
          filter: {
            must: [inNamespace(namespace), { key: 'doc_id', match: { any: deleteDocIds } }],
            ...(keep.length > 0 ? { must_not: [{ has_id: keep }] } : {})
          }
        })
      )
    }
  }

  async search(collection: string, namespace: string, vector: Float32Array, limit: number, filter?: VectorFilter, signal?: AbortSignal): Promise<VectorHit[]> {
    const points = await this.ranked(collection, namespace, vector, limit, filter, signal, PORT_PAYLOAD)
    return topByScoreThenId(points.map((point) => {
      const row = toRow(point.payload)
      this.learn(point.id, row.id)
      return { id: row.id, score: point.score, payload: row.payload }
    }), limit)
  }

  async rank(collection: string, namespace: string, vector: Float32Array, limit: number, filter?: VectorFilter, signal?: AbortSignal): Promise<VectorRank[]> {
    const points = await this.ranked(collection, namespace, vector, limit, filter, signal, false)
    const unseen = points.filter((p) => !this.idOfPoint.has(String(p.id))).map((p) => p.id)
    if (unseen.length > 0) await this.fetchIds(collection, unseen, signal)
    return topByScoreThenId(points.map((point) => {
      const id = this.idOfPoint.get(String(point.id))
      if (id === undefined) throw new UnexpectedResponseError(BACKEND, `point ${String(point.id)} has no id in its payload; was it written by recall?`)
      return { id, score: point.score }
    }), limit)
  }

  /** Reads our id of each point of `pointIds` (those written by another process, or before this one started). */
  private async fetchIds(collection: string, pointIds: (string | number)[], signal?: AbortSignal): Promise<void> {
    const points = await this.cancellable(signal, async (cancel) => {
      const response = await this.searcher.api().getPoints(
        { collection_name: collection, consistency: this.cluster.readConsistency, ids: pointIds, with_payload: ID_ONLY, with_vector: false }, { signal: cancel })
      return response.data.result ?? []
    })
    for (const point of points) this.learn(point.id, idOf(point.payload))
  }

  private learn(pointId: string | number, id: unknown): void {
    if (typeof id !== 'string') return
    // a bound on the memory: past it, ids are fetched again as they come
    if (this.idOfPoint.size >= MAX_REMEMBERED_IDS) this.idOfPoint.clear()
    this.idOfPoint.set(String(pointId), id)
  }

  /**
   * The points of the top `limit`, with the payload keys `payload` selects, not yet in order: as many more as the
   * cut needs to see the whole run of scores equal to the last one kept, which {@link topByScoreThenId} orders by id.
   */
  private async ranked(
    collection: string, namespace: string, vector: Float32Array, limit: number, filter: VectorFilter | undefined,
    signal: AbortSignal | undefined, payload: PayloadSelector
  ): Promise<ScoredPoint[]> {
    checkNamespace(namespace)
    // Qdrant rejects a limit past 2^32; no collection here comes near that
    const k = Math.min(Math.floor(limit), 2 ** 31)
    if (!(k >= 1)) return [] // also NaN
    if (filter?.doc_ids?.length === 0) return []
    const query = Array.from(vector)
    const where = qdrantFilter(namespace, filter)
    // Qdrant does not order equal scores by our id: ask for one more than needed and widen while the
    // cut falls inside a run of equal scores; the caller orders ties by id.
    let fetch = k + 1
    for (;;) {
      const points = await this.queryPoints(collection, query, fetch, where, payload, signal)
      if (!points) return []
      const tiedAtCut = points.length === fetch && points[fetch - 1]!.score === points[k - 1]!.score
      if (!tiedAtCut) return points
      fetch *= 2
    }
  }

  async *scroll(collection: string, namespace: string, docIds?: readonly string[]): AsyncIterable<{ id: string; payload: VectorPayload }> {
    const where = inNamespace(checkNamespace(namespace))
    // Qdrant pages in point-id (UUID) order, which is not our id order: read every page, then sort.
    const rows: { id: string; payload: VectorPayload }[] = []
    const filters = docIds === undefined
      ? [{ must: [where] }]
      : Array.from({ length: Math.ceil(docIds.length / this.batchSize) }, (_, i) =>
          ({ must: [where, { key: 'doc_id', match: { any: docIds.slice(i * this.batchSize, (i + 1) * this.batchSize) } }] }))
    for (const filter of filters) {
      if (!await this.scrollInto(rows, collection, filter)) return
    }
    rows.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    yield* rows
  }

  /** Adds the rows of every page the filter keeps; false when the collection is missing. */
  private async scrollInto(rows: { id: string; payload: VectorPayload }[], collection: string, filter: QdrantFilter): Promise<boolean> {
    let offset: string | number | undefined
    for (;;) {
      let page
      try {
        page = await this.read(() =>
          this.client.scroll(collection, {
            consistency: this.cluster.readConsistency,
            limit: this.batchSize,
            filter,
            with_payload: PORT_PAYLOAD,
            with_vector: false,
            ...(offset !== undefined ? { offset } : {})
          })
        )
      } catch (error) {
        if (isMissingCollection(error)) return false
        throw error
      }
      for (const point of page.points) {
        const row = toRow(point.payload)
        this.learn(point.id, row.id)
        rows.push(row)
      }
      const next = page.next_page_offset
      if (next === undefined || next === null) return true
      if (typeof next !== 'string' && typeof next !== 'number') {
        throw new UnexpectedResponseError(BACKEND, `unexpected scroll offset ${JSON.stringify(next)}`)
      }
      offset = next
    }
  }

  async vectorsOf(collection: string, namespace: string, ids: readonly string[]): Promise<Map<string, Float32Array>> {
    checkNamespace(namespace)
    const out = new Map<string, Float32Array>()
    for (let i = 0; i < ids.length; i += this.batchSize) {
      let points
      try {
        points = await this.repeatable(() => this.client.retrieve(collection, {
          ids: ids.slice(i, i + this.batchSize).map((id) => pointIdOf(id, namespace)),
          with_payload: ['id', NAMESPACE_FIELD],
          with_vector: true
        }))
      } catch (error) {
        if (isMissingCollection(error)) return out
        throw error
      }
      for (const point of points) {
        const { id, namespace: held } = (point.payload ?? {}) as Partial<StoredPayload>
        if (typeof id !== 'string' || held !== namespace) continue
        // with the lexical leg's sparse vector beside it, the dense vector is the unnamed one: ''
        const vector = Array.isArray(point.vector) ? point.vector : (point.vector as Record<string, unknown> | null | undefined)?.['']
        if (!Array.isArray(vector) || !vector.every((x) => typeof x === 'number')) {
          throw new UnexpectedResponseError(BACKEND, `point of ${id}: no dense vector in the answer`)
        }
        out.set(id, Float32Array.from(vector as number[]))
      }
    }
    return out
  }

  async count(collection: string, namespace: string): Promise<number> {
    return this.countWhere(collection, { must: [inNamespace(checkNamespace(namespace))] })
  }

  async legacyRecords(collection: string): Promise<number> {
    return this.countWhere(collection, WITHOUT_NAMESPACE)
  }

  /** An exact count of the points `filter` matches; a missing collection holds none. */
  private async countWhere(collection: string, filter: Schemas['Filter']): Promise<number> {
    try {
      // the client's `count` leaves out `consistency`; the API call beneath it takes it
      const { data } = await this.read(() => this.client.api().countPoints({
        collection_name: collection, consistency: this.cluster.readConsistency, exact: true, filter
      }))
      if (!data.result) throw new UnexpectedResponseError(BACKEND, 'qdrant answered a count without a result')
      return data.result.count
    } catch (error) {
      if (isMissingCollection(error)) return 0
      throw error
    }
  }

  async adoptLegacyRecords(collection: string): Promise<number> {
    const held = await this.legacyRecords(collection)
    if (held === 0) return 0
    await this.call(() =>
      this.writer.setPayload(collection, { payload: { [NAMESPACE_FIELD]: DEFAULT_NAMESPACE }, filter: WITHOUT_NAMESPACE, wait: true })
    )
    return held
  }

  async namespaces(collection: string): Promise<string[]> {
    try {
      const { hits } = await this.read(() =>
        this.client.facet(collection, { consistency: this.cluster.readConsistency, key: NAMESPACE_FIELD, exact: true, limit: MAX_NAMESPACES })
      )
      return hits.filter((h) => h.count > 0).map((h) => String(h.value)).sort()
    } catch (error) {
      if (isMissingCollection(error)) return []
      throw error
    }
  }

  async dropNamespace(collection: string, namespace: string): Promise<void> {
    try {
      await this.repeatable(() =>
        this.writer.delete(collection, { wait: true, filter: { must: [inNamespace(checkNamespace(namespace))] } })
      )
    } catch (error) {
      if (!isMissingCollection(error)) throw error
    }
  }

  async dropCollection(collection: string): Promise<void> {
    this.ensured.delete(collection)
    try {
      await this.call(() => this.writer.deleteCollection(collection))
    } catch (error) {
      if (!isMissingCollection(error)) throw error
    }
  }

  health(): Promise<BackendHealth> {
    return probeHealth(BACKEND, async () => {
      await this.call(() => this.client.versionInfo())
    })
  }

  async close(): Promise<void> {
    // the client holds no connection we can close; refuse further calls so misuse shows
    this.closed = true
  }

  /** The points a query finds, with the payload keys `payload` selects; `undefined` when the collection does not exist. */
  private async queryPoints(collection: string, query: number[], limit: number, filter: QdrantFilter, payload: PayloadSelector, signal?: AbortSignal): Promise<ScoredPoint[] | undefined> {
    try {
      return await this.cancellable(signal, async (cancel) => {
        const response = await this.searcher.api().queryPoints(
          { collection_name: collection, consistency: this.cluster.readConsistency, query, limit, filter, with_payload: payload, with_vector: false }, { signal: cancel })
        return (response.data.result ?? { points: [] }).points
      })
    } catch (error) {
      if (isMissingCollection(error)) return undefined
      throw error
    }
  }

  /** One read carrying the caller's signal and our own timeout, its failures mapped onto the provider errors. */
  private async cancellable<T>(signal: AbortSignal | undefined, request: (cancel: AbortSignal) => Promise<T>): Promise<T> {
    if (signal?.aborted) throw abortError(signal, BACKEND)
    const own = AbortSignal.timeout(this.timeoutMs)
    const cancel = signal ? AbortSignal.any([signal, own]) : own
    // sent again while Qdrant answers that the replica it chose failed (docs/deployment.md)
    return retryReplicaReads(() => this.call(async () => {
      try {
        return await request(cancel)
      } catch (error) {
        // The HTTP request is gone with the signal: the caller's reason (its leg's deadline), or our own timeout.
        if (signal?.aborted) throw abortError(signal, BACKEND)
        if (own.aborted) throw new BackendTimeoutError(BACKEND, `no answer within ${this.timeoutMs} ms`)
        throw error
      }
    }), cancel)
  }

  /**
   * A call that may be sent twice (upserts and deletes of given points: the same request again leaves the
   * same points): retried once when the server closed its socket under it, as a kept-alive one may be.
   */
  private repeatable<T>(request: () => Promise<T>): Promise<T> {
    return retryOnceOnClosedSocket(() => this.call(request))
  }

  /** A reading call: {@link call}, sent again while Qdrant answers that the replica it chose failed (docs/deployment.md). */
  private read<T>(request: () => Promise<T>): Promise<T> {
    return retryReplicaReads(() => this.call(request))
  }

  /** Runs one client call, mapping its failures onto the provider errors. */
  private async call<T>(request: () => Promise<T>): Promise<T> {
    if (this.closed) throw new BackendUnavailableError(BACKEND, 'vector store is closed')
    try {
      return await request()
    } catch (error) {
      throw mapError(error)
    }
  }
}

/**
 * A client that asks for uncompressed answers. Node's fetch asks for gzip by default; Qdrant then
 * compresses, and a compressed answer past a few KB leaves in a second small TCP write that waits for the
 * client's delayed ACK (about 40 ms) on a kept-alive connection: a 1 ms search took ~48 ms. Uncompressed,
 * the same search took ~4 ms. Locally and within a cluster the bytes cost less than the stall.
 */
function qdrantClient(options: QdrantVectorStoreOptions, timeout: number): QdrantClient {
  return new QdrantClient({
    url: options.url,
    ...(options.apiKey ? { apiKey: options.apiKey } : {}),
    timeout,
    headers: { 'accept-encoding': 'identity' },
    checkCompatibility: false
  })
}

/** A point of a query's answer: its id, score and the payload keys asked for. */
interface ScoredPoint { id: string | number; score: number; payload?: Record<string, unknown> | null }
type PayloadSelector = { exclude: string[] } | string[] | false

/** The first `limit` hits by score descending, equal scores by id ascending. */
function topByScoreThenId<T extends VectorRank>(hits: T[], limit: number): T[] {
  return hits.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).slice(0, Math.floor(limit))
}

/** Point ids whose id a store remembers at most (about 150 bytes each). */
const MAX_REMEMBERED_IDS = 1_000_000

/**
 * The port's payload: every key but the lexical leg's, which `lex_terms` (every distinct token of the chunk) makes
 * several times the size of the rest (bench/results/vector-leg.log.md).
 */
const PORT_PAYLOAD: PayloadSelector = { exclude: [...LEXICAL_PAYLOAD_KEYS] }
/** Our id alone, which the point id (a UUID) does not give back. */
const ID_ONLY: PayloadSelector = ['id']

function idOf(payload: Record<string, unknown> | null | undefined): string {
  const id = payload?.id
  if (typeof id !== 'string') throw new UnexpectedResponseError(BACKEND, 'a point has no id in its payload; was it written by recall?')
  return id
}

function toRow(payload: Record<string, unknown> | null | undefined): { id: string; payload: VectorPayload } {
  const stored = payload as Partial<StoredPayload> | null | undefined
  if (!stored || typeof stored.id !== 'string' || typeof stored.doc_id !== 'string') {
    throw new UnexpectedResponseError(BACKEND, 'a point has no id or doc_id in its payload; was it written by recall?')
  }
  const { id, namespace: _namespace, ...rest } = stored as StoredPayload
  // the lexical leg's payload keys (docs/scale-out.md) are not the port's payload
  for (const key of Object.keys(rest)) if (key.startsWith('lex_')) delete (rest as Record<string, unknown>)[key]
  return { id, payload: rest as VectorPayload }
}

type QdrantCondition = Record<string, unknown>
type QdrantFilter = { must: QdrantCondition[] }

const inNamespace = (namespace: string): QdrantCondition => ({ key: NAMESPACE_FIELD, match: { value: namespace } })

/** The namespace and the port's filter as one Qdrant filter: doc ids and metadata map onto payload conditions. */
export function qdrantFilter(namespace: string, filter: VectorFilter = {}): QdrantFilter {
  return {
    must: [
      inNamespace(namespace),
      ...(filter.doc_ids ? [{ key: 'doc_id', match: { any: [...filter.doc_ids] } }] : []),
      ...(filter.metadata ?? []).map(metadataCondition)
    ]
  }
}

/**
 * One metadata condition on `metadata.<key>`. Qdrant matches a list value when any element matches, as the
 * port does. `match: {value}` takes strings, integers and booleans; a fractional number becomes a closed
 * range on itself. `match: {any}` takes strings or integers; other mixes become `should` of single values.
 */
function metadataCondition(condition: MetadataCondition): QdrantCondition {
  const key = `metadata.${condition.key}`
  const equals = (value: string | number | boolean): QdrantCondition =>
    typeof value === 'number' && !Number.isInteger(value) ? { key, range: { gte: value, lte: value } } : { key, match: { value } }
  if ('equals' in condition) return equals(condition.equals)
  if ('any_of' in condition) {
    const values = [...condition.any_of]
    if (values.every((v) => typeof v === 'string') || values.every((v) => Number.isInteger(v))) return { key, match: { any: values } }
    return { should: values.map(equals) }
  }
  return { key, range: { ...condition.range } }
}

function isMissingCollection(error: unknown): boolean {
  return error instanceof UnexpectedResponseError && (error.cause as { status?: unknown } | undefined)?.status === 404
}

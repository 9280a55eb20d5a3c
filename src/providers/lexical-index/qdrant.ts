import { QdrantClient } from '@qdrant/js-client-rest'
import type { ServiceAnalyzer } from '../../kernel/analyzers.js'
import { BackendUnavailableError, ProviderError, UnexpectedResponseError, probeHealth, type BackendHealth } from '../errors.js'
import { checkNamespace } from '../namespace.js'
import { mapError } from '../vector-store/qdrant-errors.js'
import { checkClusterSettings, creationParams, replicationFixFor, retryReplicaReads, SINGLE_NODE, type QdrantClusterSettings } from '../vector-store/qdrant-cluster.js'
import { retryOnceOnClosedSocket } from '../vector-store/socket-retry.js'
import { LEXICAL_METADATA_KEY, LEXICAL_VECTOR, lexicalSettings, WEIGHTED_VECTOR } from './lexical-point.js'
import type { LexicalIndexes } from './port.js'
import { BACKEND, inNamespace, NAMESPACE_FIELD, type Filter, type QdrantLexicalIndexesOptions } from './qdrant-collection.js'
import { QdrantLexicalIndex } from './qdrant-namespace-index.js'

/** The collection's stored lexical settings differ from this service's: starting would mix two tokenisations. */
class LexicalSettingsMismatchError extends ProviderError {
  /** Start-up must stop rather than retry: the collection will not change by itself. */
  readonly fatal = true
}

/**
 * BM25 in Qdrant (docs/scale-out.md): raw term frequencies in the sparse vector `lex`, the length and the
 * distinct tokens in the payload; N, df and the average length read from the points at every search, so that
 * any number of replicas writing at once score exactly as the embedded index does over the same namespace.
 */
export class QdrantLexicalIndexes implements LexicalIndexes {
  private readonly indexes = new Map<string, QdrantLexicalIndex>()
  readonly client: QdrantClient
  readonly writer: QdrantClient
  readonly cluster: QdrantClusterSettings
  readonly analyzer: ServiceAnalyzer
  readonly settings: ReturnType<typeof lexicalSettings>
  readonly shared = true
  private ready = false
  private closed = false
  constructor(readonly options: QdrantLexicalIndexesOptions) {
    const make = (timeout: number) => new QdrantClient({
      url: options.url, ...(options.apiKey ? { apiKey: options.apiKey } : {}), timeout,
      // as the vector store: an uncompressed answer avoids a delayed-ACK stall (src/providers/vector-store/qdrant.ts)
      headers: { 'accept-encoding': 'identity' }, checkCompatibility: false
    })
    this.client = make(options.timeoutMs)
    this.writer = make(options.writeTimeoutMs ?? options.timeoutMs)
    this.cluster = options.cluster ?? SINGLE_NODE
    this.analyzer = options.analyzer ?? 'cjk-bigram'
    this.settings = lexicalSettings(this.analyzer)
  }

  /** What every read passes: how many replicas of each shard answer it. */
  get consistency(): { consistency: QdrantClusterSettings['readConsistency'] } {
    return { consistency: this.cluster.readConsistency }
  }

  /** An exact count of the points `filter` keeps (the client's `count` leaves out `consistency`; the API call beneath takes it). */
  async count(filter: Filter): Promise<number> {
    const { data } = await this.read(() => this.client.api().countPoints({
      collection_name: this.options.collection, ...this.consistency, exact: true, filter
    }))
    if (!data.result) throw new UnexpectedResponseError(BACKEND, 'qdrant answered a count without a result')
    return data.result.count
  }

  get(namespace: string): QdrantLexicalIndex {
    let index = this.indexes.get(namespace)
    if (!index) {
      index = new QdrantLexicalIndex(this, checkNamespace(namespace))
      this.indexes.set(namespace, index)
    }
    return index
  }

  async open(): Promise<void> {
    await this.ensure(false)
  }

  async drop(namespace: string): Promise<void> {
    checkNamespace(namespace)
    // with the vector store writing the points, its namespace drop has removed them (both legs) already
    if (this.options.points === 'own' && await this.ensure(false)) {
      await this.call(() => this.writer.delete(this.options.collection, { wait: true, filter: { must: [inNamespace(namespace)] } }))
    }
    await this.indexes.get(namespace)?.forget()
  }

  health(): Promise<BackendHealth> {
    return probeHealth(BACKEND, async () => {
      await this.call(() => this.client.versionInfo())
      const held = [...this.indexes.values()].reduce((n, i) => n + i.size, 0)
      const copies = this.options.localCopy ? `; local copy ready in ${[...this.indexes.values()].filter((i) => i.localCopyReady).length}` : ''
      return `${held} documents in ${this.indexes.size} namespace${this.indexes.size === 1 ? '' : 's'} (collection ${this.options.collection})${copies}`
    })
  }

  async close(): Promise<void> {
    this.closed = true
    await Promise.all([...this.indexes.values()].map((i) => i.close()))
  }

  /**
   * Makes the collection ready for the lexical leg, once: the sparse vector, the length index, the settings
   * checked against (or recorded in) its metadata. False when the collection does not exist and `create`
   * is false (nothing to read yet).
   */
  async ensure(create: boolean): Promise<boolean> {
    if (this.ready) return true
    const ok = await this.prepare(create)
    if (ok) this.ready = true
    return ok
  }

  private async prepare(create: boolean): Promise<boolean> {
    const { collection } = this.options
    const { exists } = await this.call(() => this.client.collectionExists(collection))
    if (!exists && !create) return false
    if (!exists) {
      if (this.options.points === 'vector-store') throw new UnexpectedResponseError(BACKEND, `collection ${collection} does not exist yet`)
      // another replica may create it meanwhile (409); the checks below decide
      await this.call(() => this.writer.createCollection(collection, {
        ...creationParams(this.cluster),
        sparse_vectors: { [LEXICAL_VECTOR]: { modifier: 'none' }, [WEIGHTED_VECTOR]: { modifier: 'none' } }, metadata: { [LEXICAL_METADATA_KEY]: { ...this.settings } }
      })).catch(ignoreConflict)
    }
    const info = await this.call(() => this.client.getCollection(collection))
    if (this.options.points === 'own') {
      const params = info.config.params as Record<string, unknown>
      checkClusterSettings(BACKEND, collection, params, this.cluster, await replicationFixFor(this.options, collection, params, this.cluster))
    }
    const stored = (info.config.metadata as Record<string, unknown> | null | undefined)?.[LEXICAL_METADATA_KEY]
    if (stored !== undefined && stored !== null) checkSettings(collection, stored, this.settings)
    // `lexw` is added in place to a collection written before it existed; its points lack it until `sync`
    for (const name of [LEXICAL_VECTOR, WEIGHTED_VECTOR]) {
      const sparse = info.config.params.sparse_vectors?.[name]
      if (!sparse) {
        await this.call(() => this.writer.createVectorName(collection, name, { sparse: { modifier: 'none' } }, { wait: true }))
          .catch(ignoreConflict)
      } else if (sparse.modifier && sparse.modifier !== 'none') {
        throw new LexicalSettingsMismatchError(BACKEND,
          `collection ${collection}: its sparse vector ${name} has modifier ${sparse.modifier}; recall keeps the BM25 statistics itself and needs modifier none`)
      }
    }
    if (stored === undefined || stored === null) {
      await this.call(() => this.writer.updateCollection(collection, { metadata: { [LEXICAL_METADATA_KEY]: { ...this.settings } } }))
    }
    await this.call(() => this.writer.createPayloadIndex(collection, { field_name: 'lex_len', field_schema: 'integer', wait: true }))
    await this.call(() => this.writer.createPayloadIndex(collection, { field_name: 'lex_aref', field_schema: 'integer', wait: true }))
    // without it, the token check reads every candidate's payload: ~50x slower (docs/scale-out.md)
    await this.call(() => this.writer.createPayloadIndex(collection, { field_name: 'lex_terms', field_schema: 'keyword', wait: true }))
    await this.call(() => this.writer.createPayloadIndex(collection, {
      field_name: NAMESPACE_FIELD, field_schema: { type: 'keyword', is_tenant: true }, wait: true
    }))
    return true
  }

  /** The namespace's average length as this process last read it; undefined when it has not, or it was empty. */
  knownAverageLength(namespace: string): number | undefined {
    return this.indexes.get(namespace)?.averageLength
  }

  /** Forgets that the collection was made ready (it was dropped elsewhere, e.g. by a test). */
  reset(): void {
    this.ready = false
  }

  /**
   * A reading request, sent again once should the server have closed its kept-alive socket just as it was
   * reused (undici keeps idle sockets 10 s, actix closes them after 5 s; a search's parallel counts meet it).
   */
  read<T>(request: () => Promise<T>): Promise<T> {
    // and again while Qdrant answers that the replica it chose failed (a restarted node loading its shards: docs/deployment.md)
    return retryReplicaReads(() => retryOnceOnClosedSocket(() => this.call(request)))
  }

  async call<T>(request: () => Promise<T>): Promise<T> {
    if (this.closed) throw new BackendUnavailableError(BACKEND, 'lexical index is closed')
    try {
      return await request()
    } catch (error) {
      const mapped = mapError(error)
      if (mapped.backend === BACKEND) throw mapped
      throw new (mapped.constructor as typeof ProviderError)(BACKEND, mapped.message, { cause: error })
    }
  }
}


function ignoreConflict(error: unknown): void {
  if (!(error instanceof UnexpectedResponseError && /\b409\b|already exists/i.test(error.message))) throw error
}

function checkSettings(collection: string, stored: unknown, settings: ReturnType<typeof lexicalSettings>): void {
  const want = settings as Record<string, unknown>
  const got = (typeof stored === 'object' && stored !== null ? stored : {}) as Record<string, unknown>
  const differs = Object.keys({ ...want, ...got }).some((k) => JSON.stringify(got[k]) !== JSON.stringify(want[k]))
  if (differs) {
    throw new LexicalSettingsMismatchError(BACKEND,
      `collection ${collection} holds a lexical leg written with ${JSON.stringify(got)}, but this service analyzes and scores ` +
      `with ${JSON.stringify(want)}; refusing to mix two tokenisations (use another COLLECTION_PREFIX, or empty the collection)`)
  }
}

import { QdrantClient } from '@qdrant/js-client-rest'
import { UnexpectedResponseError } from '../../providers/errors.js'
import { mapError } from '../../providers/vector-store/qdrant-errors.js'
import { creationParams, SINGLE_NODE, type QdrantClusterSettings } from '../../providers/vector-store/qdrant-cluster.js'
import type { Claim, SoleWriterRegistry, StoredRegistration, WriterIdentity } from './registry.js'

/** The one point of the collection: the registration. */
const POINT_ID = 1


export interface QdrantSoleWriterRegistryOptions {
  url: string
  apiKey?: string
  /** A collection of its own (`<COLLECTION_PREFIX>writers`): one vectorless point holds the registration. */
  collection: string
  timeoutMs: number
  /**
   * How long a claim waits between writing itself and reading back who holds it, in ms. Qdrant has no
   * compare-and-set: two claimants that both found it free both write, and the one whose write landed last
   * holds it. The wait must outlast the time between a claimant's read and its write (a few ms; 1 s by default).
   */
  settleMs?: number
  /** Shards and replicas of the collection when this creates it, and the consistency of its reads. Default: one server's. */
  cluster?: QdrantClusterSettings
}

/**
 * The registration in the shared Qdrant, for a writer without Redis: a heartbeat (the holder's clock) renewed
 * within the lease. A registration is live while its heartbeat plus its lease lies ahead on the reader's
 * clock, so the hosts' clocks must agree to well within a lease.
 */
export class QdrantSoleWriterRegistry implements SoleWriterRegistry {
  readonly where: string
  readonly #client: QdrantClient
  readonly #collection: string
  readonly #settleMs: number
  readonly #cluster: QdrantClusterSettings
  #ensured = false

  constructor(options: QdrantSoleWriterRegistryOptions) {
    this.#client = new QdrantClient({
      url: options.url, ...(options.apiKey ? { apiKey: options.apiKey } : {}), timeout: options.timeoutMs, checkCompatibility: false
    })
    this.#collection = options.collection
    this.#settleMs = options.settleMs ?? 1_000
    this.#cluster = options.cluster ?? SINGLE_NODE
    this.where = `Qdrant collection ${options.collection}`
  }

  async claim(self: WriterIdentity, leaseMs: number): Promise<Claim> {
    await this.#ensureCollection()
    const current = await this.#read()
    if (current && current.instance !== self.instance && liveFor(current) > 0) return taken(current)
    await this.#write(self, leaseMs)
    if (current?.instance === self.instance) return { held: true }
    await new Promise((resolve) => setTimeout(resolve, this.#settleMs))
    const after = await this.#read()
    if (after?.instance === self.instance) return { held: true }
    if (!after) throw new UnexpectedResponseError(BACKEND, `the registration in ${this.where} disappeared while it was claimed`)
    return taken(after)
  }

  async release(self: WriterIdentity): Promise<void> {
    await this.#ensureCollection()
    // Deleted only while it is still this instance's: one condition, checked by Qdrant.
    await this.#client.delete(this.#collection, {
      wait: true, filter: { must: [{ has_id: [POINT_ID] }, { key: 'instance', match: { value: self.instance } }] }
    }).catch((error: unknown) => { throw mapError(error) })
  }

  async #ensureCollection(): Promise<void> {
    if (this.#ensured) return
    try {
      const { exists } = await this.#client.collectionExists(this.#collection)
      if (!exists) await this.#client.createCollection(this.#collection, { vectors: {}, ...creationParams(this.#cluster) })
    } catch (error) {
      // another process created it between the two calls
      if ((error as { status?: unknown } | null)?.status !== 409) throw mapError(error)
    }
    this.#ensured = true
  }

  async #read(): Promise<StoredRegistration | undefined> {
    const [point] = await this.#client.retrieve(this.#collection, { consistency: this.#cluster.readConsistency, ids: [POINT_ID], with_payload: true, with_vector: false })
      .catch((error: unknown) => { throw mapError(error) })
    return point?.payload ? point.payload as unknown as StoredRegistration : undefined
  }

  async #write(self: WriterIdentity, leaseMs: number): Promise<void> {
    const payload: StoredRegistration = {
      instance: self.instance, host: self.host, pid: self.pid, started_at: self.startedAt, heartbeat_at: Date.now(), lease_ms: leaseMs
    }
    await this.#client.upsert(this.#collection, { wait: true, points: [{ id: POINT_ID, vector: {}, payload: { ...payload } }] })
      .catch((error: unknown) => { throw mapError(error) })
  }
}

const BACKEND = 'vector-store:qdrant'

/** How much longer a registration lasts, in ms, on this process's clock. */
function liveFor(registration: StoredRegistration): number {
  return registration.heartbeat_at + registration.lease_ms - Date.now()
}

function taken(registration: StoredRegistration): Claim {
  const { instance, host, pid, started_at: startedAt } = registration
  return { held: false, holder: { instance, host, pid, startedAt }, endsInMs: Math.max(0, liveFor(registration)) }
}

import { ProviderError } from '../errors.js'

/** How many replicas of each shard answer a read: a number, or Qdrant's `majority`, `quorum` or `all`. */
export type QdrantReadConsistency = number | 'majority' | 'quorum' | 'all'

/**
 * How recall's collections spread over a Qdrant cluster (docs/deployment.md). Applied when recall creates a
 * collection and checked against every collection it opens; on one server the defaults are Qdrant's own.
 */
export interface QdrantClusterSettings {
  /** Shards of a new collection; undefined leaves it to the server (one per node of the cluster, 1 on one server). */
  shardNumber?: number
  /** Copies of each shard. 1: a node down takes its shards' points with it. */
  replicationFactor: number
  /** Replicas of a shard that must confirm a write before it is acknowledged; at most `replicationFactor`. */
  writeConsistencyFactor: number
  /** Replicas of each shard a read asks (`consistency`); 1 reads one replica, as Qdrant does by default. */
  readConsistency: QdrantReadConsistency
}

/** A single server's settings: what Qdrant does when none is given. */
export const SINGLE_NODE: QdrantClusterSettings = { replicationFactor: 1, writeConsistencyFactor: 1, readConsistency: 1 }

/** The settings a collection is created with. */
export function creationParams(settings: QdrantClusterSettings): { shard_number?: number; replication_factor: number; write_consistency_factor: number } {
  return {
    ...(settings.shardNumber !== undefined ? { shard_number: settings.shardNumber } : {}),
    replication_factor: settings.replicationFactor,
    write_consistency_factor: settings.writeConsistencyFactor
  }
}

/** An existing collection is spread otherwise than this service is configured to spread it. */
class ClusterSettingsMismatchError extends ProviderError {
  /** Start-up must stop rather than retry: the collection will not change by itself. */
  readonly fatal = true
}

/**
 * Throws {@link ClusterSettingsMismatchError} naming every setting of `params` (a collection's
 * `config.params`) that differs from `settings`. A shard number left to the server is not checked.
 */
export function checkClusterSettings(backend: string, collection: string, params: Record<string, unknown>, settings: QdrantClusterSettings): void {
  const want = creationParams(settings)
  const differs = (Object.keys(want) as (keyof typeof want)[])
    // Qdrant leaves out a value equal to its default (1) in some answers
    .map((key) => ({ key, got: params[key] ?? 1, want: want[key] }))
    .filter(({ got, want }) => got !== want)
  if (differs.length === 0) return
  const env: Record<string, string> = {
    shard_number: 'QDRANT_SHARD_NUMBER', replication_factor: 'QDRANT_REPLICATION_FACTOR', write_consistency_factor: 'QDRANT_WRITE_CONSISTENCY_FACTOR'
  }
  throw new ClusterSettingsMismatchError(backend,
    `collection ${collection} was created with ${differs.map((d) => `${d.key} ${String(d.got)}`).join(', ')}, but this service is configured ` +
    `for ${differs.map((d) => `${d.key} ${String(d.want)} (${env[d.key]})`).join(', ')}; set the variables to the collection's values, ` +
    'or change the collection first (replication factor and write consistency: PATCH /collections/{name} and replicate its shards; ' +
    'shard number: a new collection under another COLLECTION_PREFIX, then re-ingest)')
}

/**
 * Whether Qdrant answered that the replica it chose for a read failed ("1 of 1 read operations failed"): with one
 * replica asked (read consistency 1) it does not ask another. Seen while a restarted node loads its shards ("Local
 * shard 1 not found", for about a second): another attempt is sent to a replica chosen again.
 */
function replicaReadFailed(error: unknown): boolean {
  return error instanceof Error && /\bread operations? failed\b/i.test(error.message)
}

/** Pauses between the attempts of a read whose replica failed, in ms: about half a second in all. */
const REPLICA_RETRY_DELAYS_MS = [10, 40, 100, 300]

/** Runs a read, again after a short pause while {@link replicaReadFailed} says its replica failed (at most 4 more times). */
export async function retryReplicaReads<T>(read: () => Promise<T>, signal?: AbortSignal): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await read()
    } catch (error) {
      const delay = REPLICA_RETRY_DELAYS_MS[attempt]
      if (delay === undefined || !replicaReadFailed(error) || signal?.aborted) throw error
      await new Promise((resolve) => setTimeout(resolve, delay))
    }
  }
}

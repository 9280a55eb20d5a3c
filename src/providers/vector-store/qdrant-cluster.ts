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
export function checkClusterSettings(backend: string, collection: string, params: Record<string, unknown>, settings: QdrantClusterSettings, fix?: string): void {
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
    'shard number: a new collection under another COLLECTION_PREFIX, then re-ingest)' + (fix ? `. ${fix}` : ''))
}

/**
 * When `params` (a collection's) hold fewer copies of each shard than `settings` asks for, the commands that raise
 * them ({@link replicationFactorFix}), or why none could be planned; otherwise undefined.
 */
export async function replicationFixFor(server: { url: string; apiKey?: string | undefined }, collection: string, params: Record<string, unknown>,
  settings: QdrantClusterSettings): Promise<string | undefined> {
  if (Number(params.replication_factor ?? 1) >= settings.replicationFactor) return undefined
  return replicationFactorFix(server.url, server.apiKey, collection, settings.replicationFactor)
    .catch((error: unknown) => `(no command to raise it could be planned: ${error instanceof Error ? error.message : String(error)})`)
}

interface ShardReplica { shard_id: number; peer_id: string }

/** A Qdrant answer's JSON with every integer of 16 digits or more kept as a string (peer ids are u64: a JS number loses them). */
async function getExact(url: string, path: string, apiKey: string | undefined): Promise<Record<string, unknown>> {
  const response = await fetch(`${url.replace(/\/$/, '')}${path}`, { headers: apiKey ? { 'api-key': apiKey } : {}, signal: AbortSignal.timeout(5_000) })
  if (!response.ok) throw new Error(`GET ${path} answered ${response.status}`)
  const body = JSON.parse((await response.text()).replace(/([:\[,]\s*)(\d{16,})(?=\s*[,}\]])/g, '$1"$2"')) as { result?: Record<string, unknown> }
  return body.result ?? {}
}

/**
 * The commands that raise `collection`'s replication factor to `factor` on the cluster at `url`: the collection's
 * setting (`PATCH /collections/{name}`), then one `replicate_shard` per missing copy of each shard, from a peer that
 * holds it to one that does not (`POST /collections/{name}/cluster`). A single server (cluster disabled), or fewer
 * peers than `factor`, is said instead: no command can do it there.
 */
async function replicationFactorFix(url: string, apiKey: string | undefined, collection: string, factor: number): Promise<string> {
  const cluster = await getExact(url, '/cluster', apiKey)
  if (cluster.status !== 'enabled') {
    return `To raise it: this Qdrant runs as one server (cluster ${String(cluster.status)}), where every shard has one copy; ` +
      `replication factor ${factor} needs a cluster of at least ${factor} nodes (docs/deployment.md)`
  }
  const peers = Object.keys((cluster.peers ?? {}) as Record<string, unknown>)
  if (peers.length < factor) return `To raise it: the cluster has ${peers.length} peer(s), and replication factor ${factor} needs ${factor}: add nodes first`
  const info = await getExact(url, `/collections/${encodeURIComponent(collection)}/cluster`, apiKey)
  const replicas: ShardReplica[] = [
    ...((info.local_shards ?? []) as Array<{ shard_id: number }>).map((s) => ({ shard_id: s.shard_id, peer_id: String(info.peer_id) })),
    ...((info.remote_shards ?? []) as Array<{ shard_id: number; peer_id: unknown }>).map((s) => ({ shard_id: s.shard_id, peer_id: String(s.peer_id) }))
  ]
  const holders = new Map<number, string[]>()
  for (const r of replicas) holders.set(r.shard_id, [...(holders.get(r.shard_id) ?? []), r.peer_id])
  const load = new Map(peers.map((p) => [p, replicas.filter((r) => r.peer_id === p).length]))
  const base = url.replace(/\/$/, '')
  const header = apiKey ? " -H 'api-key: <key>'" : ''
  const commands = [`curl -X PATCH '${base}/collections/${collection}'${header} -H 'content-type: application/json' -d '{"params":{"replication_factor":${factor}}}'`]
  for (const [shard, held] of [...holders].sort((a, b) => a[0] - b[0])) {
    for (let copies = held.length; copies < factor; copies++) {
      // the least loaded peer that lacks the shard
      const to = peers.filter((p) => !held.includes(p)).sort((a, b) => load.get(a)! - load.get(b)!)[0]!
      commands.push(`curl -X POST '${base}/collections/${collection}/cluster'${header} -H 'content-type: application/json' ` +
        `-d '{"replicate_shard":{"shard_id":${shard},"from_peer_id":${held[0]},"to_peer_id":${to}}}'`)
      held.push(to)
      load.set(to, load.get(to)! + 1)
    }
  }
  return `To raise it, run: ${commands.join(' && ')}; then start recall again once GET /collections/${collection}/cluster lists every copy Active`
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

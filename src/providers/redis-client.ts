import { Cluster, Redis } from 'ioredis'

/**
 * A connection to the Redis every replica shares: one server (`redis://`, `rediss://`), a Redis Cluster
 * (`redis+cluster://host:port,host:port`, `rediss+cluster://`) or a master its Sentinels name
 * (`redis+sentinel://host:port,host:port/mastername`, `rediss+sentinel://`). Every key a script or a multi-key command of
 * recall touches names one namespace's hash tag on a cluster (`hashTag`), so it runs on one master.
 */
export type RedisClient = Redis | Cluster

export interface RedisClientOptions {
  /** Longest wait for one command, in milliseconds, before it counts as failed. Default 50. */
  commandTimeoutMs?: number
  /** Longest wait for a TCP connection, in milliseconds. Default 1,000. */
  connectTimeoutMs?: number
  /** Ceiling of the reconnect backoff (50 ms doubling), in milliseconds. Default 1,000. */
  maxReconnectDelayMs?: number
}

export interface ClusterAddress {
  nodes: Array<{ host: string; port: number }>
  username?: string
  password?: string
  tls: boolean
}

const CLUSTER_URL = /^(rediss?)\+cluster:\/\/(?:([^@/]*)@)?([^/?#]+)\/?$/
const SENTINEL_URL = /^(rediss?)\+sentinel:\/\/(?:([^@/]*)@)?([^/?#]+)\/([^/?#]+)$/

/** `host:port[,host:port...]` (a port left out is 6379) and `user:password` of a cluster's or Sentinels' URL. */
function hostsAndCredentials(url: string, scheme: string, credentials: string | undefined, hosts: string): ClusterAddress {
  const nodes = hosts.split(',').map((entry) => {
    const at = /^(\[[^\]]+\]|[^:]+)(?::(\d{1,5}))?$/.exec(entry)
    if (!at) throw new TypeError(`${url}: "${entry}" is not host:port`)
    return { host: at[1]!.replace(/^\[|\]$/g, ''), port: at[2] ? Number(at[2]) : 6379 }
  })
  const address: ClusterAddress = { nodes, tls: scheme === 'rediss' }
  if (credentials) {
    const colon = credentials.indexOf(':')
    const user = decodeURIComponent(colon < 0 ? '' : credentials.slice(0, colon))
    const password = decodeURIComponent(colon < 0 ? credentials : credentials.slice(colon + 1))
    if (user) address.username = user
    if (password) address.password = password
  }
  return address
}

/**
 * The seed nodes of a `redis+cluster://[user:password@]host:port[,host:port...]` URL (`rediss+cluster://` for TLS);
 * `undefined` for a single server's URL. A port left out is 6379. Throws a TypeError naming a malformed URL.
 */
export function clusterAddress(url: string): ClusterAddress | undefined {
  if (!/^rediss?\+cluster:/.test(url)) return undefined
  const match = CLUSTER_URL.exec(url)
  if (!match) throw new TypeError(`${url} is not redis+cluster://[user:password@]host:port[,host:port...]`)
  const [, scheme, credentials, hosts] = match
  return hostsAndCredentials(url, scheme!, credentials, hosts!)
}

export interface SentinelAddress extends ClusterAddress {
  /** The master group's name, as the Sentinels know it (`sentinel monitor <name> ...`). */
  name: string
}

/**
 * The Sentinels and the master's name of a `redis+sentinel://[user:password@]host:port[,host:port...]/mastername`
 * URL (`rediss+sentinel://` for TLS to the Sentinels and the servers; the credentials are the servers', the
 * Sentinels are asked without); `undefined` for any other URL. Throws a TypeError naming a malformed URL.
 */
export function sentinelAddress(url: string): SentinelAddress | undefined {
  if (!/^rediss?\+sentinel:/.test(url)) return undefined
  const match = SENTINEL_URL.exec(url)
  if (!match) throw new TypeError(`${url} is not redis+sentinel://[user:password@]host:port[,host:port...]/mastername`)
  const [, scheme, credentials, hosts, name] = match
  return { ...hostsAndCredentials(url, scheme!, credentials, hosts!), name: decodeURIComponent(name!) }
}

/**
 * A client tuned for things that must never wait long on Redis (cache, rate-limit store): commands fail at once
 * while disconnected instead of queueing, each command has a deadline, and the client reconnects forever with
 * capped exponential backoff. On a cluster a command whose master is failing over is retried every 100 ms, up to
 * 30 times (a replica takes over within cluster-node-timeout plus about a second), and the slot map is read again.
 * The caller must listen for `error` events (ioredis prints unhandled ones to stderr).
 */
export function createRedisClient(url: string, options: RedisClientOptions = {}): RedisClient {
  const maxDelay = options.maxReconnectDelayMs ?? 1_000
  const retry = (attempt: number) => Math.min(50 * 2 ** Math.min(attempt - 1, 10), maxDelay)
  const perConnection = {
    commandTimeout: options.commandTimeoutMs ?? 50,
    connectTimeout: options.connectTimeoutMs ?? 1_000,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false
  }
  const sentinels = sentinelAddress(url)
  if (sentinels) {
    return new Redis({
      ...perConnection, enableOfflineQueue: false, retryStrategy: retry,
      // the Sentinels are asked for the master at every (re)connect, and their failover notice reconnects at once
      sentinels: sentinels.nodes, name: sentinels.name, role: 'master', sentinelRetryStrategy: retry, failoverDetector: true,
      ...(sentinels.username ? { username: sentinels.username } : {}),
      ...(sentinels.password ? { password: sentinels.password } : {}),
      ...(sentinels.tls ? { tls: {}, enableTLSForSentinelMode: true } : {})
    })
  }
  const cluster = clusterAddress(url)
  if (!cluster) return new Redis(url, { ...perConnection, enableOfflineQueue: false, retryStrategy: retry })
  return new Cluster(cluster.nodes, {
    // the first slot map is read on connect; a command sent before it is ready fails, as on one server
    enableOfflineQueue: false,
    clusterRetryStrategy: retry,
    retryDelayOnFailover: 100,
    retryDelayOnClusterDown: 100,
    retryDelayOnTryAgain: 100,
    maxRedirections: 30,
    slotsRefreshTimeout: 2_000,
    redisOptions: {
      ...perConnection,
      ...(cluster.username ? { username: cluster.username } : {}),
      ...(cluster.password ? { password: cluster.password } : {}),
      ...(cluster.tls ? { tls: {} } : {})
    }
  })
}

/**
 * How many replicas must hold a write of the write path (the lease lock, a namespace's generation) before recall
 * counts it (`REDIS_WAIT_REPLICAS`, `REDIS_WAIT_TIMEOUT_MS`): Redis replicates asynchronously, and a write only its
 * master held is lost when a replica takes over.
 */
export interface ReplicaAcknowledgement {
  /** Replicas that must confirm; 0 sends no `WAIT`. */
  replicas: number
  /** Longest wait for them, in milliseconds. */
  timeoutMs: number
}

/** Fewer replicas than asked confirmed a write in time: the master holds it, and a failover now could lose it. */
export class UnconfirmedWriteError extends Error {
  constructor(readonly confirmed: number, readonly acknowledgement: ReplicaAcknowledgement) {
    super(`the master holds the write, but ${confirmed} of the ${acknowledgement.replicas} replica(s) REDIS_WAIT_REPLICAS asks for ` +
      `confirmed it within REDIS_WAIT_TIMEOUT_MS=${acknowledgement.timeoutMs} ms (a failover now could lose it)`)
    this.name = 'UnconfirmedWriteError'
  }
}

/**
 * Runs a script, then, when `acknowledgement` asks for replicas, Redis's `WAIT` on the same connection: one pipeline,
 * so that on a cluster both go to the master of the script's keys (WAIT names no key; it counts the replicas that
 * hold every write this connection sent). Answers the script's result; throws {@link UnconfirmedWriteError} when
 * fewer replicas confirmed. The client's command timeout must exceed `timeoutMs`, or WAIT times out in the client.
 */
export async function evalConfirmed(client: RedisClient, acknowledgement: ReplicaAcknowledgement | undefined, script: string,
  keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
  if (!acknowledgement || acknowledgement.replicas <= 0) return client.eval(script, keys.length, ...keys, ...args)
  for (let attempt = 1; ; attempt++) {
    const results = await client.pipeline().eval(script, keys.length, ...keys, ...args).wait(acknowledgement.replicas, acknowledgement.timeoutMs).exec()
    const [ran, waited] = results ?? []
    if (!ran || !waited) throw new Error('redis ran no pipeline')
    if (ran[0]) {
      // ioredis follows a redirection of a pipeline only when every command got it, and WAIT (no key) never does: the
      // script did not run there, so it is sent again once the slot map is read anew (as a lone command would be)
      if (!isCluster(client) || !CLUSTER_REDIRECT.test(ran[0].message) || attempt >= CLUSTER_ATTEMPTS) throw ran[0]
      client.refreshSlotsCache()
      await new Promise((resolve) => setTimeout(resolve, 100))
      continue
    }
    if (waited[0]) throw waited[0]
    const confirmed = Number(waited[1])
    if (confirmed < acknowledgement.replicas) throw new UnconfirmedWriteError(confirmed, acknowledgement)
    return ran[1]
  }
}

/** Answers of a cluster node that ran nothing: the slot is elsewhere, moving, or has no master yet. */
const CLUSTER_REDIRECT = /^(MOVED|ASK|TRYAGAIN|CLUSTERDOWN)\b/
/** Attempts of a redirected script, 100 ms apart: as long as the cluster client retries a lone command (30 × 100 ms). */
const CLUSTER_ATTEMPTS = 30

export function isCluster(client: RedisClient): client is Cluster {
  return client instanceof Cluster
}

/**
 * The `{...}` hash tag that keeps the keys of one namespace in one slot on a cluster, so that a script touching
 * several of them runs there; empty on one server, where recall's key names stay as they always were.
 */
export function hashTag(client: RedisClient, namespace: string): string {
  return isCluster(client) ? `{${namespace}}` : namespace
}

/**
 * A connection of its own for SUBSCRIBE (a subscribed connection can send nothing else): commands wait for it
 * while it connects and have no deadline, and it subscribes again after each reconnect. On a cluster it listens on
 * one node (every node sees every PUBLISH) and moves to another when that node goes away.
 */
export function subscriberOf(client: RedisClient, connectionName: string): RedisClient {
  if (isCluster(client)) {
    return client.duplicate([], {
      enableOfflineQueue: true,
      redisOptions: { ...client.options.redisOptions, connectionName, commandTimeout: undefined, maxRetriesPerRequest: null }
    })
  }
  return client.duplicate({ connectionName, enableOfflineQueue: true, commandTimeout: undefined, maxRetriesPerRequest: null, autoResubscribe: true })
}

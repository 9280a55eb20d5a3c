import { Cluster, Redis } from 'ioredis'

/**
 * A connection to the Redis every replica shares: one server (`redis://`, `rediss://`) or a Redis Cluster
 * (`redis+cluster://host:port,host:port`, `rediss+cluster://`). Every key a script or a multi-key command of
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

/**
 * The seed nodes of a `redis+cluster://[user:password@]host:port[,host:port...]` URL (`rediss+cluster://` for TLS);
 * `undefined` for a single server's URL. A port left out is 6379. Throws a TypeError naming a malformed URL.
 */
export function clusterAddress(url: string): ClusterAddress | undefined {
  if (!/^rediss?\+cluster:/.test(url)) return undefined
  const match = CLUSTER_URL.exec(url)
  if (!match) throw new TypeError(`${url} is not redis+cluster://[user:password@]host:port[,host:port...]`)
  const [, scheme, credentials, hosts] = match
  const nodes = hosts!.split(',').map((entry) => {
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

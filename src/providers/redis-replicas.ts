import { errorMessage, probeHealth, type BackendHealth } from './errors.js'
import { isCluster, type RedisClient } from './redis-client.js'

/** One master and the replicas `WAIT` can count there now. */
interface MasterReplicas {
  /** `host:port` as the client reaches it. */
  address: string
  /** The cluster node id (Redis Cluster only): `redis-cli --cluster add-node … --cluster-master-id` takes it. */
  nodeId?: string
  /** Replicas whose link to this master is up (`INFO replication`: `state=online`). */
  replicas: number
}

/** The deployment `REDIS_URL` names, as the messages describe it. */
export type RedisDeployment = 'cluster' | 'sentinel' | 'server'

/** `state=online` replicas in an `INFO replication` answer: what `WAIT` can count on that master. */
function onlineReplicas(info: string): number {
  return info.split(/\r?\n/).filter((line) => /^slave\d+:/.test(line) && /(^|,)state=online(,|$)/.test(line.slice(line.indexOf(':') + 1))).length
}

/**
 * Every master the client writes to, with its online replicas: each master of the slot map on a cluster, else the
 * one server the connection reaches (the master the Sentinels name, or the single server).
 */
async function replicasPerMaster(client: RedisClient): Promise<MasterReplicas[]> {
  if (!isCluster(client)) {
    const replicas = onlineReplicas(await client.info('replication'))
    // under Sentinel the options name no server: the connection says which master it reached
    const { remoteAddress, remotePort } = client.stream ?? {}
    const address = remoteAddress && remotePort ? `${remoteAddress.replace(/^::ffff:/, '')}:${remotePort}` : `${client.options.host ?? '127.0.0.1'}:${client.options.port ?? 6379}`
    return [{ address, replicas }]
  }
  const masters = client.nodes('master')
  if (masters.length === 0) throw new Error('the cluster client knows no master yet (its slot map is not read)')
  return Promise.all(masters.map(async (node) => ({
    address: `${node.options.host ?? '127.0.0.1'}:${node.options.port ?? 6379}`,
    nodeId: String(await node.cluster('MYID')),
    replicas: onlineReplicas(await node.info('replication'))
  })))
}

/** Fewer replicas than `REDIS_WAIT_REPLICAS` asks for: no write lock or record could be confirmed. */
class WaitReplicasUnmetError extends Error {
  constructor(message: string, readonly wanted: number, readonly available: number) {
    super(message)
    this.name = 'WaitReplicasUnmetError'
  }
}

/**
 * Throws {@link WaitReplicasUnmetError} when some master has fewer online replicas than `wanted`, naming both numbers,
 * the master and the two fixes (add replicas, with the command for this deployment; or `REDIS_WAIT_REPLICAS=0`).
 * Answers a line saying what was found when every master has enough.
 */
function checkWaitReplicas(masters: readonly MasterReplicas[], wanted: number, deployment: RedisDeployment): string {
  const fewest = masters.reduce((a, b) => (b.replicas < a.replicas ? b : a))
  const short = masters.filter((m) => m.replicas < wanted)
  const counted = deployment === 'cluster'
    ? `${masters.length} masters, the fewest replicas ${fewest.replicas} (${fewest.address})`
    : `the master ${fewest.address} has ${fewest.replicas} online replica(s)`
  if (short.length === 0) return `REDIS_WAIT_REPLICAS=${wanted} is met: ${counted}`
  const add = deployment === 'cluster'
    ? short.map((m) => `redis-cli --cluster add-node <new-host:port> ${m.address} --cluster-slave --cluster-master-id ${m.nodeId ?? '<master id>'}` +
      `${wanted - m.replicas > 1 ? ` (x${wanted - m.replicas})` : ''}`).join('; ')
    : `redis-cli -h <new-host> -p <port> REPLICAOF ${fewest.address.replace(/:(\d+)$/, ' $1')}${deployment === 'sentinel' ? ' (the Sentinels find it there)' : ''}`
  const where = deployment === 'cluster'
    ? `${short.length} of the cluster's ${masters.length} masters ${short.length === 1 ? 'has' : 'have'} fewer (${short.map((m) => `${m.address}: ${m.replicas}`).join(', ')})`
    : `the master ${fewest.address} has ${fewest.replicas} online replica(s)`
  throw new WaitReplicasUnmetError(
    `REDIS_WAIT_REPLICAS=${wanted} asks ${wanted} replica(s) of a master to confirm every write lock and generation record, but the ` +
    `deployment can confirm ${fewest.replicas}: ${where}, so every write would answer 503. Either add replicas, ${wanted} per master ` +
    `(${add}), or set REDIS_WAIT_REPLICAS=${fewest.replicas} and accept the weaker promise: a failover may then lose the last lock or ` +
    'generation a master acknowledged (docs/scale-out.md, "Start-up checks of a cluster")', wanted, fewest.replicas)
}

/** Waits for the client's connection (it queues no command before), at most `ms`. */
async function ready(client: RedisClient, ms: number): Promise<void> {
  if (client.status === 'ready') return
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      client.off('ready', done)
      reject(new Error(`cannot count the replicas of Redis's masters: no connection within ${ms} ms (${client.status})`))
    }, ms)
    const done = (): void => {
      clearTimeout(timer)
      resolve()
    }
    client.once('ready', done)
  })
}

/** The deployment a `REDIS_URL` names. */
export function deploymentOf(url: string): RedisDeployment {
  return /^rediss?\+cluster:/.test(url) ? 'cluster' : /^rediss?\+sentinel:/.test(url) ? 'sentinel' : 'server'
}

/** The check against the live deployment; a Redis that cannot be asked is said so (not counted as unmet). */
async function checkDeploymentReplicas(client: RedisClient, wanted: number, deployment: RedisDeployment): Promise<string> {
  let masters: MasterReplicas[]
  try {
    masters = await replicasPerMaster(client)
  } catch (error) {
    throw new Error(`cannot count the replicas of Redis's masters: ${errorMessage(error)}`, { cause: error })
  }
  return checkWaitReplicas(masters, wanted, deployment)
}

export interface WaitReplicasWatchOptions {
  client: RedisClient
  /** `REDIS_WAIT_REPLICAS`. */
  wanted: number
  deployment: RedisDeployment
  logger?: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void }
}

/**
 * `REDIS_WAIT_REPLICAS` against the deployment, checked at start-up (the step that holds readiness back), at every
 * `/readyz` (its `write-confirmation:redis` entry) and when the topology changes (a cluster's node added or removed,
 * its slot map read anew; a reconnect, as after a Sentinel failover), logging each change of the outcome.
 */
export class WaitReplicasWatch {
  readonly #options: WaitReplicasWatchOptions
  #running: Promise<string> | undefined
  #lastUnmet: boolean | undefined
  #following = false
  readonly #onTopology = (): void => { this.check().catch(() => undefined) }

  constructor(options: WaitReplicasWatchOptions) {
    this.#options = options
  }

  /** Checks now (one check at a time: a caller during one shares it); throws what {@link checkDeploymentReplicas} throws. */
  check(): Promise<string> {
    this.#running ??= this.#check().finally(() => { this.#running = undefined })
    return this.#running
  }

  /** Starts following topology changes. */
  follow(): void {
    if (this.#following) return
    this.#following = true
    const { client } = this.#options
    for (const event of isCluster(client) ? ['+node', '-node', 'refresh'] : ['ready']) client.on(event, this.#onTopology)
  }

  health(): Promise<BackendHealth> {
    return probeHealth('write-confirmation:redis', () => this.check())
  }

  close(): void {
    const { client } = this.#options
    for (const event of ['+node', '-node', 'refresh', 'ready']) client.off(event, this.#onTopology)
  }

  async #check(): Promise<string> {
    const { client, wanted, deployment, logger } = this.#options
    try {
      await ready(client, 2_000)
      const line = await checkDeploymentReplicas(client, wanted, deployment)
      if (this.#lastUnmet === true) logger?.info({ wanted }, `redis: ${line} again; writes can be confirmed`)
      this.#lastUnmet = false
      return line
    } catch (error) {
      if (error instanceof WaitReplicasUnmetError && this.#lastUnmet !== true) {
        this.#lastUnmet = true
        logger?.warn({ wanted, available: error.available }, `redis: ${error.message}`)
      }
      throw error
    }
  }
}

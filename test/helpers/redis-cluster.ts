import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, rm } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { controlNode } from './cluster-control.js'

/** One line saying why the Redis Cluster suites are skipped, or `undefined` when both binaries are there. */
export function redisClusterMissing(): string | undefined {
  for (const bin of ['redis-server', 'redis-cli']) {
    if (spawnSync(bin, ['--version'], { stdio: 'ignore' }).error) {
      return `SKIPPED: needs a real Redis Cluster: ${bin} not found (Debian: apt-get install -y redis-server), or set REDIS_CLUSTER_TEST_URL=redis+cluster://host:port`
    }
  }
  return undefined
}

export interface ClusterNode {
  readonly port: number
  readonly pid: number
  /** Stops this node's process and waits for it to exit. */
  stop(signal?: 'SIGTERM' | 'SIGKILL'): Promise<void>
  /** Starts a stopped node again on its port and cluster config file (empty: no persistence); it rejoins its cluster, as a replica of whoever took its slots. */
  restart(): Promise<void>
  readonly stopped: boolean
}

export interface RedisClusterServer {
  /** `redis+cluster://127.0.0.1:<port>,...` over every node, as `REDIS_URL` takes it. */
  readonly url: string
  readonly nodes: readonly ClusterNode[]
  readonly masters: number
  /** The live node serving the slot of `key` as master, read from `CLUSTER SHARDS` of a live node; throws while there is none. */
  masterOf(key: string): Promise<ClusterNode>
  /** Waits until every live node reports `cluster_state:ok` and `key`'s slot has a live master. */
  waitHealthy(timeoutMs: number, key?: string): Promise<void>
  stop(): Promise<void>
}

/** Two free ports `p` and `p + 10000` (the cluster bus), below 55536. */
async function freeClusterPort(taken: Set<number>): Promise<number> {
  const tryListen = (port: number) => new Promise<boolean>((resolve) => {
    const server = createServer()
    server.once('error', () => resolve(false))
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)))
  })
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 30_000)
    if (taken.has(port) || taken.has(port + 10_000) || taken.has(port - 10_000)) continue
    if (await tryListen(port) && await tryListen(port + 10_000)) {
      taken.add(port)
      return port
    }
  }
  throw new Error('no free pair of ports for a Redis Cluster node')
}

async function ping(port: number, timeoutMs: number, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    if (child.exitCode !== null) throw new Error(`redis-server on ${port} exited with code ${child.exitCode}`)
    const client = new Redis({ port, host: '127.0.0.1', lazyConnect: true, retryStrategy: null, maxRetriesPerRequest: 0 })
    client.on('error', () => undefined)
    try {
      await client.connect()
      if (await client.ping() === 'PONG') return
    } catch {
      if (Date.now() > deadline) throw new Error(`redis-server on ${port} did not answer PING within ${timeoutMs} ms`)
      await new Promise((resolve) => setTimeout(resolve, 50))
    } finally {
      client.disconnect()
    }
  }
}

/** Runs `run` on a connection of its own to the Redis server at `port` (no retries), then drops it. */
export async function onNode<T>(port: number, run: (client: Redis) => Promise<T>): Promise<T> {
  const client = new Redis({ port, host: '127.0.0.1', lazyConnect: true, retryStrategy: null, maxRetriesPerRequest: 0, connectTimeout: 1_000, commandTimeout: 2_000 })
  client.on('error', () => undefined)
  try {
    await client.connect()
    return await run(client)
  } finally {
    client.disconnect()
  }
}

/**
 * Starts a real Redis Cluster of Debian's `redis-server` (no persistence, 127.0.0.1): `masters` masters, each with
 * `replicasEach` replicas, formed by `redis-cli --cluster create`. `nodeTimeoutMs` is cluster-node-timeout: a
 * master unreachable that long is failed over to its replica.
 */
export async function startRedisCluster(options: { masters?: number; replicasEach?: number; nodeTimeoutMs?: number } = {}): Promise<RedisClusterServer> {
  const masters = options.masters ?? 3
  const replicasEach = options.replicasEach ?? 1
  const dir = await mkdtemp(join(tmpdir(), 'recall-redis-cluster-'))
  const taken = new Set<number>()
  const nodes: Array<ClusterNode & { child: ChildProcess }> = []
  const stopAll = async () => {
    for (const node of nodes) await node.stop('SIGKILL')
    await rm(dir, { recursive: true, force: true })
  }
  try {
    for (let i = 0; i < masters * (1 + replicasEach); i++) {
      const port = await freeClusterPort(taken)
      const spawnNode = () => {
        const child = spawn('redis-server', [
          '--port', String(port), '--bind', '127.0.0.1', '--daemonize', 'no', '--save', '', '--appendonly', 'no',
          '--cluster-enabled', 'yes', '--cluster-config-file', join(dir, `nodes-${port}.conf`),
          '--cluster-node-timeout', String(options.nodeTimeoutMs ?? 2_000), '--dir', dir,
          // a master failing over stops only its own slots: the run's other files keep the rest
          '--cluster-require-full-coverage', 'no'
        ], { stdio: ['ignore', 'ignore', 'pipe'] })
        child.on('error', () => undefined)
        return child
      }
      let child = spawnNode()
      const node = {
        port,
        get child() { return child },
        get pid() { return child.pid ?? 0 },
        get stopped() { return child.exitCode !== null || child.signalCode !== null },
        async stop(signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM') {
          if (child.exitCode !== null || child.signalCode !== null) return
          const exited = once(child, 'exit')
          child.kill(signal)
          await exited
        },
        async restart() {
          if (!node.stopped) return
          child = spawnNode()
          await ping(port, 15_000, child)
        }
      }
      nodes.push(node)
    }
    await Promise.all(nodes.map((n) => ping(n.port, 15_000, n.child)))
    const create = spawnSync('redis-cli', [
      '--cluster', 'create', ...nodes.map((n) => `127.0.0.1:${n.port}`), '--cluster-replicas', String(replicasEach), '--cluster-yes'
    ], { encoding: 'utf8', timeout: 60_000 })
    if (create.status !== 0) throw new Error(`redis-cli --cluster create failed: ${create.stdout}\n${create.stderr}`)
  } catch (error) {
    await stopAll()
    throw error
  }

  const server = clusterOver(`redis+cluster://${nodes.map((n) => `127.0.0.1:${n.port}`).join(',')}`, nodes, masters, stopAll)
  await server.waitHealthy(30_000)
  return server
}

/** masterOf and waitHealthy over `nodes`, asked of the nodes themselves (any process can). */
function clusterOver(url: string, nodes: readonly ClusterNode[], masters: number, stop: () => Promise<void>): RedisClusterServer {
  const live = () => nodes.filter((n) => !n.stopped)
  const server: RedisClusterServer = {
    url,
    nodes,
    masters,
    async masterOf(key) {
      for (const node of live()) {
        const port = await onNode(node.port, async (client) => {
          const slot = await client.cluster('KEYSLOT', key) as number
          const shards = await client.call('CLUSTER', 'SHARDS') as unknown[]
          for (const shard of shards as unknown[][]) {
            const slots = shard[1] as number[]
            const members = shard[3] as unknown[][]
            let owns = false
            for (let i = 0; i < slots.length; i += 2) if (slot >= slots[i]! && slot <= slots[i + 1]!) owns = true
            if (!owns) continue
            for (const member of members) {
              const fields = new Map<string, unknown>()
              for (let i = 0; i < member.length; i += 2) fields.set(String(member[i]), member[i + 1])
              if (fields.get('role') === 'master' && fields.get('health') === 'online') return Number(fields.get('port'))
            }
          }
          return undefined
        }).catch(() => undefined)
        const found = nodes.find((n) => n.port === port)
        // a killed master is reported online until the others flag it failed
        if (found && !found.stopped) return found
      }
      throw new Error(`no live master found for ${key}`)
    },
    async waitHealthy(timeoutMs, key) {
      const deadline = Date.now() + timeoutMs
      for (;;) {
        const states = await Promise.all(live().map((n) => onNode(n.port, (c) => c.cluster('INFO') as Promise<string>).catch(() => '')))
        let ok = states.every((s) => s.includes('cluster_state:ok'))
        if (ok && key !== undefined) ok = await server.masterOf(key).then(() => true, () => false)
        if (ok) return
        if (Date.now() > deadline) throw new Error(`the Redis Cluster is not healthy after ${timeoutMs} ms: ${states.map((s) => /cluster_state:\w+/.exec(s)?.[0]).join(', ')}`)
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
    },
    stop
  }
  return server
}

/** The cluster the test setup started for the whole run (test/setup/redis-cluster.ts), as it provides it to the files. */
export interface SharedRedisCluster {
  url: string
  ports: number[]
  masters: number
  /** The setup's endpoint that stops and restarts its nodes (test/helpers/cluster-control.ts); '' for a cluster given by REDIS_CLUSTER_TEST_URL. */
  control: string
}

/**
 * The run's shared cluster as a test file uses it: stopping or restarting a node is asked of the setup, which owns
 * the processes; `stop` leaves the cluster to the setup. A file that stops a node starts it again and waits until
 * every node is back before it ends, so that the files after it find the cluster whole.
 */
export function useSharedRedisCluster(shared: SharedRedisCluster): RedisClusterServer {
  const nodes = shared.ports.map((port): ClusterNode => {
    let stopped = false
    return {
      port,
      pid: 0,
      get stopped() { return stopped },
      async stop(signal = 'SIGTERM') {
        await controlNode(shared.control, String(port), 'stop', signal)
        stopped = true
      },
      async restart() {
        await controlNode(shared.control, String(port), 'restart')
        stopped = false
      }
    }
  })
  return clusterOver(shared.url, nodes, shared.masters, async () => undefined)
}

/** Whether `port`'s node is a replica whose link to its master is up (it has caught up with the master's data once). */
export async function replicaInSync(port: number): Promise<boolean> {
  const info = await onNode(port, (c) => c.info('replication')).catch(() => '')
  return info.includes('role:slave') && info.includes('master_link_status:up')
}

/** The line a Redis Cluster suite prints when the run has no cluster. */
export const REDIS_CLUSTER_SKIP = 'SKIPPED: the run has no Redis Cluster (test/setup/redis-cluster.ts said why at start-up)'

/**
 * One cluster-enabled `redis-server` that belongs to no cluster yet (no persistence, its own folder), as an operator
 * starts one before `redis-cli --cluster add-node`: a test adds it with the command a message names.
 */
export async function startLoneClusterNode(options: { nodeTimeoutMs?: number } = {}): Promise<{ port: number; stop(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'recall-redis-node-'))
  const port = await freeClusterPort(new Set())
  const child = spawn('redis-server', [
    '--port', String(port), '--bind', '127.0.0.1', '--daemonize', 'no', '--save', '', '--appendonly', 'no',
    '--cluster-enabled', 'yes', '--cluster-config-file', join(dir, 'nodes.conf'), '--cluster-node-timeout', String(options.nodeTimeoutMs ?? 2_000),
    '--dir', dir, '--cluster-require-full-coverage', 'no'
  ], { stdio: ['ignore', 'ignore', 'pipe'] })
  child.on('error', () => undefined)
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = once(child, 'exit')
      child.kill('SIGKILL')
      await exited
    }
    await rm(dir, { recursive: true, force: true })
  }
  try {
    await ping(port, 15_000, child)
  } catch (error) {
    await stop()
    throw error
  }
  return { port, stop }
}

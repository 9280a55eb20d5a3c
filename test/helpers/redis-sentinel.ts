import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from '../../scripts/lib/free-port.js'
import { onNode } from './redis-cluster.js'

/** One process of the set: a data node (`redis-server`) or a Sentinel (`redis-server --sentinel`). */
interface SentinelSetNode {
  readonly port: number
  readonly stopped: boolean
  stop(signal?: 'SIGTERM' | 'SIGKILL'): Promise<void>
  /** Starts it again on its port and config (a data node without its data: there is no persistence). */
  restart(): Promise<void>
}

export interface SentinelSet {
  /** `redis+sentinel://127.0.0.1:<port>,.../<name>`, as `REDIS_URL` takes it. */
  readonly url: string
  readonly name: string
  /** The data nodes: the first started as master, the others as its replicas. */
  readonly servers: readonly SentinelSetNode[]
  readonly sentinels: readonly SentinelSetNode[]
  /** The port of the master the Sentinels name now (`SENTINEL GET-MASTER-ADDR-BY-NAME` of a live Sentinel). */
  masterPort(): Promise<number>
  stop(): Promise<void>
}

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`${what} not within ${timeoutMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/**
 * Starts a real Sentinel set of Debian's `redis-server` on 127.0.0.1, without persistence: one master, `replicas`
 * replicas of it, and `sentinels` Sentinels monitoring it as `name` with a quorum of a majority of them. A master
 * that does not answer for `downAfterMs` is failed over to a replica.
 */
export async function startSentinelSet(options: { replicas?: number; sentinels?: number; downAfterMs?: number; name?: string } = {}): Promise<SentinelSet> {
  const name = options.name ?? 'recall'
  const dir = await mkdtemp(join(tmpdir(), 'recall-sentinel-'))
  const nodes: SentinelSetNode[] = []
  const node = async (args: (port: number) => Promise<string[]>): Promise<SentinelSetNode> => {
    const port = await freePort()
    const argv = await args(port)
    let child: ChildProcess
    const start = async () => {
      child = spawn('redis-server', argv, { stdio: 'ignore' })
      child.on('error', () => undefined)
      await waitFor(`redis-server on ${port} answering PING`, async () => {
        if (child.exitCode !== null) throw new Error(`redis-server on ${port} exited with ${child.exitCode}`)
        return await onNode(port, (c) => c.ping()) === 'PONG'
      }, 15_000)
    }
    await start()
    const made: SentinelSetNode = {
      port,
      get stopped() { return child.exitCode !== null || child.signalCode !== null },
      async stop(signal = 'SIGTERM') {
        if (made.stopped) return
        const exited = once(child, 'exit')
        child.kill(signal)
        await exited
      },
      async restart() {
        if (!made.stopped) return
        await start()
      }
    }
    nodes.push(made)
    return made
  }
  const common = (port: number) => ['--port', String(port), '--bind', '127.0.0.1', '--daemonize', 'no', '--save', '', '--appendonly', 'no', '--dir', dir]
  try {
    const master = await node(async (port) => common(port))
    const servers = [master]
    for (let i = 0; i < (options.replicas ?? 1); i++) {
      servers.push(await node(async (port) => [...common(port), '--replicaof', '127.0.0.1', String(master.port)]))
    }
    const count = options.sentinels ?? 3
    const sentinels: SentinelSetNode[] = []
    for (let i = 0; i < count; i++) {
      sentinels.push(await node(async (port) => {
        // a Sentinel rewrites its config file as it learns the set: one writable file each
        const file = join(dir, `sentinel-${port}.conf`)
        await writeFile(file, [
          `port ${port}`, 'bind 127.0.0.1', `dir ${dir}`,
          `sentinel monitor ${name} 127.0.0.1 ${master.port} ${Math.floor(count / 2) + 1}`,
          `sentinel down-after-milliseconds ${name} ${options.downAfterMs ?? 1_000}`,
          `sentinel failover-timeout ${name} 10000`,
          `sentinel parallel-syncs ${name} 1`
        ].join('\n') + '\n')
        return [file, '--sentinel']
      }))
    }
    const set: SentinelSet = {
      url: `redis+sentinel://${sentinels.map((s) => `127.0.0.1:${s.port}`).join(',')}/${name}`,
      name, servers, sentinels,
      async masterPort() {
        for (const sentinel of sentinels.filter((s) => !s.stopped)) {
          const address = await onNode(sentinel.port, (c) => c.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', name) as Promise<[string, string] | null>).catch(() => null)
          if (address) return Number(address[1])
        }
        throw new Error(`no Sentinel names a master for ${name}`)
      },
      async stop() {
        for (const n of nodes) await n.stop('SIGKILL')
        await rm(dir, { recursive: true, force: true })
      }
    }
    // ready once the replicas are in sync and every Sentinel knows the others and the replicas
    await waitFor('the replicas in sync with the master', async () => {
      for (const replica of servers.slice(1)) {
        if (!(await onNode(replica.port, (c) => c.info('replication'))).includes('master_link_status:up')) return false
      }
      return true
    }, 30_000)
    await waitFor('every Sentinel seeing the other Sentinels and the replicas', async () => {
      for (const sentinel of sentinels) {
        const state = await onNode(sentinel.port, (c) => c.call('SENTINEL', 'MASTER', name) as Promise<string[]>)
        const field = (key: string) => Number(state[state.indexOf(key) + 1])
        if (field('num-other-sentinels') < count - 1 || field('num-slaves') < servers.length - 1) return false
      }
      return true
    }, 30_000)
    return set
  } catch (error) {
    for (const n of nodes) await n.stop('SIGKILL')
    await rm(dir, { recursive: true, force: true })
    throw error
  }
}

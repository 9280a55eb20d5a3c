import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { QDRANT_SERVER_DIR } from '../../bench/lib/reference-data.js'
import { freePort } from '../../scripts/lib/free-port.js'
import { controlNode } from './cluster-control.js'
import { canStartQdrant } from './qdrant-server.js'

export { canStartQdrant as canStartQdrantCluster }

/** The one line a cluster suite prints when it cannot run (a running server given by QDRANT_URL is one node, not a cluster). */
export const QDRANT_CLUSTER_SKIP_LINE =
  `SKIPPED: needs the Qdrant binary to start a 3-node cluster: set RECALL_SHARED_DIR to a folder holding qdrant/qdrant-run (absent at ${join(QDRANT_SERVER_DIR, 'qdrant-run')})`

/** One node of a cluster: its ports, its storage, and whether it runs. */
interface QdrantNode {
  readonly url: string
  readonly httpPort: number
  readonly grpcPort: number
  readonly p2pPort: number
  readonly dir: string
  readonly running: boolean
  /** The process id while it runs (0 when stopped, or for a node of another process). */
  readonly pid: number
  /** Stops the node (SIGTERM, or SIGKILL for a crash) and waits for it to exit; its storage stays. */
  stop(signal?: 'SIGTERM' | 'SIGKILL'): Promise<void>
  /** Starts the node again on its ports and storage (it rejoins with the peers its storage knows) and waits until it is ready. */
  restart(): Promise<void>
}

export interface QdrantCluster {
  readonly nodes: readonly QdrantNode[]
  /** The first node's URL: any node answers for the whole cluster. */
  readonly url: string
  /** Stops every node and removes the storage. */
  close(): Promise<void>
}

async function waitFor(what: string, check: () => Promise<boolean>, child: () => ChildProcess | undefined, stderr: () => string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    const c = child()
    if (c && c.exitCode !== null) throw new Error(`qdrant exited with code ${c.exitCode} before ${what}: ${stderr().slice(-2000)}`)
    if (await check().catch(() => false)) return
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`${what} not within ${timeoutMs} ms: ${stderr().slice(-2000)}`)
}

/**
 * Starts a Qdrant cluster of `size` nodes of QDRANT_SERVER_DIR's binary on 127.0.0.1, each with its own storage
 * folder and HTTP, gRPC and peer-to-peer ports: the first with `--uri` (it starts the Raft log), the others with
 * `--bootstrap` pointing at it. Resolves once every node answers `/readyz` and the first node's `/cluster` lists
 * them all as peers.
 */
export async function startQdrantCluster(size = 3): Promise<QdrantCluster> {
  if (!canStartQdrant()) throw new Error(`no Qdrant to start: ${QDRANT_SERVER_DIR}/qdrant-run is absent`)
  const bin = execFileSync(join(QDRANT_SERVER_DIR, 'qdrant-bin'), { encoding: 'utf8' }).trim()
  const root = mkdtempSync(join(tmpdir(), 'recall-qdrant-cluster-'))
  const nodes: ClusterNode[] = []
  try {
    for (let i = 0; i < size; i++) {
      const node = new ClusterNode(bin, join(root, `node${i}`), await freePort(), await freePort(), await freePort(),
        i === 0 ? undefined : `http://127.0.0.1:${nodes[0]!.p2pPort}`)
      nodes.push(node)
      await node.restart()
    }
    const first = nodes[0]!
    await waitFor(`${size} peers in the cluster`, async () => {
      const res = await fetch(`${first.url}/cluster`, { signal: AbortSignal.timeout(1000) })
      const body = await res.json() as { result?: { peers?: Record<string, unknown>; raft_info?: { leader?: unknown } } }
      return Object.keys(body.result?.peers ?? {}).length === size && body.result?.raft_info?.leader != null
    }, () => undefined, () => '', 60_000)
  } catch (error) {
    for (const n of nodes) await n.stop('SIGKILL')
    rmSync(root, { recursive: true, force: true })
    throw error
  }
  return {
    nodes, url: nodes[0]!.url,
    async close() {
      for (const n of nodes) await n.stop('SIGTERM')
      rmSync(root, { recursive: true, force: true })
    }
  }
}

class ClusterNode implements QdrantNode {
  private child: ChildProcess | undefined
  private stderr = ''
  private started = false
  constructor(private readonly bin: string, readonly dir: string, readonly httpPort: number, readonly grpcPort: number, readonly p2pPort: number,
    private readonly bootstrap: string | undefined) {}

  get url(): string { return `http://127.0.0.1:${this.httpPort}` }
  get running(): boolean { return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null }
  get pid(): number { return this.running ? this.child?.pid ?? 0 : 0 }

  async restart(): Promise<void> {
    if (this.running) return
    mkdirSync(join(this.dir, 'storage'), { recursive: true })
    mkdirSync(join(this.dir, 'snapshots'), { recursive: true })
    // the same settings as qdrant-run, plus the cluster's; a node that has joined once finds its peers in its storage
    const args = ['--uri', `http://127.0.0.1:${this.p2pPort}`, ...(this.bootstrap && !this.started ? ['--bootstrap', this.bootstrap] : [])]
    const child = spawn(this.bin, args, {
      cwd: this.dir, stdio: ['ignore', 'ignore', 'pipe'],
      env: {
        ...process.env,
        QDRANT__SERVICE__HOST: '127.0.0.1', QDRANT__SERVICE__HTTP_PORT: String(this.httpPort), QDRANT__SERVICE__GRPC_PORT: String(this.grpcPort),
        QDRANT__STORAGE__STORAGE_PATH: join(this.dir, 'storage'), QDRANT__STORAGE__SNAPSHOTS_PATH: join(this.dir, 'snapshots'),
        QDRANT__TELEMETRY_DISABLED: 'true', QDRANT__SERVICE__ENABLE_STATIC_CONTENT: 'false',
        QDRANT__CLUSTER__ENABLED: 'true', QDRANT__CLUSTER__P2P__PORT: String(this.p2pPort)
      }
    })
    this.child = child
    this.started = true
    child.stderr!.on('data', (d: Buffer) => { this.stderr = (this.stderr + d.toString()).slice(-8000) })
    await waitFor(`qdrant at ${this.url} ready`, async () => (await fetch(`${this.url}/readyz`, { signal: AbortSignal.timeout(500) })).status === 200,
      () => child, () => this.stderr, 60_000)
  }

  async stop(signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM'): Promise<void> {
    const child = this.child
    if (!child || !this.running) return
    const exited = once(child, 'exit')
    child.kill(signal)
    await exited
  }
}

/** The cluster the test setup started for the whole run (test/setup/qdrant-cluster.ts), as it provides it to the files. */
export interface SharedQdrantCluster {
  nodes: Array<Pick<QdrantNode, 'url' | 'httpPort' | 'grpcPort' | 'p2pPort' | 'dir'>>
  /** The setup's endpoint that stops and restarts its nodes (test/helpers/cluster-control.ts). */
  control: string
}

/**
 * The run's shared cluster as a test file uses it: stopping a node or restarting it is asked of the setup, which
 * owns the processes; `close` leaves the cluster to the setup. A file that stops a node starts it again before it
 * ends, and waits for its replicas to be active, so that the files after it find the cluster whole.
 */
export function useSharedQdrantCluster(shared: SharedQdrantCluster): QdrantCluster {
  const nodes = shared.nodes.map((node, i): QdrantNode => {
    let running = true
    return {
      ...node,
      get running() { return running },
      pid: 0,
      async stop(signal = 'SIGTERM') {
        await controlNode(shared.control, String(i), 'stop', signal)
        running = false
      },
      async restart() {
        await controlNode(shared.control, String(i), 'restart')
        running = true
      }
    }
  })
  return { nodes, url: nodes[0]!.url, close: async () => undefined }
}

import { createServer, type Server } from 'node:http'
import { readFileSync } from 'node:fs'

/**
 * The clusters of the test setup run in vitest's main process, and the test files in workers: a file that kills a
 * node (and starts it again) asks the process that owns it, over a small HTTP endpoint on 127.0.0.1 that the setup
 * serves and provides by URL. `POST /<node>/stop?signal=SIGKILL|SIGTERM`, `POST /<node>/restart`; 204 once done.
 */
export interface NodeControl {
  stop(node: string, signal: 'SIGTERM' | 'SIGKILL'): Promise<void>
  restart(node: string): Promise<void>
}

/** Serves `control` for the nodes it knows; resolves to the endpoint's URL and a way to close it. */
export async function serveNodeControl(control: NodeControl): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://control')
    const [, node, action] = url.pathname.split('/')
    const signal = url.searchParams.get('signal') === 'SIGKILL' ? 'SIGKILL' : 'SIGTERM'
    const run = req.method !== 'POST' || !node ? undefined
      : action === 'stop' ? () => control.stop(node, signal)
      : action === 'restart' ? () => control.restart(node)
      : undefined
    if (!run) {
      res.writeHead(404).end()
      return
    }
    run().then(() => res.writeHead(204).end(), (error: Error) => res.writeHead(500).end(error.message))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('the node control endpoint has no port')
  return {
    url: `http://127.0.0.1:${address.port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

/** Asks the setup's endpoint at `base` to stop or restart `node`; throws with its answer when it could not. */
export async function controlNode(base: string, node: string, action: 'stop' | 'restart', signal?: 'SIGTERM' | 'SIGKILL'): Promise<void> {
  const res = await fetch(`${base}/${node}/${action}${signal ? `?signal=${signal}` : ''}`, { method: 'POST', signal: AbortSignal.timeout(120_000) })
  if (res.status !== 204) throw new Error(`${action} ${node}: ${res.status} ${await res.text()}`)
}

/** Resident memory of the processes `pids` in MB, from /proc (0 for one that is gone). */
export function residentMb(pids: readonly number[]): number {
  let kb = 0
  for (const pid of pids) {
    try {
      kb += Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0)
    } catch {
      // gone
    }
  }
  return Math.round(kb / 1024)
}

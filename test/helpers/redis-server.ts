import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { connect } from 'node:net'
import { freePort } from '../../scripts/lib/free-port.js'

export { freePort }

export interface RedisServer {
  readonly port: number
  readonly url: string
  readonly pid: number
  /** Stops the server (SIGTERM, or SIGKILL for an abrupt crash) and waits for the process to exit. */
  stop(signal?: 'SIGTERM' | 'SIGKILL'): Promise<void>
}

/** Resolves once `PING` over a raw socket gets `+PONG`, or rejects after `timeoutMs`. */
async function waitForPong(port: number, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`redis-server exited with code ${child.exitCode}`)
    const answered = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1')
      socket.setTimeout(200)
      socket.once('connect', () => socket.write('PING\r\n'))
      socket.once('data', (data) => {
        socket.destroy()
        resolve(data.toString().startsWith('+PONG'))
      })
      socket.once('error', () => resolve(false))
      socket.once('timeout', () => {
        socket.destroy()
        resolve(false)
      })
    })
    if (answered) return
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  throw new Error(`redis-server on port ${port} did not answer PING within ${timeoutMs} ms`)
}

/**
 * Starts a real `redis-server` (Debian package `redis-server`) with no persistence on 127.0.0.1,
 * on `port` if given (to restart one that was stopped) or on a free one.
 */
export async function startRedis(port?: number): Promise<RedisServer> {
  const chosen = port ?? (await freePort())
  const child = spawn(
    'redis-server',
    ['--save', '', '--appendonly', 'no', '--port', String(chosen), '--bind', '127.0.0.1', '--daemonize', 'no'],
    { stdio: ['ignore', 'ignore', 'pipe'] }
  )
  const spawnError = new Promise<never>((_, reject) => {
    child.once('error', (err: NodeJS.ErrnoException) => {
      reject(
        err.code === 'ENOENT'
          ? new Error('redis-server not found: install it with `apt-get update && apt-get install -y redis-server`')
          : err
      )
    })
  })
  await Promise.race([waitForPong(chosen, child, 10_000), spawnError])
  const pid = child.pid
  if (pid === undefined) throw new Error('redis-server has no pid')
  return {
    port: chosen,
    url: `redis://127.0.0.1:${chosen}`,
    pid,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return
      const exited = once(child, 'exit')
      child.kill(signal)
      await exited
    }
  }
}

import { spawn, type ChildProcess } from 'node:child_process'
import { freePort } from '../../scripts/lib/free-port.js'

export interface ServerProcess {
  url: string
  child: ChildProcess
  /** Everything the process printed, for failure messages. */
  output(): string
  kill(signal?: NodeJS.Signals): Promise<void>
}

/**
 * Runs the real service in a child process (from source by default, or `args` such as a built
 * `dist/src/server.js`) and waits until it answers /healthz.
 */
export async function startServer(env: Record<string, string>, timeoutMs = 120_000, args = ['--import', 'tsx', 'src/server.ts']): Promise<ServerProcess> {
  const port = await freePort()
  const child = spawn(process.execPath, args, {
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let out = ''
  child.stdout!.on('data', (d) => { out += String(d) })
  child.stderr!.on('data', (d) => { out += String(d) })
  const url = `http://127.0.0.1:${port}`
  const deadline = Date.now() + timeoutMs
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}: ${out}`)
    try {
      if ((await fetch(`${url}/healthz`)).ok) break
    } catch { /* not listening yet */ }
    if (Date.now() > deadline) {
      child.kill('SIGKILL')
      throw new Error(`server did not start in ${timeoutMs} ms: ${out}`)
    }
    await new Promise((r) => setTimeout(r, 200))
  }
  return {
    url, child,
    output: () => out,
    kill: (signal = 'SIGTERM') => new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve()
      child.once('exit', () => resolve())
      child.kill(signal)
    })
  }
}

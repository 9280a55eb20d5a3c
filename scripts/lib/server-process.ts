import { spawn, type ChildProcess } from 'node:child_process'
import { freePort } from './free-port.js'

export interface ServerProcess {
  url: string
  child: ChildProcess
  /** Everything the process printed, for failure messages. */
  output(): string
  /** What it printed on stderr alone. */
  stderr(): string
  kill(signal?: NodeJS.Signals): Promise<void>
}

export interface StartOptions {
  /** What to wait for: `healthz` (listening) or `readyz` (started, every backend up). Default `readyz`. */
  until?: 'healthz' | 'readyz'
  timeoutMs?: number
  /** Node arguments: default the sources under tsx; e.g. `['dist/src/http/server.js']` for a built service. */
  args?: string[]
  /** Where the process runs (the tree whose sources `args` name); default this process's. */
  cwd?: string
}

/** Runs the real service in a child process and waits until it answers /healthz, or /readyz with 200. */
export async function startServer(env: Record<string, string>, options: StartOptions = {}): Promise<ServerProcess> {
  const timeoutMs = options.timeoutMs ?? 120_000
  const probe = options.until === 'healthz' ? '/healthz' : '/readyz'
  const args = options.args ?? ['--import', 'tsx', 'src/http/server.ts']
  const port = await freePort()
  const child = spawn(process.execPath, args, {
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(options.cwd ? { cwd: options.cwd } : {})
  })
  let out = ''
  let err = ''
  child.stdout!.on('data', (d) => { out += String(d) })
  child.stderr!.on('data', (d) => { out += String(d); err += String(d) })
  const url = `http://127.0.0.1:${port}`
  const deadline = Date.now() + timeoutMs
  /** The probe's last answer that was not a 200 (a start-up step that failed says so there). */
  let lastAnswer = ''
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`server exited with ${child.exitCode ?? child.signalCode}: ${out}`)
    try {
      const answer = await fetch(`${url}${probe}`)
      if (answer.ok) break
      lastAnswer = `${probe} ${answer.status}: ${(await answer.text()).slice(0, 4000)}`
    } catch { /* not listening yet */ }
    if (Date.now() > deadline) {
      child.kill('SIGKILL')
      throw new Error(`server did not start in ${timeoutMs} ms${lastAnswer ? ` (${lastAnswer})` : ' (not listening)'}: ${out}`)
    }
    await new Promise((r) => setTimeout(r, 200))
  }
  return {
    url, child,
    output: () => out,
    stderr: () => err,
    kill: (signal = 'SIGTERM') => new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve()
      child.once('exit', () => resolve())
      child.kill(signal)
    })
  }
}

// Processes of a load run: the service under test, CPU pinning and per-process CPU time (Linux).
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from '../lib/free-port.js'

/** Whether `taskset` can give the client and the server a core each. */
export function canPin(): boolean {
  if (availableParallelism() < 2) return false
  try {
    execFileSync('taskset', ['-p', String(process.pid)], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

/** Restricts every thread of `pid` to the given CPU. */
export function pin(pid: number, cpu: number): void {
  execFileSync('taskset', ['-a', '-p', '-c', String(cpu), String(pid)], { stdio: 'ignore' })
}

/** Lets every thread of `pid` run on any CPU again. */
export function unpin(pid: number): void {
  execFileSync('taskset', ['-a', '-p', '-c', `0-${availableParallelism() - 1}`, String(pid)], { stdio: 'ignore' })
}

/** User plus system CPU time of a process in milliseconds, or undefined off Linux. */
export function cpuMs(pid: number | undefined): number | undefined {
  if (pid === undefined || !existsSync(`/proc/${pid}/stat`)) return undefined
  // Fields 14 and 15 (utime, stime), counted after the parenthesised command name, in clock ticks of
  // USER_HZ, which is 100 on Linux whatever the kernel's own tick rate.
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? []
  const ticks = Number(fields[11]) + Number(fields[12])
  return (ticks * 1000) / 100
}

export interface Service {
  url: string
  pid: number
  logFile: string
  stop(): Promise<void>
}

/**
 * Starts recall on the embedded default in a fresh data directory, with the demo world and no rate
 * limit (the load comes from one IP), from `dist/` when it is built, else from source through tsx.
 */
export async function startService(extraEnv: Record<string, string> = {}): Promise<Service> {
  const dataDir = mkdtempSync(join(tmpdir(), 'recall-load-'))
  const logFile = join(dataDir, 'service.log')
  const port = await freePort()
  const args = existsSync('dist/src/http/server.js') ? ['dist/src/http/server.js'] : ['--import', 'tsx', 'src/http/server.ts']
  const log = openSync(logFile, 'a')
  const child: ChildProcess = spawn(process.execPath, args, {
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, DEMO_DATA: 'true', RATE_LIMIT_MAX: '0', ...extraEnv },
    stdio: ['ignore', log, log]
  })
  const url = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 300_000
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the service exited with ${child.exitCode}; see ${logFile}`)
    try {
      if ((await fetch(`${url}/readyz`)).ok) break
    } catch { /* not listening yet */ }
    if (Date.now() > deadline) {
      child.kill('SIGKILL')
      throw new Error(`the service was not ready within 300 s; see ${logFile}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
  return {
    url,
    pid: child.pid as number,
    logFile,
    stop: () => new Promise((resolve) => {
      const done = () => {
        rmSync(dataDir, { recursive: true, force: true })
        resolve()
      }
      if (child.exitCode !== null || child.signalCode !== null) return done()
      child.once('exit', done)
      child.kill('SIGTERM')
    })
  }
}

import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
// the reference-data module itself, not its test helper: the global setup and the benches load this file outside a test
import { QDRANT_SERVER_DIR } from '../../bench/lib/reference-data.js'
import { freePort } from '../../scripts/lib/free-port.js'

const RUN_SCRIPT = join(QDRANT_SERVER_DIR, 'qdrant-run')

/** The one line a Qdrant-gated suite prints when it cannot run. */
export const QDRANT_SKIP_LINE =
  `SKIPPED: needs a real Qdrant: set QDRANT_URL to a running server, or RECALL_SHARED_DIR to a folder holding qdrant/qdrant-run (absent at ${RUN_SCRIPT}; it starts one server per test run)`

export interface QdrantServer {
  readonly port: number
  readonly url: string
  readonly dir: string
  /** Stops the server (SIGTERM, or SIGKILL for a crash) and waits for it to exit; the storage stays unless `removeStorage`. */
  stop(signal?: 'SIGTERM' | 'SIGKILL', removeStorage?: boolean): Promise<void>
}

/** Whether `qdrant-run` is there (in QDRANT_SERVER_DIR) to start a real server. */
export function canStartQdrant(): boolean {
  return existsSync(RUN_SCRIPT)
}

async function waitReady(url: string, child: ChildProcess, stderr: () => string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`qdrant exited with code ${child.exitCode}: ${stderr().slice(-2000)}`)
    try {
      const res = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(500) })
      if (res.status === 200) return
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error(`qdrant at ${url} was not ready within ${timeoutMs} ms: ${stderr().slice(-2000)}`)
}

/**
 * Starts the Qdrant server of QDRANT_SERVER_DIR on 127.0.0.1: on `port` if given (to restart one that was
 * stopped) or on a free one, with its storage in `dir` (default a fresh temporary folder).
 */
export async function startQdrant(options: { port?: number; dir?: string } = {}): Promise<QdrantServer> {
  if (!canStartQdrant()) throw new Error(`no Qdrant to start: ${RUN_SCRIPT} is absent`)
  const port = options.port ?? (await freePort())
  const grpcPort = await freePort()
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'recall-qdrant-'))
  const child = spawn(RUN_SCRIPT, [String(port), dir, String(grpcPort)], { stdio: ['ignore', 'ignore', 'pipe'] })
  let err = ''
  child.stderr!.on('data', (d: Buffer) => { err = (err + d.toString()).slice(-8000) })
  const url = `http://127.0.0.1:${port}`
  await waitReady(url, child, () => err, 60_000)
  return {
    port, url, dir,
    async stop(signal = 'SIGTERM', removeStorage = false) {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = once(child, 'exit')
        child.kill(signal)
        await exited
      }
      if (removeStorage) rmSync(dir, { recursive: true, force: true })
    }
  }
}

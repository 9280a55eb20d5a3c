import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { Worker } from 'node:worker_threads'
import { BackendUnavailableError, backendName } from '../errors.js'
import type { WorkerRequest, WorkerResponse } from './worker-protocol.js'

const BACKEND = backendName('lexical-index', 'bm25')

type Op = WorkerRequest['op']
type ArgsOf<O extends Op> = Extract<WorkerRequest, { op: O }>['args']

/**
 * The one worker thread of the process, shared by every lexical index. Started on first use; it does not
 * keep the process alive while idle, and ends when the last index using it closes. If it dies, pending
 * requests fail and the next request starts a new one.
 */
class SharedWorker {
  private worker: Worker | undefined
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>()
  private nextId = 1
  private users = 0

  acquire(): void {
    this.users += 1
  }

  async release(): Promise<void> {
    this.users = Math.max(0, this.users - 1)
    if (this.users === 0 && this.worker) {
      const w = this.worker
      this.worker = undefined
      await w.terminate()
    }
  }

  call<T, O extends Op = Op>(op: O, args: ArgsOf<O>): Promise<T> {
    const worker = this.started()
    const id = this.nextId++
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject })
      if (this.pending.size === 1) worker.ref()
      try {
        worker.postMessage({ id, op, args })
      } catch (error) {
        this.pending.delete(id)
        if (this.pending.size === 0) worker.unref()
        reject(error as Error)
      }
    })
  }

  private started(): Worker {
    if (this.worker) return this.worker
    // From TypeScript sources (tsx, vitest) the worker first registers tsx's loader; from dist/ it is JavaScript.
    const fromSource = import.meta.url.endsWith('.ts')
    const entry = new URL(fromSource ? './worker.ts' : './worker.js', import.meta.url)
    const worker = fromSource
      ? new Worker(
          `import(${JSON.stringify(tsxApi())})` +
            `.then((tsx) => tsx.register()).then(() => import(${JSON.stringify(entry.href)}))`,
          { eval: true }
        )
      : new Worker(entry)
    worker.unref()
    worker.on('message', (m: WorkerResponse) => {
      const p = this.pending.get(m.id)
      if (!p) return
      this.pending.delete(m.id)
      if (this.pending.size === 0) worker.unref()
      if (m.ok) p.resolve(m.result)
      else p.reject(new BackendUnavailableError(BACKEND, m.error))
    })
    const fail = (why: string) => {
      if (this.worker === worker) this.worker = undefined
      for (const p of this.pending.values()) p.reject(new BackendUnavailableError(BACKEND, why))
      this.pending.clear()
    }
    worker.on('error', (e) => fail(`lexical worker failed: ${e.message}`))
    worker.on('exit', (code) => fail(`lexical worker exited with code ${code}`))
    this.worker = worker
    return worker
  }
}

/** tsx's ESM API module (its `exports` map sends require.resolve to the CommonJS build instead). */
function tsxApi(): string {
  const pkg = createRequire(import.meta.url).resolve('tsx/package.json')
  return pathToFileURL(join(dirname(pkg), 'dist/esm/api/index.mjs')).href
}

export const lexicalWorker = new SharedWorker()

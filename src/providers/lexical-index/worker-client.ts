import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { Worker } from 'node:worker_threads'
import { BackendUnavailableError, backendName } from '../errors.js'
import type { WorkerRequest, WorkerResponse } from './worker-protocol.js'

const BACKEND = backendName('lexical-index', 'bm25')

type Op = WorkerRequest['op']
type ArgsOf<O extends Op> = Extract<WorkerRequest, { op: O }>['args']

/** One worker thread: started on first use, it does not keep the process alive while idle. */
class WorkerThread {
  private worker: Worker | undefined
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>()
  private nextId = 1

  async terminate(): Promise<void> {
    const w = this.worker
    this.worker = undefined
    if (w) await w.terminate()
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

/** A write building at least this many documents goes to the bulk thread (a whole sync's batches, bulk loads). */
const BULK_BUILD_DOCUMENTS = 1_000

/**
 * The lexical indexes' worker threads, shared by every index of the process: one for small writes and the reads
 * of a merge's commit, one for what takes long (merges, and writes that build a large segment). A segment build
 * runs without a pause, so with one thread a write of a few documents to one namespace waited for a whole
 * batch of another namespace's build (seconds at 100k chunks on a busy machine). Each index orders its own
 * calls, so two threads never work on one index's files at once in a way one thread would not (a merge already
 * ran beside writes). Both end when the last index using them closes; if one dies, its pending requests fail
 * and the next request starts a new one.
 */
class LexicalWorkers {
  private readonly small = new WorkerThread()
  private readonly bulk = new WorkerThread()
  private users = 0

  acquire(): void {
    this.users += 1
  }

  async release(): Promise<void> {
    this.users = Math.max(0, this.users - 1)
    if (this.users === 0) await Promise.all([this.small.terminate(), this.bulk.terminate()])
  }

  call<T, O extends Op = Op>(op: O, args: ArgsOf<O>): Promise<T> {
    return this.laneOf(op, args).call<T, O>(op, args)
  }

  private laneOf<O extends Op>(op: O, args: ArgsOf<O>): WorkerThread {
    if (op === 'merge') return this.bulk
    const build = op === 'write' ? (args as ArgsOf<'write'>).build : undefined
    return build && build.docs.length >= BULK_BUILD_DOCUMENTS ? this.bulk : this.small
  }
}

export const lexicalWorker = new LexicalWorkers()

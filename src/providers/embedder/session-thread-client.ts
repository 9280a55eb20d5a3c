import { Worker } from 'node:worker_threads'
import { OnnxSessionError, type OnnxSession, type OnnxSessionOptions } from './onnx-session.js'
import { sessionEntry, sessionExecArgv, type PendingRun } from './session-entry.js'
import type { SessionReply, SessionRequest } from './session-protocol.js'

const ENTRY = sessionEntry('session-thread')

/**
 * One ONNX session in a worker thread of this process (./session-thread.ts), run one text batch at a time. The
 * threads share this process's runtime library and code; each holds its own session. A thread that dies is replaced on
 * the next run; the run it held fails.
 */
export class SessionThread implements OnnxSession {
  readonly #options: OnnxSessionOptions
  #worker: Worker | undefined
  #starting: Promise<Worker> | undefined
  readonly #pending = new Map<number, PendingRun>()
  #nextId = 1
  #closed = false

  constructor(options: OnnxSessionOptions) {
    this.#options = options
  }

  /** Starts the thread and waits until its session has loaded. */
  async start(): Promise<void> {
    await this.#thread()
  }

  async run(texts: readonly string[]): Promise<Float32Array[]> {
    const worker = await this.#thread()
    const id = this.#nextId++
    return new Promise<Float32Array[]>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject })
      // The thread keeps the process alive only while a run is out (a CLI awaiting it must not exit).
      if (this.#pending.size === 1) worker.ref()
      worker.postMessage({ id, texts: [...texts] } satisfies SessionRequest)
    })
  }

  async dispose(): Promise<void> {
    this.#closed = true
    const worker = this.#worker ?? await this.#starting?.catch(() => undefined)
    this.#worker = undefined
    if (worker === undefined) return
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()))
    // The thread frees its session and ends; one stuck in a run is terminated after a grace period.
    worker.postMessage('close')
    const timer = setTimeout(() => void worker.terminate(), 5_000)
    await exited
    clearTimeout(timer)
  }

  #settle(id: number, settle: (pending: PendingRun) => void): void {
    const pending = this.#pending.get(id)
    if (pending === undefined) return
    this.#pending.delete(id)
    if (this.#pending.size === 0) this.#worker?.unref()
    settle(pending)
  }

  #thread(): Promise<Worker> {
    if (this.#closed) return Promise.reject(new OnnxSessionError('run', 'the session thread is closed'))
    if (this.#worker !== undefined) return Promise.resolve(this.#worker)
    if (this.#starting === undefined) {
      const starting = this.#spawn()
      this.#starting = starting
      starting.then(
        (worker) => {
          this.#worker = worker
          this.#starting = undefined
        },
        () => {
          this.#starting = undefined
        }
      )
    }
    return this.#starting
  }

  #spawn(): Promise<Worker> {
    const worker = new Worker(ENTRY, { workerData: this.#options, execArgv: sessionExecArgv() })
    return new Promise<Worker>((resolve, reject) => {
      let ready = false
      worker.on('message', (reply: SessionReply) => {
        switch (reply.kind) {
          case 'ready':
            ready = true
            worker.unref()
            resolve(worker)
            return
          case 'failed':
            reject(new OnnxSessionError(reply.error.kind, reply.error.message))
            return
          case 'done':
            this.#settle(reply.id, (p) => p.resolve(reply.vectors))
            return
          case 'error':
            this.#settle(reply.id, (p) => p.reject(new OnnxSessionError(reply.error.kind, reply.error.message)))
        }
      })
      worker.on('error', (error) => {
        if (!ready) reject(new OnnxSessionError('load', `the session thread failed while loading: ${error.message}`, { cause: error }))
      })
      worker.on('exit', (code) => {
        if (!ready) reject(new OnnxSessionError('load', `the session thread exited while loading (code ${code})`))
        if (this.#worker === worker) this.#worker = undefined
        for (const id of [...this.#pending.keys()]) this.#settle(id, (p) => p.reject(new OnnxSessionError('run', `the session thread exited during a run (code ${code})`)))
      })
    })
  }
}

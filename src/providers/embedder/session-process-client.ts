import { fork, type ChildProcess } from 'node:child_process'
import { OnnxSessionError, type OnnxSession, type OnnxSessionOptions } from './onnx-session.js'
import { sessionEntry, sessionExecArgv, type PendingRun } from './session-entry.js'
import type { SessionReply, SessionRequest } from './session-protocol.js'

const ENTRY = sessionEntry('session-process')

/**
 * One ONNX session in a process of its own (./session-process.ts), run one text batch at a time over IPC. A process
 * that dies is replaced on the next run; the run it held fails. `EMBEDDING_POOL=processes`: onnxruntime-node 1.21 could
 * not hold sessions in two worker threads, so this was the pool until 1.26 (bench/results/concurrency.log.md).
 */
export class SessionProcess implements OnnxSession {
  readonly #options: OnnxSessionOptions
  #child: ChildProcess | undefined
  #starting: Promise<ChildProcess> | undefined
  readonly #pending = new Map<number, PendingRun>()
  #nextId = 1
  #closed = false

  constructor(options: OnnxSessionOptions) {
    this.#options = options
  }

  /** The process id while it runs (benches read its CPU time). */
  get pid(): number | undefined {
    return this.#child?.pid
  }

  /** Starts the process and waits until its session has loaded. */
  async start(): Promise<void> {
    await this.#process()
  }

  async run(texts: readonly string[]): Promise<Float32Array[]> {
    const child = await this.#process()
    const id = this.#nextId++
    return new Promise<Float32Array[]>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject })
      // The channel keeps the parent alive only while a run is out (a CLI awaiting it must not exit).
      if (this.#pending.size === 1) child.channel?.ref()
      const request: SessionRequest = { id, texts: [...texts] }
      child.send(request, (error) => {
        if (error) this.#settle(id, (p) => p.reject(error))
      })
    })
  }

  async dispose(): Promise<void> {
    this.#closed = true
    const child = this.#child ?? await this.#starting?.catch(() => undefined)
    this.#child = undefined
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
    // The process exits when its channel closes; a process stuck in a run is killed after a grace period.
    if (child.connected) child.disconnect()
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000)
    await exited
    clearTimeout(timer)
  }

  #settle(id: number, settle: (pending: PendingRun) => void): void {
    const pending = this.#pending.get(id)
    if (pending === undefined) return
    this.#pending.delete(id)
    if (this.#pending.size === 0) this.#child?.channel?.unref()
    settle(pending)
  }

  #process(): Promise<ChildProcess> {
    if (this.#closed) return Promise.reject(new OnnxSessionError('run', 'the session process is closed'))
    if (this.#child !== undefined) return Promise.resolve(this.#child)
    if (this.#starting === undefined) {
      const starting = this.#spawn()
      this.#starting = starting
      starting.then(
        (child) => {
          this.#child = child
          this.#starting = undefined
        },
        () => {
          this.#starting = undefined
        }
      )
    }
    return this.#starting
  }

  #spawn(): Promise<ChildProcess> {
    const child = fork(ENTRY, [JSON.stringify(this.#options)], {
      execArgv: sessionExecArgv(),
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'inherit', 'ipc']
    })
    return new Promise<ChildProcess>((resolve, reject) => {
      let ready = false
      child.on('message', (reply: SessionReply) => {
        switch (reply.kind) {
          case 'ready':
            ready = true
            child.channel?.unref()
            resolve(child)
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
      child.on('error', (error) => {
        if (!ready) reject(new OnnxSessionError('load', `cannot start a session process: ${error.message}`, { cause: error }))
      })
      child.on('exit', (code, signal) => {
        if (!ready) reject(new OnnxSessionError('load', `the session process exited while loading (${signal ?? `code ${String(code)}`})`))
        if (this.#child === child) this.#child = undefined
        const how = signal ?? `code ${String(code)}`
        for (const id of [...this.#pending.keys()]) this.#settle(id, (p) => p.reject(new OnnxSessionError('run', `the session process exited during a run (${how})`)))
      })
    })
  }
}

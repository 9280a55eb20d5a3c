import { getHeapStatistics } from 'node:v8'
import { Worker } from 'node:worker_threads'
import { BackendTimeoutError, BackendUnavailableError, ProviderError, UnexpectedResponseError } from '../errors.js'
import { honourWorkerHeapLimits, threadExecArgv } from './fold-client.js'

const MiB = 2 ** 20

/** A call to the object a port thread serves (`serve-port.ts`): its method and arguments (structured-cloned). */
export interface PortCall {
  id: number
  method: string
  args: unknown[]
}

/** An error thrown in the thread, as its fields cross: rebuilt as the same class on this side (`rebuiltError`). */
export interface CrossedError {
  name: string
  message: string
  backend?: string
  /** The error's own fields that clone (an `UnknownEntitiesError`'s `missing` and `references`). */
  fields?: Record<string, unknown>
  cause?: CrossedError
}

export type PortAnswer = { id: number; ok: true; value: unknown } | { id: number; ok: false; error: CrossedError }

const providerErrors: Record<string, new (backend: string, message: string, options?: { cause?: unknown }) => ProviderError> = {
  BackendUnavailableError,
  BackendTimeoutError,
  UnexpectedResponseError
}

/** Rebuilds an error class of the served object's own from what crossed (`PortThread`'s `errors`, by name). */
export type ErrorRebuilders = Record<string, (crossed: CrossedError) => Error>

/** The error's fields that cross a thread (its class by name, a provider error's backend, its own fields, its cause). */
export function crossedError(error: unknown): CrossedError {
  if (!(error instanceof Error)) return { name: 'Error', message: String(error) }
  const crossed: CrossedError = { name: error.name, message: error.message }
  if (error instanceof ProviderError) crossed.backend = error.backend
  const fields = Object.fromEntries(Object.entries(error).filter(([key]) => key !== 'backend' && key !== 'name'))
  if (Object.keys(fields).length > 0) crossed.fields = fields
  if (error.cause !== undefined) crossed.cause = crossedError(error.cause)
  return crossed
}

/**
 * The error `crossedError` described, as the class it was thrown as (the routes answer by class): a provider error, one
 * of `errors`, a `RangeError` or `TypeError`, else an `Error` of that name.
 */
function rebuiltError(crossed: CrossedError, errors: ErrorRebuilders = {}): Error {
  const cause = crossed.cause === undefined ? {} : { cause: rebuiltError(crossed.cause, errors) }
  const provider = providerErrors[crossed.name]
  if (provider && crossed.backend !== undefined) return new provider(crossed.backend, crossed.message, cause)
  const own = errors[crossed.name]
  if (own) return own(crossed)
  const error = crossed.name === 'RangeError' ? new RangeError(crossed.message, cause)
    : crossed.name === 'TypeError' ? new TypeError(crossed.message, cause)
      : new Error(crossed.message, cause)
  if (error.name !== crossed.name) error.name = crossed.name
  return error
}

/**
 * An object that lives in a worker thread of its own (`entry`, a module calling `servePort`), called by method name:
 * its load and its work run on another core than the event loop's. Started on the first call; it keeps the process
 * alive only while a call is pending. Its old generation gets the main isolate's limit (what the object had when it
 * lived there); the memory budget's resident check counts it, as all of the process. A thread that stops before
 * `close` (out of its heap, a crash) fails every call after it with `BackendUnavailableError`.
 */
export class PortThread {
  private worker: Worker | undefined
  private stopped: Error | undefined
  /** Threads ended by `close`: their exit is not a stop. */
  private readonly closed = new WeakSet<Worker>()
  private readonly pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>()
  private nextId = 1

  constructor(
    private readonly entry: URL,
    private readonly workerData: unknown,
    private readonly backend: string,
    /** What the thread holds, for the error a stopped one gives ("the knowledge graph"). */
    private readonly holds: string,
    private readonly errors: ErrorRebuilders = {}
  ) {}

  /** Calls `method` with `args` in the thread; an `AbortSignal` among them is not passed (the object ignores it there). */
  call<T>(method: string, args: unknown[]): Promise<T> {
    if (this.stopped) return Promise.reject(this.stopped)
    const worker = this.started()
    const id = this.nextId++
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject })
      if (this.pending.size === 1) worker.ref()
      try {
        const call: PortCall = { id, method, args: args.map((arg) => (arg instanceof AbortSignal ? undefined : arg)) }
        worker.postMessage(call)
      } catch (error) {
        this.settle(id)
        reject(error as Error)
      }
    })
  }

  /** Calls the object's `close`, then ends the thread; nothing if it never started. */
  async close(): Promise<void> {
    if (!this.worker || this.stopped) return
    const worker = this.worker
    await this.call('close', [])
    this.closed.add(worker)
    this.worker = undefined
    await worker.terminate()
  }

  private started(): Worker {
    if (this.worker) return this.worker
    honourWorkerHeapLimits()
    const worker = new Worker(this.entry, {
      workerData: this.workerData,
      execArgv: threadExecArgv(),
      resourceLimits: { maxOldGenerationSizeMb: Math.floor(getHeapStatistics().heap_size_limit / MiB) }
    })
    worker.unref()
    worker.on('message', (answer: PortAnswer) => {
      const waiting = this.settle(answer.id)
      if (!waiting) return
      if (answer.ok) waiting.resolve(answer.value)
      else waiting.reject(rebuiltError(answer.error, this.errors))
    })
    const stop = (why: string) => {
      if (this.closed.has(worker)) return
      this.stopped = new BackendUnavailableError(this.backend, `the thread that holds ${this.holds} stopped (${why}); restart the service`)
      for (const waiting of this.pending.values()) waiting.reject(this.stopped)
      this.pending.clear()
    }
    worker.on('error', (error: Error) => stop(error.message))
    worker.on('exit', (code) => stop(`exit code ${code}`))
    this.worker = worker
    return worker
  }

  private settle(id: number): { resolve: (value: unknown) => void; reject: (error: Error) => void } | undefined {
    const waiting = this.pending.get(id)
    this.pending.delete(id)
    if (this.pending.size === 0) this.worker?.unref()
    return waiting
  }
}

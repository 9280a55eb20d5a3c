/**
 * Evaluations that run as jobs, in the process that started them: at most `maxRunning` at once, each
 * bounded in time (its signal aborts at the deadline) and cancellable; a finished job is kept `keepMs`.
 */
import { randomUUID } from 'node:crypto'

export type JobStatus = 'running' | 'done' | 'failed' | 'cancelled'

export interface Job<T> {
  id: string
  status: JobStatus
  progress: { done: number; total: number }
  created_at: string
  error?: string
  result?: T
}

interface Entry<T> { job: Job<T>; controller: AbortController; timer?: NodeJS.Timeout }

export class JobLimitError extends Error {}

export class EvaluationJobs<T> {
  private readonly jobs = new Map<string, Entry<T>>()
  constructor(private readonly options: { maxRunning: number; timeoutMs: number; keepMs: number }) {}

  /** Starts `work`; it gets an abort signal (cancel, deadline) and a progress callback. */
  start(total: number, work: (signal: AbortSignal, progress: (done: number) => void) => Promise<T>, timeoutMessage: string): Job<T> {
    const running = [...this.jobs.values()].filter((e) => e.job.status === 'running').length
    if (running >= this.options.maxRunning) throw new JobLimitError(`${running} evaluations are running; at most ${this.options.maxRunning} run at once`)
    const controller = new AbortController()
    const job: Job<T> = { id: randomUUID(), status: 'running', progress: { done: 0, total }, created_at: new Date().toISOString() }
    const entry: Entry<T> = { job, controller }
    this.jobs.set(job.id, entry)
    const deadline = setTimeout(() => controller.abort(timeoutMessage), this.options.timeoutMs)
    deadline.unref()
    work(controller.signal, (done) => { job.progress.done = done })
      .then((result) => { job.status = 'done'; job.result = result })
      .catch((error: unknown) => {
        job.status = controller.signal.aborted && controller.signal.reason !== timeoutMessage ? 'cancelled' : 'failed'
        job.error = controller.signal.aborted ? String(controller.signal.reason) : (error as Error).message
      })
      .finally(() => {
        clearTimeout(deadline)
        entry.timer = setTimeout(() => this.jobs.delete(job.id), this.options.keepMs)
        entry.timer.unref()
      })
    return job
  }

  get(id: string): Job<T> | undefined {
    return this.jobs.get(id)?.job
  }

  /** Cancels a running job; false when there is no such job. */
  cancel(id: string, reason = 'cancelled by DELETE'): boolean {
    const entry = this.jobs.get(id)
    if (!entry) return false
    if (entry.job.status === 'running') entry.controller.abort(reason)
    return true
  }

  close(): void {
    for (const e of this.jobs.values()) {
      if (e.job.status === 'running') e.controller.abort('the service is shutting down')
      if (e.timer) clearTimeout(e.timer)
    }
  }
}

/**
 * Evaluations that run as jobs, in the process that started them: at most `maxRunning` at once in this process,
 * each bounded in time (its signal aborts at the deadline) and cancellable; a finished job is kept `keepMs`.
 * With a shared `board`, every replica reads the job's state and can cancel it (src/evaluation/job-board.ts).
 */
import { randomUUID } from 'node:crypto'
import { BackendUnavailableError, errorMessage } from '../providers/errors.js'
import type { Job, JobBoard } from './job-board.js'

export type { Job,  } from './job-board.js'

interface Entry<T> { job: Job<T>; controller: AbortController; timer?: NodeJS.Timeout; publisher?: NodeJS.Timeout }

export interface EvaluationJobsOptions {
  maxRunning: number
  timeoutMs: number
  keepMs: number
  board?: JobBoard
  /** How often a running job publishes its progress to the board and looks for a cancel request, in ms. Default 250. */
  publishEveryMs?: number
}

export class JobLimitError extends Error {}

export class EvaluationJobs<T> {
  private readonly jobs = new Map<string, Entry<T>>()
  constructor(private readonly options: EvaluationJobsOptions) {}

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
    const { board } = this.options
    if (board) {
      void this.publish(job)
      entry.publisher = setInterval(() => {
        void this.publish(job)
        board.cancelRequested(job.id).then((reason) => { if (reason !== undefined) controller.abort(reason) }, () => undefined)
      }, this.options.publishEveryMs ?? 250)
      entry.publisher.unref()
    }
    work(controller.signal, (done) => { job.progress.done = done })
      .then((result) => { job.status = 'done'; job.result = result })
      .catch((error: unknown) => {
        job.status = controller.signal.aborted && controller.signal.reason !== timeoutMessage ? 'cancelled' : 'failed'
        job.error = controller.signal.aborted ? String(controller.signal.reason) : (error as Error).message
      })
      .finally(() => {
        clearTimeout(deadline)
        clearInterval(entry.publisher)
        void this.publish(job)
        entry.timer = setTimeout(() => this.jobs.delete(job.id), this.options.keepMs)
        entry.timer.unref()
      })
    return job
  }

  /** The job, run here or (with a board) by another replica, as it last published it. */
  async get(id: string): Promise<Job<T> | undefined> {
    const local = this.jobs.get(id)?.job
    if (local || !this.options.board) return local
    return this.fromBoard(() => this.options.board!.read<T>(id))
  }

  /** Cancels a running job, here or (with a board) in the replica that runs it; false when there is no such job. */
  async cancel(id: string, reason = 'cancelled by DELETE'): Promise<boolean> {
    const entry = this.jobs.get(id)
    if (entry) {
      if (entry.job.status === 'running') entry.controller.abort(reason)
      return true
    }
    if (!this.options.board) return false
    return this.fromBoard(() => this.options.board!.requestCancel(id, reason))
  }

  private async publish(job: Job<T>): Promise<void> {
    // a board that is down costs other replicas the job's state, never the job itself
    await this.options.board?.publish(job, this.options.keepMs + this.options.timeoutMs).catch(() => undefined)
  }

  private async fromBoard<R>(read: () => Promise<R>): Promise<R> {
    try {
      return await read()
    } catch (error) {
      throw new BackendUnavailableError('evaluation-jobs:redis', `cannot read the shared evaluation jobs: ${errorMessage(error)}`, { cause: error })
    }
  }

  close(): void {
    for (const e of this.jobs.values()) {
      if (e.job.status === 'running') e.controller.abort('the service is shutting down')
      clearTimeout(e.timer)
      clearInterval(e.publisher)
    }
  }
}

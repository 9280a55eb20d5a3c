/**
 * Where every replica reads an evaluation job that another replica runs: the job's last published state, and a
 * cancel request its runner picks up. In Redis when `REDIS_URL` is set; without it, jobs are the process's own.
 */
import type { RedisClient } from '../providers/redis-client.js'

type JobStatus = 'running' | 'done' | 'failed' | 'cancelled'

export interface Job<T> {
  id: string
  status: JobStatus
  progress: { done: number; total: number }
  created_at: string
  error?: string
  result?: T
}

export interface JobBoard {
  /** Makes the job's current state readable by every replica for `keepMs`. */
  publish<T>(job: Job<T>, keepMs: number): Promise<void>
  read<T>(id: string): Promise<Job<T> | undefined>
  /** Asks the job's runner, wherever it runs, to cancel it; false when no replica published such a job. */
  requestCancel(id: string, reason: string): Promise<boolean>
  /** The reason a cancel was asked for, if one was. */
  cancelRequested(id: string): Promise<string | undefined>
}

const KEY_PREFIX = 'recall:evaluation-job:'

export class RedisJobBoard implements JobBoard {
  constructor(private readonly client: RedisClient) {}

  async publish<T>(job: Job<T>, keepMs: number): Promise<void> {
    await this.client.set(`${KEY_PREFIX}${job.id}`, JSON.stringify(job), 'PX', keepMs)
  }

  async read<T>(id: string): Promise<Job<T> | undefined> {
    const held = await this.client.get(`${KEY_PREFIX}${id}`)
    return held === null ? undefined : JSON.parse(held) as Job<T>
  }

  async requestCancel(id: string, reason: string): Promise<boolean> {
    const ttl = await this.client.pttl(`${KEY_PREFIX}${id}`)
    if (ttl < 0) return false
    await this.client.set(`${KEY_PREFIX}${id}:cancel`, reason, 'PX', ttl)
    return true
  }

  async cancelRequested(id: string): Promise<string | undefined> {
    return (await this.client.get(`${KEY_PREFIX}${id}:cancel`)) ?? undefined
  }
}

import type { RedisClient } from '../../providers/redis-client.js'
import { BackendUnavailableError, errorMessage } from '../../providers/errors.js'
import type { Claim, SoleWriterRegistry, WriterIdentity } from './registry.js'

// Taken when free or already this instance's (then renewed); else the holder and its remaining lease.
const CLAIM = "local v = redis.call('GET', KEYS[1]) " +
  "if v == false or v == ARGV[1] then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) return {1} end " +
  "return {0, v, redis.call('PTTL', KEYS[1])}"
const RELEASE = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end"

const BACKEND = 'sole-writer:redis'

/** The registration as one Redis key holding the writer's identity, with the lease as its expiry (atomic: one script). */
export class RedisSoleWriterRegistry implements SoleWriterRegistry {
  readonly where: string
  readonly #client: RedisClient
  readonly #key: string

  /** `key`: one per set of shared stores. The client is the caller's to close. */
  constructor(options: { client: RedisClient; key: string }) {
    this.#client = options.client
    this.#key = options.key
    this.where = `Redis key ${options.key}`
  }

  async claim(self: WriterIdentity, leaseMs: number): Promise<Claim> {
    const answer = await this.#client.eval(CLAIM, 1, this.#key, serialize(self), String(leaseMs)).catch((error: unknown) => {
      throw new BackendUnavailableError(BACKEND, `cannot register the only writer in Redis: ${errorMessage(error)}`, { cause: error })
    }) as [number, string?, number?]
    if (answer[0] === 1) return { held: true }
    return { held: false, holder: parse(answer[1]!), endsInMs: Math.max(0, answer[2] ?? 0) }
  }

  async release(self: WriterIdentity): Promise<void> {
    await this.#client.eval(RELEASE, 1, this.#key, serialize(self))
  }
}

/** The same identity always serializes to the same text: the scripts compare it as the holder's token. */
function serialize(self: WriterIdentity): string {
  return JSON.stringify({ instance: self.instance, host: self.host, pid: self.pid, startedAt: self.startedAt })
}

function parse(value: string): WriterIdentity {
  try {
    const { instance, host, pid, startedAt } = JSON.parse(value) as WriterIdentity
    return { instance: String(instance), host: String(host), pid: Number(pid), startedAt: String(startedAt) }
  } catch {
    return { instance: value, host: 'unknown', pid: 0, startedAt: 'unknown' }
  }
}

import { randomBytes } from 'node:crypto'
import type { Redis } from 'ioredis'
import { BackendUnavailableError, errorMessage } from '../errors.js'
import { clockSeed, INDEX_KINDS, type GenerationStore, type IndexKind, type NamespaceGenerations } from './port.js'

export interface RedisGenerationStoreOptions {
  client: Redis
  /** Prepended to the namespace to name its hash. Default `recall:generations:`. */
  keyPrefix?: string
}

// One hash per namespace: `epoch` (random, set once by HSETNX), `gen` (the generation, seeded from the clock
// by HSETNX, then HINCRBY) and one field per index kind holding the generation of the last write touching it.
// A key that was flushed or evicted is created again under a new epoch and from a later clock seed, so
// neither a version token nor a generation ever repeats.
const INIT = "redis.call('HSETNX', KEYS[1], 'epoch', ARGV[1]) redis.call('HSETNX', KEYS[1], 'gen', ARGV[2])"
const READ = `${INIT} return redis.call('HMGET', KEYS[1], 'epoch', 'gen', ${INDEX_KINDS.map((k) => `'${k}'`).join(', ')})`
const RECORD = `${INIT} local g = redis.call('HINCRBY', KEYS[1], 'gen', 1) ` +
  "for i = 3, #ARGV do redis.call('HSET', KEYS[1], ARGV[i], g) end return g"

/** The counters every replica shares (`REDIS_URL`); each call is one atomic script, one round trip. */
export class RedisGenerationStore implements GenerationStore {
  readonly backend = 'redis'
  readonly #client: Redis
  readonly #prefix: string

  constructor(options: RedisGenerationStoreOptions) {
    this.#client = options.client
    this.#prefix = options.keyPrefix ?? 'recall:generations:'
  }

  async recordWrite(namespace: string, kinds: readonly IndexKind[]): Promise<number> {
    const generation = await this.#eval(RECORD, namespace, kinds)
    return Number(generation)
  }

  async read(namespace: string): Promise<NamespaceGenerations> {
    const [epoch, generation, ...last] = (await this.#eval(READ, namespace, [])) as (string | null)[]
    const version = (i: number) => `${epoch}:${last[i] ?? 0}`
    return { generation: Number(generation), versions: { hybrid: version(0), graphrag: version(1), episodic: version(2) } }
  }

  /** The client belongs to whoever made it. */
  async close(): Promise<void> {}

  async #eval(script: string, namespace: string, kinds: readonly IndexKind[]): Promise<unknown> {
    try {
      return await this.#client.eval(script, 1, this.#prefix + namespace, randomBytes(6).toString('hex'), clockSeed(), ...kinds)
    } catch (error) {
      throw new BackendUnavailableError('generations:redis', errorMessage(error), { cause: error })
    }
  }
}

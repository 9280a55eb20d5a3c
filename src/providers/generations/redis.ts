import { randomBytes } from 'node:crypto'
import { evalConfirmed, hashTag, subscriberOf, type RedisClient, type ReplicaAcknowledgement } from '../redis-client.js'
import { BackendUnavailableError, errorMessage } from '../errors.js'
import {
  clockSeed, INDEX_KINDS, type CatalogPosition, type DocumentChanges, type DocumentChangeSet, type GenerationStore, type IndexKind,
  type NamespaceGenerations
} from './port.js'
import { formatVersion } from './version.js'

export interface RedisGenerationStoreOptions {
  client: RedisClient
  /**
   * Prepended to the namespace to name its hash (and, with `:changes` after it, its change log). Default
   * `recall:generations:`. On a Redis Cluster the namespace is a hash tag: `recall:generations:{ns}`.
   */
  keyPrefix?: string
  /** Most documents the change log of one namespace keeps; the oldest go first. Default 100,000. */
  changeLogLength?: number
  /**
   * Where a write is recorded and how many replicas must confirm it (`WAIT`): a record they did not confirm fails
   * (the caller records it again), so that a failover cannot hand out its generation twice. Default: on `client`,
   * without WAIT. Its client must reach the same Redis as `client`, with a command timeout above the wait.
   */
  writes?: { client: RedisClient; acknowledgement: ReplicaAcknowledgement }
}

// One hash per namespace: `epoch` (random, set once by HSETNX), `gen` (the generation, seeded from the clock
// by HSETNX, then HINCRBY) and one field per index kind holding the generation of the last write touching it.
// A key that was flushed or evicted is created again under a new epoch and from a later clock seed, so
// neither a version token nor a generation ever repeats.
const INIT = "redis.call('HSETNX', KEYS[1], 'epoch', ARGV[1]) redis.call('HSETNX', KEYS[1], 'gen', ARGV[2])"
const READ = `${INIT} return redis.call('HMGET', KEYS[1], 'epoch', 'gen', ${INDEX_KINDS.map((k) => `'${k}'`).join(', ')})`

// The change log (docs/scale-out-state.md): a sorted set per namespace, each document id scored by the generation
// of the last hybrid write that changed it, and a mark `~<epoch>` (score -1) saying which epoch it belongs to. The
// hash's `log_floor` is the generation up to which the log is not known to be complete: where it was started,
// trimmed, or a write of unknown documents was recorded. A reader synced at g may use it iff the epoch and the
// mark match and log_floor <= g. Written in the same script as the generation, so a write's ids are in the log
// exactly when its generation is visible. A log (re)started at write g is complete after the namespace's previous
// hybrid generation: no hybrid write lies between it and g, and every hybrid write sets that field, logged or not.
// A hybrid write is also published on the writes channel as `<epoch>:<generation> <namespace>` (its new hybrid version,
// as ./version.ts writes it; the field as stored, since Lua's own number to string conversion writes 1.79e+15),
// so that other replicas catch up before a read asks (`follow`); a message missed changes nothing but when.
// ARGV: epoch candidate, clock seed, kinds (comma separated), log mode (none | ids | unknown), max length, channel,
// namespace, ids...
const RECORD = `${INIT} local g = redis.call('HINCRBY', KEYS[1], 'gen', 1)
local before = tonumber(redis.call('HGET', KEYS[1], 'hybrid') or '0')
for kind in string.gmatch(ARGV[3], '[^,]+') do redis.call('HSET', KEYS[1], kind, g) end
if ARGV[4] ~= 'none' then
  local mark = '~' .. redis.call('HGET', KEYS[1], 'epoch')
  if not redis.call('ZSCORE', KEYS[2], mark) then
    redis.call('DEL', KEYS[2])
    redis.call('ZADD', KEYS[2], -1, mark)
    redis.call('HSET', KEYS[1], 'log_floor', math.max(before, tonumber(redis.call('HGET', KEYS[1], 'log_floor') or '0')))
  end
  if ARGV[4] == 'unknown' then
    redis.call('ZREMRANGEBYSCORE', KEYS[2], 0, g)
    redis.call('HSET', KEYS[1], 'log_floor', g)
  else
    for i = 8, #ARGV do redis.call('ZADD', KEYS[2], g, ARGV[i]) end
    local excess = redis.call('ZCARD', KEYS[2]) - 1 - tonumber(ARGV[5])
    if excess > 0 then
      local cut = redis.call('ZRANGE', KEYS[2], 1, excess, 'WITHSCORES')
      redis.call('ZREMRANGEBYRANK', KEYS[2], 1, excess)
      local top = tonumber(cut[#cut])
      if top > tonumber(redis.call('HGET', KEYS[1], 'log_floor') or '0') then redis.call('HSET', KEYS[1], 'log_floor', top) end
    end
  end
end
if string.find(',' .. ARGV[3] .. ',', ',hybrid,', 1, true) then
  local version = redis.call('HGET', KEYS[1], 'epoch') .. ':' .. redis.call('HGET', KEYS[1], 'hybrid')
  redis.call('PUBLISH', ARGV[6], version .. ' ' .. ARGV[7])
end
return g`

// ARGV: epoch candidate, clock seed, since epoch ('' for none), since generation, limit.
// Answers epoch, hybrid generation, then (when the log is complete since then) 'ok' and the ids.
const CHANGES = `${INIT} local h = redis.call('HMGET', KEYS[1], 'epoch', 'hybrid', 'log_floor')
local out = { h[1], h[2] or '0' }
if ARGV[3] ~= h[1] then return out end
if not redis.call('ZSCORE', KEYS[2], '~' .. h[1]) then return out end
if tonumber(h[3] or '0') > tonumber(ARGV[4]) then return out end
local limit = tonumber(ARGV[5])
local ids = redis.call('ZRANGEBYSCORE', KEYS[2], '(' .. ARGV[4], '+inf', 'LIMIT', 0, limit + 1)
if #ids > limit then return out end
table.insert(out, 'ok')
for i = 1, #ids do table.insert(out, ids[i]) end
return out`

/** The counters every replica shares (`REDIS_URL`); each call is one atomic script, one round trip. */
export class RedisGenerationStore implements GenerationStore {
  readonly backend = 'redis'
  readonly #client: RedisClient
  readonly #prefix: string
  readonly #logLength: number
  readonly #channel: string
  readonly #writes: RedisGenerationStoreOptions['writes']
  #subscriber: RedisClient | undefined

  constructor(options: RedisGenerationStoreOptions) {
    this.#client = options.client
    this.#prefix = options.keyPrefix ?? 'recall:generations:'
    this.#logLength = options.changeLogLength ?? 100_000
    this.#channel = `${this.#prefix}hybrid-writes`
    this.#writes = options.writes
  }

  /**
   * Tells `listener` of every hybrid write any replica records from now on, on a connection of its own (a
   * subscribed one can send nothing else); subscribes again after each reconnect. Messages sent while it was
   * disconnected are lost: followers must not depend on them.
   */
  follow(listener: (namespace: string, version: string) => void): void {
    if (this.#subscriber) throw new Error('this generation store already has a follower')
    const subscriber = subscriberOf(this.#client, `${this.#prefix}follower`)
    this.#subscriber = subscriber
    subscriber.on('error', () => {}) // reconnects on its own; the reads say when Redis is down
    subscriber.on('message', (channel: string, message: string) => {
      const space = message.indexOf(' ')
      if (channel === this.#channel && space > 0) listener(message.slice(space + 1), message.slice(0, space))
    })
    subscriber.subscribe(this.#channel).catch(() => {})
  }

  async recordWrite(namespace: string, kinds: readonly IndexKind[], changes?: DocumentChangeSet): Promise<number> {
    const mode = !kinds.includes('hybrid') ? 'none' : changes ? 'ids' : 'unknown'
    const generation = await this.#eval(RECORD, namespace, [
      kinds.join(','), mode, String(this.#logLength), this.#channel, namespace, ...(mode === 'ids' ? changes!.docIds : [])
    ], this.#writes)
    return Number(generation)
  }

  async read(namespace: string): Promise<NamespaceGenerations> {
    const [epoch, generation, ...last] = (await this.#eval(READ, namespace, [])) as (string | null)[]
    const version = (i: number) => formatVersion(epoch!, Number(last[i] ?? 0))
    return { generation: Number(generation), versions: { hybrid: version(0), graphrag: version(1), episodic: version(2) } }
  }

  async documentChanges(namespace: string, since: CatalogPosition | undefined, limit: number): Promise<DocumentChanges> {
    const [epoch, hybrid, ok, ...ids] = (await this.#eval(CHANGES, namespace, [since?.epoch ?? '', String(since?.generation ?? 0), String(limit)])) as string[]
    const position = { epoch: epoch!, generation: Number(hybrid) }
    return ok === 'ok' ? { position, docIds: ids } : { position }
  }

  /** The client belongs to whoever made it; the follower's connection is this store's. */
  async close(): Promise<void> {
    const subscriber = this.#subscriber
    this.#subscriber = undefined
    if (subscriber) await subscriber.quit().catch(() => subscriber.disconnect())
  }

  async #eval(script: string, namespace: string, args: readonly string[], writes?: RedisGenerationStoreOptions['writes']): Promise<unknown> {
    // both keys in the namespace's slot on a cluster (`prefix{ns}`, `prefix{ns}:changes`); `prefix ns` on one server
    const hash = this.#prefix + hashTag(this.#client, namespace)
    try {
      return await evalConfirmed(writes?.client ?? this.#client, writes?.acknowledgement, script, [hash, `${hash}:changes`],
        [randomBytes(6).toString('hex'), clockSeed(), ...args])
    } catch (error) {
      throw new BackendUnavailableError('generations:redis', errorMessage(error), { cause: error })
    }
  }
}

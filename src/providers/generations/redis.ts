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
   * The write window beside the log (docs/scale-out-state.md, "The write window"): most documents whose last write it
   * keeps per namespace (oldest first out; 0: none), the largest state kept (bytes), and how long one is kept (ms).
   * Default: none.
   */
  window?: { documents: number; documentBytes: number; ttlMs: number }
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
// The write window (KEYS[3], a hash: document id -> `<generation> <state>`, or `~<token>` while a writer holds the
// document; KEYS[4], a sorted set of the same ids by the time they were set, in ms, to trim by age and count): a write
// marks its documents under the write lock before it touches the vector store (MARK); its record keeps each state
// only where its own mark still stands, under the generation that records it. A reader takes a state only when that
// generation is the one the log lists the document at (the last write naming it): a later write, recorded without
// states (it failed, a replay, an older replica) or by a writer that lost the mark, leaves the log ahead of it.
// ARGV: epoch candidate, clock seed, kinds (comma separated), log mode (none | ids | unknown), max length, channel,
// namespace, window token ('' for none), window documents, window ms, n, n ids, then (with a token) n states ('' for none).
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
    local n = tonumber(ARGV[11])
    for i = 12, 11 + n do redis.call('ZADD', KEYS[2], g, ARGV[i]) end
    if ARGV[8] ~= '' then
      local gen = redis.call('HGET', KEYS[1], 'gen')
      local t = redis.call('TIME')
      local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
      local own = '~' .. ARGV[8]
      for i = 1, n do
        local id, state = ARGV[11 + i], ARGV[11 + n + i]
        if redis.call('HGET', KEYS[3], id) == own then
          if state == '' then
            redis.call('HDEL', KEYS[3], id)
            redis.call('ZREM', KEYS[4], id)
          else
            redis.call('HSET', KEYS[3], id, gen .. ' ' .. state)
            redis.call('ZADD', KEYS[4], now, id)
          end
        end
      end
      local old = redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', '(' .. (now - tonumber(ARGV[10])))
      local excess = redis.call('ZCARD', KEYS[4]) - #old - tonumber(ARGV[9])
      if excess > 0 then
        local oldest = redis.call('ZRANGE', KEYS[4], #old, #old + excess - 1)
        for i = 1, #oldest do table.insert(old, oldest[i]) end
      end
      for i = 1, #old do
        redis.call('HDEL', KEYS[3], old[i])
        redis.call('ZREM', KEYS[4], old[i])
      end
      redis.call('PEXPIRE', KEYS[3], ARGV[10])
      redis.call('PEXPIRE', KEYS[4], ARGV[10])
    end
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

// ARGV: epoch candidate, clock seed, since epoch ('' for none), since generation, limit, most window states to read.
// Answers epoch, hybrid generation, then (when the log is complete since then) 'ok', n, the n ids, their n scores
// (the generation the log lists each at) and, when there are at most that many, their n window entries (false: none).
const CHANGES = `${INIT} local h = redis.call('HMGET', KEYS[1], 'epoch', 'hybrid', 'log_floor')
local out = { h[1], h[2] or '0' }
if ARGV[3] ~= h[1] then return out end
if not redis.call('ZSCORE', KEYS[2], '~' .. h[1]) then return out end
if tonumber(h[3] or '0') > tonumber(ARGV[4]) then return out end
local limit = tonumber(ARGV[5])
local scored = redis.call('ZRANGEBYSCORE', KEYS[2], '(' .. ARGV[4], '+inf', 'WITHSCORES', 'LIMIT', 0, limit + 1)
local n = #scored / 2
if n > limit then return out end
table.insert(out, 'ok')
table.insert(out, n)
for i = 1, n do table.insert(out, scored[2 * i - 1]) end
for i = 1, n do table.insert(out, scored[2 * i]) end
if n > 0 and n <= tonumber(ARGV[6]) then
  for i = 1, n do table.insert(out, redis.call('HGET', KEYS[3], scored[2 * i - 1])) end
end
return out`

// ARGV: token, window ms, ids. Marks the documents as being written (their kept states end).
const MARK = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
for i = 3, #ARGV do
  redis.call('HSET', KEYS[1], ARGV[i], '~' .. ARGV[1])
  redis.call('ZADD', KEYS[2], now, ARGV[i])
end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return 0`

/** Most window states one catch-up reads in its script; a catch-up of more documents reads them from the vector store. */
const MAX_WINDOW_READ = 256

/** The counters every replica shares (`REDIS_URL`); each call is one atomic script, one round trip. */
export class RedisGenerationStore implements GenerationStore {
  readonly backend = 'redis'
  readonly #client: RedisClient
  readonly #prefix: string
  readonly #logLength: number
  readonly #channel: string
  readonly #window: RedisGenerationStoreOptions['window']
  readonly #writes: RedisGenerationStoreOptions['writes']
  #subscriber: RedisClient | undefined

  constructor(options: RedisGenerationStoreOptions) {
    this.#client = options.client
    this.#prefix = options.keyPrefix ?? 'recall:generations:'
    this.#logLength = options.changeLogLength ?? 100_000
    this.#channel = `${this.#prefix}hybrid-writes`
    this.#window = options.window && options.window.documents > 0 ? options.window : undefined
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
    const ids = mode === 'ids' ? changes!.docIds : []
    const window = this.#window && mode === 'ids' ? changes!.window : undefined
    // a state over the bound is not kept: its mark is taken away, and readers read the document from the vector store
    const states = window
      ? ids.map((id) => { const state = window.states.get(id) ?? ''; return Buffer.byteLength(state) <= this.#window!.documentBytes ? state : '' })
      : []
    const generation = await this.#eval(RECORD, namespace, [
      kinds.join(','), mode, String(this.#logLength), this.#channel, namespace,
      window?.token ?? '', String(this.#window?.documents ?? 0), String(this.#window?.ttlMs ?? 0), String(ids.length), ...ids, ...states
    ], this.#writes)
    return Number(generation)
  }

  async markWriting(namespace: string, docIds: readonly string[], token: string): Promise<boolean> {
    if (!this.#window) return false
    if (docIds.length === 0) return true
    const [, , window, order] = this.#keys(namespace)
    try {
      await this.#client.eval(MARK, 2, window, order, token, String(this.#window.ttlMs), ...docIds)
      return true
    } catch (error) {
      throw new BackendUnavailableError('generations:redis', errorMessage(error), { cause: error })
    }
  }

  async read(namespace: string): Promise<NamespaceGenerations> {
    const [epoch, generation, ...last] = (await this.#eval(READ, namespace, [])) as (string | null)[]
    const version = (i: number) => formatVersion(epoch!, Number(last[i] ?? 0))
    return { generation: Number(generation), versions: { hybrid: version(0), graphrag: version(1), episodic: version(2) } }
  }

  async documentChanges(namespace: string, since: CatalogPosition | undefined, limit: number): Promise<DocumentChanges> {
    const [epoch, hybrid, ok, count, ...rest] = (await this.#eval(CHANGES, namespace, [
      since?.epoch ?? '', String(since?.generation ?? 0), String(limit), String(this.#window ? MAX_WINDOW_READ : 0)
    ])) as (string | number | null)[]
    const position = { epoch: String(epoch), generation: Number(hybrid) }
    if (ok !== 'ok') return { position }
    const n = Number(count)
    const docIds = rest.slice(0, n).map(String)
    if (rest.length < 3 * n) return { position, docIds }
    const window = new Map<string, string>()
    docIds.forEach((id, i) => {
      const entry = rest[2 * n + i]
      if (typeof entry !== 'string' || entry.startsWith('~')) return
      const space = entry.indexOf(' ')
      // kept by the write the log lists the document at: nothing recorded since changed it
      if (space > 0 && Number(entry.slice(0, space)) === Number(rest[n + i])) window.set(id, entry.slice(space + 1))
    })
    return { position, docIds, window }
  }

  /** The client belongs to whoever made it; the follower's connection is this store's. */
  async close(): Promise<void> {
    const subscriber = this.#subscriber
    this.#subscriber = undefined
    if (subscriber) await subscriber.quit().catch(() => subscriber.disconnect())
  }

  /** The namespace's keys, all in its slot on a cluster (`prefix{ns}`, `prefix{ns}:changes`, ...); `prefix ns` on one server. */
  #keys(namespace: string): [string, string, string, string] {
    const hash = this.#prefix + hashTag(this.#client, namespace)
    return [hash, `${hash}:changes`, `${hash}:window`, `${hash}:window-order`]
  }

  async #eval(script: string, namespace: string, args: readonly string[], writes?: RedisGenerationStoreOptions['writes']): Promise<unknown> {
    try {
      return await evalConfirmed(writes?.client ?? this.#client, writes?.acknowledgement, script, this.#keys(namespace),
        [randomBytes(6).toString('hex'), clockSeed(), ...args])
    } catch (error) {
      throw new BackendUnavailableError('generations:redis', errorMessage(error), { cause: error })
    }
  }
}

import { randomBytes } from 'node:crypto'
import { hostname } from 'node:os'
import type { RedisClient } from '../../providers/redis-client.js'
import type { Config } from '../../config.js'
import { BackendUnavailableError, errorMessage } from '../../providers/errors.js'
import type { StartupLogger, StepDefinition } from '../../startup.js'
import { DataDirSoleWriterRegistry } from './data-dir.js'
import { QdrantSoleWriterRegistry } from './qdrant.js'
import { RedisSoleWriterRegistry } from './redis.js'
import type { SoleWriterRegistry, WriterIdentity } from './registry.js'

export type {  SoleWriterRegistry, WriterIdentity } from './registry.js'
export { DataDirSoleWriterRegistry } from './data-dir.js'
export { QdrantSoleWriterRegistry } from './qdrant.js'
export { RedisSoleWriterRegistry } from './redis.js'

/** Another live process holds the registration: this one must not start (`fatal`: retrying cannot fix it soon). */
class SoleWriterConflictError extends Error {
  readonly fatal = true
}

/** This run's identity: a random instance id, the host name, the pid and the time it was created. */
export function thisProcess(): WriterIdentity {
  return { instance: randomBytes(8).toString('hex'), host: hostname(), pid: process.pid, startedAt: new Date().toISOString() }
}

interface SoleWriterOptions {
  registry: SoleWriterRegistry
  self: WriterIdentity
  /** The registration's lease in ms; renewed every third of it. */
  leaseMs: number
  /** What the stores are, in words, for the refusal (`collection prefix "recall_" on http://qdrant:6333`). */
  stores: string
  /** What to do instead, for the refusal. */
  fix: string
  logger?: Pick<StartupLogger, 'warn'>
}

/**
 * This process registered as the only writer of shared stores (`REPLICAS=1`), from its start-up until it closes:
 * `claim` registers it or refuses, then the registration is renewed in the background. A renewal that finds
 * another process registered (this one's lease ran out while the registry was unreachable) is logged: both
 * write the stores from then on, and one must be stopped.
 */
class SoleWriter {
  readonly #options: SoleWriterOptions
  #timer: NodeJS.Timeout | undefined
  #renewing: Promise<void> = Promise.resolve()
  #heldAt: number | undefined
  #warned: string | undefined
  #stopped = false

  constructor(options: SoleWriterOptions) {
    this.#options = options
  }

  /** Registers this process, or throws `SoleWriterConflictError` naming the holder and the fix. Answers a line for the log. */
  async claim(): Promise<string> {
    const { registry, self, leaseMs, stores, fix } = this.#options
    const sent = performance.now()
    const claim = await registry.claim(self, leaseMs)
    if (!claim.held) {
      const { host, pid, startedAt } = claim.holder
      throw new SoleWriterConflictError(
        `another recall process is registered as the only writer of the stores at ${stores}: host ${host}, pid ${pid}, ` +
        `started at ${startedAt} (${registry.where}; it ends within ${claim.endsInMs} ms unless that process renews it). ${fix}`
      )
    }
    if (this.#stopped) {
      await registry.release(self).catch(() => undefined)
      return 'closed while registering'
    }
    this.#heldAt = sent
    this.#timer ??= setInterval(() => { this.#renewing = this.#renewing.then(() => this.#renew()) }, Math.max(1, Math.floor(leaseMs / 3)))
    this.#timer.unref()
    return `registered as the only writer in ${registry.where} (lease ${leaseMs} ms, instance ${self.instance})`
  }

  /** Stops renewing and ends the registration (a failure leaves it to its lease). */
  async stop(): Promise<void> {
    this.#stopped = true
    clearInterval(this.#timer)
    await this.#renewing
    if (this.#heldAt !== undefined) await this.#options.registry.release(this.#options.self).catch(() => undefined)
  }

  async #renew(): Promise<void> {
    if (this.#stopped) return
    const { registry, self, leaseMs, logger } = this.#options
    const sent = performance.now()
    try {
      const claim = await registry.claim(self, leaseMs)
      if (claim.held) {
        this.#heldAt = sent
        this.#warned = undefined
        return
      }
      const key = claim.holder.instance
      if (this.#warned === key) return
      this.#warned = key
      logger?.warn({ holder: claim.holder, registry: registry.where },
        `another recall process (host ${claim.holder.host}, pid ${claim.holder.pid}) registered as the only writer after this one's ` +
        'registration ran out: both write the same stores with REPLICAS=1 and miss each other\'s writes; stop one of them')
    } catch (error) {
      if (this.#heldAt !== undefined && performance.now() - this.#heldAt >= leaseMs && this.#warned !== 'lapsed') {
        this.#warned = 'lapsed'
        logger?.warn({ registry: registry.where, err: errorMessage(error) },
          'the registration as the only writer could not be renewed within its lease: another process may start over the same stores')
      }
    }
  }
}

/**
 * The start-up step `sole-writer`, run before every other step: it registers this process as the only writer of its
 * stores and refuses to start while another live process is registered there. Embedded stores: in
 * `DATA_DIR/writer.json` (a server and `ingest --direct` on one `DATA_DIR` would each miss the other's writes). With
 * `REPLICAS=1` over Qdrant: in Redis through the service's write connection `redis` with `REDIS_URL`, else in the
 * collection `<COLLECTION_PREFIX>writers`. With several replicas over Qdrant none: they take turns through the write
 * lock and read each other's writes.
 */
export function soleWriterStep(config: Config, redis: RedisClient | undefined, logger?: Pick<StartupLogger, 'warn'>): StepDefinition | undefined {
  const leaseMs = config.replicas.soleWriterLeaseMs
  const restart = `to replace that process, stop it first (a process killed without closing holds the registration for SOLE_WRITER_LEASE_MS=${leaseMs} ms at most)`
  if (config.vector.backend !== 'qdrant') {
    const registry = new DataDirSoleWriterRegistry({ dir: config.dataDir })
    return step(registry, new SoleWriter({
      registry, self: thisProcess(), leaseMs, stores: `DATA_DIR ${config.dataDir}`, ...(logger ? { logger } : {}),
      fix: 'The embedded stores of a DATA_DIR belong to one process: write through that process (its API, or `npm run ingest -- --url`), ' +
        `or use another DATA_DIR; ${restart.replace(' at most)', ' at most, or until it is gone from this host)')}`
    }))
  }
  if (config.replicas.count !== 1) return undefined
  const vector = config.vector
  // A Redis serves one deployment (generations are kept there by namespace alone): the key names the collection
  // prefix, not Qdrant's address, so that a process reaching the same Qdrant by another name is seen too.
  const registry: SoleWriterRegistry = redis
    ? new RedisSoleWriterRegistry({ client: redis, key: `recall:sole-writer:${config.collectionPrefix}` })
    : new QdrantSoleWriterRegistry({
        url: vector.url, ...(vector.apiKey ? { apiKey: vector.apiKey } : {}), collection: `${config.collectionPrefix}writers`, cluster: vector.cluster,
        timeoutMs: config.timeouts.vectorWrite, settleMs: Math.min(1_000, Math.floor(leaseMs / 5))
      })
  return step(registry, new SoleWriter({
    registry, self: thisProcess(), leaseMs, stores: `collection prefix "${config.collectionPrefix}" on ${vector.url}`, ...(logger ? { logger } : {}),
    fix: 'Two processes that each believe they are the only writer (REPLICAS=1) never read each other\'s writes. To run several ' +
      `processes over the same stores, set REPLICAS to more than 1 and the same REDIS_URL on every one of them; ${restart}`
  }), redis)
}

function step(registry: SoleWriterRegistry, writer: SoleWriter, redis?: RedisClient): StepDefinition {
  return {
    name: 'sole-writer',
    doing: `registering as the only writer of the stores in ${registry.where}`,
    first: true,
    run: async () => {
      if (redis) await connected(redis)
      return writer.claim()
    },
    // the client is the service's: it closes it after start-up's steps stopped
    stop: () => writer.stop()
  }
}

/** Waits for the client's connection (it queues no command before), at most two seconds. */
async function connected(client: RedisClient): Promise<void> {
  if (client.status === 'ready') return
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      client.off('ready', ready)
      reject(new BackendUnavailableError('cache:redis', 'redis is unreachable: no connection within 2000 ms'))
    }, 2_000)
    const ready = (): void => {
      clearTimeout(timer)
      resolve()
    }
    client.once('ready', ready)
  })
}

import { Errors } from './errors.js'
import { errorMessage } from './providers/errors.js'
import type { CatalogPosition, DocumentChanges, DocumentChangeSet, GenerationStore, IndexKind } from './providers/generations/index.js'

export interface GenerationsOptions {
  store: GenerationStore
  /** Longest wait for a `min_generation` this replica has not seen, in milliseconds; 0 answers at once. */
  waitMs: number
  /** `Retry-After` of a `stale_replica` answer, in seconds. */
  retryAfterSeconds: number
  /** Pause between two reads of the store while waiting, in milliseconds. Default 20. */
  pollMs?: number
  /** Pause between two attempts to record a write whose recording failed, in milliseconds. Default 250. */
  retryMs?: number
  /**
   * How long a write keeps trying to record itself before it answers without a generation, in milliseconds: 0 (the
   * default) tries three times within a few hundred ms; with replicas that must confirm a record, long enough for a
   * failover and the return of a replica (`REDIS_RECORD_RETRY_MS`).
   */
  recordPatienceMs?: number
  logger?: { warn(obj: object, msg: string): void }
}

/** What one read of a namespace's counters gave a request. */
export interface ReadState {
  /** Every write up to this generation is visible to the request; undefined when no generation is known. */
  generation?: number
  /** The kind's version for the response cache key; undefined when it cannot be known for sure (no caching). */
  version?: string
}

/** 503 `RECALL_STALE_REPLICA`: the replica has not seen the generation a request asks for. */
export class StaleReplicaError extends Errors.staleReplica {
  constructor(message: string, readonly retryAfterSeconds: number) {
    super(message)
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref())

/**
 * The service's side of the generation store: records writes (retrying in the background when the store is
 * down), gives each read its generation and cache version, and makes a read that names a `min_generation`
 * wait for it.
 *
 * A write whose recording failed leaves its namespace "pending" here: until the record lands, this replica
 * caches nothing of that namespace, so the store coming back with the old version never makes it serve an
 * answer from before the write (docs/scale-out-state.md says what other replicas may see meanwhile).
 */
export class Generations {
  readonly #options: GenerationsOptions
  readonly #pending = new Map<string, Set<IndexKind>>()
  readonly #seen = new Map<string, number>()
  #retrying: Promise<void> | undefined
  #closed = false

  constructor(options: GenerationsOptions) {
    this.#options = options
  }

  get backend(): GenerationStore['backend'] {
    return this.#options.store.backend
  }

  /**
   * Records a write that touched `kinds` of `namespace` (call it after the write, also after one that
   * failed half-way); its generation, or undefined when the store could not be reached in three attempts (or
   * within `recordPatienceMs`)
   * (the write is then recorded later, in the background, as a change of unknown documents). `changes` names
   * the documents a hybrid write changed, for the change log.
   */
  async recordWrite(namespace: string, kinds: readonly IndexKind[], changes?: DocumentChangeSet): Promise<number | undefined> {
    let failure: unknown
    const patience = performance.now() + (this.#options.recordPatienceMs ?? 0)
    for (let attempt = 0; attempt < 3 || (performance.now() < patience && !this.#closed); attempt++) {
      if (attempt > 0) await sleep(Math.min(50 * 2 ** attempt, 1_000))
      try {
        return this.#see(namespace, await this.#options.store.recordWrite(namespace, kinds, changes))
      } catch (error) {
        failure = error
      }
    }
    const pending = this.#pending.get(namespace) ?? new Set<IndexKind>()
    for (const kind of kinds) pending.add(kind)
    this.#pending.set(namespace, pending)
    this.#options.logger?.warn(
      { namespace, kinds, err: errorMessage(failure) },
      'generation store unreachable: the write is recorded when it answers; until then this replica caches nothing of the namespace'
    )
    this.#retryPending()
    return undefined
  }

  /**
   * The generation and `kind`'s version a read of `namespace` sees. With `minGeneration`, waits until the
   * store has reached it (at most `waitMs`), else throws `StaleReplicaError`; a store that cannot be read
   * then also answers stale (it cannot show the generation was reached). Without it, a store that is down
   * gives the last generation this replica saw and no version.
   */
  async readState(kind: IndexKind, namespace: string, minGeneration?: number): Promise<ReadState> {
    const deadline = performance.now() + this.#options.waitMs
    for (;;) {
      let state: Awaited<ReturnType<GenerationStore['read']>> | undefined
      let failure: unknown
      try {
        state = await this.#options.store.read(namespace)
        this.#see(namespace, state.generation)
      } catch (error) {
        failure = error
      }
      if (minGeneration === undefined || (state && state.generation >= minGeneration)) {
        const seen = this.#seen.get(namespace)
        return {
          ...(state ? { generation: state.generation } : seen !== undefined ? { generation: seen } : {}),
          ...(state && !this.#pending.has(namespace) ? { version: state.versions[kind] } : {})
        }
      }
      if (performance.now() >= deadline) {
        const why = state
          ? `it has seen generation ${state.generation}`
          : `the generation store cannot be read (${errorMessage(failure)})`
        throw new StaleReplicaError(
          `stale_replica: min_generation ${minGeneration} of namespace "${namespace}" was not seen within ${this.#options.waitMs} ms; ${why}`,
          this.#options.retryAfterSeconds
        )
      }
      await sleep(this.#options.pollMs ?? 20)
    }
  }

  /** The change log's answer (see `GenerationStore.documentChanges`); throws when the store is down. */
  documentChanges(namespace: string, since: CatalogPosition | undefined, limit: number): Promise<DocumentChanges> {
    return this.#options.store.documentChanges(namespace, since, limit)
  }

  /**
   * See `GenerationStore.markWriting`: true when the documents are marked, so that the write's record may keep their
   * states in the window; false when the store keeps none or could not mark them (the record then keeps none, and
   * the documents' earlier states no longer match the log once it is recorded).
   */
  async markWriting(namespace: string, docIds: readonly string[], token: string): Promise<boolean> {
    if (!this.#options.store.markWriting) return false
    try {
      return await this.#options.store.markWriting(namespace, docIds, token)
    } catch {
      return false
    }
  }

  /** See `GenerationStore.follow`; false when the store cannot tell (one process's own counters). */
  follow(listener: (namespace: string, version: string) => void): boolean {
    if (!this.#options.store.follow) return false
    this.#options.store.follow(listener)
    return true
  }

  /** Stops the background retries; pending records are given up (the next write records the namespace again). */
  async close(): Promise<void> {
    this.#closed = true
    await this.#options.store.close()
  }

  #see(namespace: string, generation: number): number {
    if (generation > (this.#seen.get(namespace) ?? -1)) this.#seen.set(namespace, generation)
    return generation
  }

  #retryPending(): void {
    if (this.#retrying) return
    this.#retrying = (async () => {
      while (this.#pending.size > 0 && !this.#closed) {
        await sleep(this.#options.retryMs ?? 250)
        for (const [namespace, kinds] of [...this.#pending]) {
          try {
            this.#see(namespace, await this.#options.store.recordWrite(namespace, [...kinds]))
            this.#pending.delete(namespace)
          } catch {
            // still down; the next round tries again
          }
        }
      }
    })().finally(() => { this.#retrying = undefined })
  }
}

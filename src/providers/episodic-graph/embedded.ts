import { basename, dirname } from 'node:path'
import { EdgeMemo, EpisodicPartition, type Snapshot } from './partition.js'
import { projectTwoPhases } from './projection.js'
import { HEAD, snapshotRows } from './snapshot-rows.js'
import { BackgroundCompaction } from '../embedded/background-compaction.js'
import { TaskQueue } from '../embedded/task-queue.js'
import type { DurableLog } from '../embedded/durable-log.js'
import { runSteps, runStepsYielding, type LoadSteps } from '../embedded/load-steps.js'
import { HeldPayload, type SnapshotPayload } from '../embedded/snapshot-stream.js'
import { foldEntry } from '../embedded/fold-client.js'
import { NamespaceLogs } from '../embedded/namespace-logs.js'
import { UnexpectedResponseError, errorMessage, probeHealth, type BackendHealth } from '../errors.js'
import { checkNamespace } from '../namespace.js'
import {
  overlapsTimeRange,
  type EpisodicGraphChange, type EpisodicGraphChangeResult, type EpisodicGraphStore, type GraphFragment, type ProjectionRequest, type TimeRangeMs
} from './port.js'

export interface EmbeddedEpisodicGraphStoreOptions {
  /**
   * Where the `default` namespace is persisted, e.g. `<dir>/graph.json`: the store kernel keeps
   * `<dir>/graph.snap` and `<dir>/graph.log` (another namespace's under `<dir>/namespaces/<namespace>/`),
   * and a JSON snapshot an earlier version wrote at this path is upgraded in place at first use. Omit for a
   * purely in-memory store.
   */
  file?: string
  /** Compaction floor of each namespace's log, in bytes (see `DurableLog`). Default 1 MiB. */
  compactionFloorBytes?: number
  /**
   * A namespace's log is folded once it holds this many bytes, however large the snapshot (else once it outgrows the
   * snapshot): the fold reads the snapshot a block at a time and holds the log's items (`streaming-fold.ts`), so
   * what a fold holds stays this size as the namespace grows. Default 64 MiB.
   */
  foldLogBytes?: number
}

const BACKEND = 'episodic-graph:memory'
/** The store's payload format in the kernel's files (the snapshot is `Snapshot`, a record an `EpisodicGraphChange`). */
const FORMAT = 1
const KIND = 'episodic-graph'
const encode = (value: unknown): Buffer => Buffer.from(JSON.stringify(value), 'utf8')

const EMPTY = new EpisodicPartition()
const FOLD_LOG_BYTES = 64 * 1_048_576

/**
 * In-memory adjacency, one partition per namespace, each optionally persisted by the store kernel
 * (`providers/embedded/`): every change is one checksummed, fsynced log record, folded into a snapshot
 * when the log outgrows it, so one write costs the same at any size. A JSON snapshot an earlier version
 * wrote (the `file` option's path, and its namesakes under `namespaces/`) is upgraded in place at first use.
 */
export class EmbeddedEpisodicGraphStore implements EpisodicGraphStore {
  readonly backend = 'memory' as const
  private readonly partitions = new Map<string, EpisodicPartition>()
  private loaded: Promise<void> | null = null
  private readonly queue = new TaskQueue('episodic-graph')
  private readonly logs: NamespaceLogs | undefined
  private lastCompactionError: unknown
  private readonly compaction = new BackgroundCompaction(
    foldEntry('fold-thread', import.meta.url), { kind: KIND, format: FORMAT, backend: BACKEND }, (task) => this.queue.runCompaction(task), { blocks: true }
  )

  constructor(options: EmbeddedEpisodicGraphStoreOptions = {}) {
    const file = options.file
    this.logs = file === undefined ? undefined : new NamespaceLogs({
      root: dirname(file), name: basename(file).replace(/\.json$/, ''), kind: KIND, format: FORMAT, backend: BACKEND,
      ...(options.compactionFloorBytes === undefined ? {} : { compactionFloorBytes: options.compactionFloorBytes }),
      compactionCeilingBytes: options.foldLogBytes ?? FOLD_LOG_BYTES,
      legacy: { name: basename(file), upgrade: upgradeLegacy }
    })
  }

  protected load(): Promise<void> {
    this.loaded ??= (async () => {
      if (!this.logs) return
      for (const [namespace, { snapshot, records }] of await this.logs.openAll()) {
        const partition = await runStepsYielding(replay(namespace, snapshot, records))
        if (!partition.empty) this.partitions.set(namespace, partition)
        // a compaction a crash interrupted is finished now
        const log = await this.logs.get(namespace)
        if (log.pendingFold) this.compaction.start(namespace, log)
      }
    })().catch((error: unknown) => {
      this.loaded = null
      throw error
    })
    return this.loaded
  }

  private async partition(namespace: string): Promise<EpisodicPartition> {
    checkNamespace(namespace)
    await this.load()
    return this.partitions.get(namespace) ?? EMPTY
  }

  async apply(namespace: string, change: EpisodicGraphChange): Promise<EpisodicGraphChangeResult> {
    checkNamespace(namespace)
    return this.queue.run(async () => {
      await this.load()
      const partition = this.partitions.get(namespace) ?? new EpisodicPartition()
      // Checked, then logged (durable), then applied: a change that is invalid or cannot be logged
      // changes nothing, and one that was logged applies the same way when the log is replayed.
      partition.check(change)
      const log = this.logs ? await this.logs.get(namespace) : undefined
      await log?.append(encode(change))
      const result = partition.apply(change)
      if (partition.empty) this.partitions.delete(namespace)
      else this.partitions.set(namespace, partition)
      if (log?.needsCompaction()) this.compactSoon(namespace, log)
      return result
    })
  }

  /**
   * Folds the namespace's log into a snapshot off the write queue (`BackgroundCompaction`); an empty
   * namespace has nothing to keep, so its files go instead, in the queue (once any fold under way is done).
   */
  private compactSoon(namespace: string, log: DurableLog): void {
    if (this.partitions.has(namespace)) {
      this.compaction.start(namespace, log)
      return
    }
    void this.queue.runCompaction(async () => {
      await this.compaction.finished(namespace)
      if (!this.partitions.has(namespace)) await log.drop()
    }).catch((error: unknown) => {
      this.lastCompactionError = error
    })
  }

  /** The two phases in process over the namespace's nodes and edges, which already hold every property. */
  async project(namespace: string, request: ProjectionRequest): Promise<GraphFragment> {
    const partition = await this.partition(namespace)
    // one edge object per stored edge across both phases: their merge keeps an edge once by identity
    const memo = new EdgeMemo()
    return projectTwoPhases(async (ids) => partition.oneHop(ids, memo), request)
  }

  async describe(namespace: string, ids: readonly string[]): Promise<GraphFragment> {
    return (await this.partition(namespace)).oneHop(ids)
  }

  async facetLabelEpisodes(namespace: string, labels: readonly string[]): Promise<Map<string, string[]>> {
    const partition = await this.partition(namespace)
    const out = new Map<string, string[]>()
    for (const label of labels) {
      const owners = partition.facetLabelOwners(label)
      if (owners) out.set(label, owners.sort())
    }
    return out
  }

  async episodesInTimeRange(namespace: string, range: TimeRangeMs): Promise<string[]> {
    const partition = await this.partition(namespace)
    return partition.episodesWhere((episode) => overlapsTimeRange(episode, range)).sort()
  }

  async nodeTypes(namespace: string, ids: readonly string[]): Promise<Map<string, string>> {
    const partition = await this.partition(namespace)
    const out = new Map<string, string>()
    for (const id of ids) {
      const type = partition.typeOf(id)
      if (type !== undefined) out.set(id, type)
    }
    return out
  }

  async countByType(namespace: string): Promise<Record<string, number>> {
    return (await this.partition(namespace)).countByType()
  }

  async namespaces(): Promise<string[]> {
    await this.load()
    return [...this.partitions.keys()].sort()
  }

  async dropNamespace(namespace: string): Promise<void> {
    checkNamespace(namespace)
    return this.queue.run(async () => {
      await this.load()
      await this.compaction.finished(namespace)
      await this.logs?.drop(namespace)
      this.partitions.delete(namespace)
    })
  }

  health(): Promise<BackendHealth> {
    return probeHealth(BACKEND, async () => {
      await this.load()
      const failed = this.compaction.lastError ?? this.lastCompactionError
      return failed ? `last compaction failed: ${String(failed)}` : undefined
    })
  }

  async close(): Promise<void> {
    // a write may start a compaction, and a compaction queues a step, so wait until neither moves
    let queue: Promise<unknown> | undefined
    while (queue !== this.queue.tail || !this.compaction.idle) {
      queue = this.queue.tail
      await queue
      await this.compaction.settled()
    }
    await this.logs?.close()
  }
}

/** The namespace's graph from its snapshot and the records since, a step a row and a record (`load-steps.ts`). */
function* replay(namespace: string, snapshot: SnapshotPayload | undefined, records: readonly Buffer[]): LoadSteps<EpisodicPartition> {
  try {
    const partition = !snapshot ? new EpisodicPartition()
      : snapshot.startsWith(HEAD) ? yield* EpisodicPartition.fromRows(snapshotRows(snapshot.blocks()))
      : EpisodicPartition.from(JSON.parse(snapshot.bytes().toString('utf8')) as Snapshot)
    for (const record of records) {
      partition.apply(JSON.parse(record.toString('utf8')) as EpisodicGraphChange)
      yield
    }
    return partition
  } catch (error) {
    // the checksums passed, so the bytes are what was written: a payload this build cannot read
    throw new UnexpectedResponseError(BACKEND, `episodic graph of namespace ${namespace} is unreadable: ${errorMessage(error)}`, { cause: error })
  }
}

/** The next snapshot of a namespace from its last one (held or on disk) and the records since: what `load` builds, as a payload (`fold-thread.ts`). */
export function foldEpisodicGraph(snapshot: SnapshotPayload | Buffer | undefined, records: Buffer[]): Uint8Array {
  return encode(runSteps(replay('(fold)', Buffer.isBuffer(snapshot) ? new HeldPayload(snapshot) : snapshot, records)).toSnapshot())
}

/** A legacy JSON snapshot as a snapshot payload: the same document, checked for its shape. */
function upgradeLegacy(bytes: Buffer): Buffer {
  const snap = JSON.parse(bytes.toString('utf8')) as Snapshot
  if (!Array.isArray(snap.entities) || !Array.isArray(snap.episodes)) throw new Error('entities and episodes must be arrays')
  return encode({ version: 1, entities: snap.entities, episodes: snap.episodes })
}

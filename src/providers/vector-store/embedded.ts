import { randomInt } from 'node:crypto'
import { join } from 'node:path'
import { closeSync, fstat, openSync } from 'node:fs'
import { promisify } from 'node:util'
import { access, constants, link, mkdir, open, rename, rm, rmdir } from 'node:fs/promises'
import { syncDir, writeFileDurably } from '../embedded/durable-file.js'
import { TaskQueue } from '../embedded/task-queue.js'
import { BackendUnavailableError, backendName, UnexpectedResponseError, probeHealth, type BackendHealth } from '../errors.js'
import { checkNamespace, DEFAULT_NAMESPACE, namespaceDir, storedNamespaces } from '../namespace.js'
import { encodeRecord, prepareWrite, toUnit } from './log-codec.js'
import { encodeSnapshot, readSnapshotFile, type SnapshotLayout } from './snapshot-codec.js'
import { writeSnapshotFile } from './snapshot-writer.js'
import { FrozenPartition } from './frozen.js'
import { Collection } from './matrix.js'
import { replayFile } from './log-replay.js'
import { Int8RowPool } from './int8-row-pool.js'
import { RowPool } from './row-pool.js'
import type { SharedRows } from './shared-rows.js'
import type { VectorFilter, VectorHit, VectorPayload, VectorRank, VectorStore, VectorWrite } from './port.js'

export interface EmbeddedVectorStoreOptions {
  /** Folder holding one `<collection>.snap` and one `<collection>.log` per collection; created when needed. */
  dir: string
  /**
   * The log is compacted into a new snapshot once it is larger than the snapshot and than this many bytes.
   * Default 1 MiB (1_048_576); 0 compacts as soon as the log outgrows the snapshot.
   */
  compactionFloorBytes?: number
  /**
   * How vectors are held in memory for the scan: `float32` (default) or `int8` (a quarter of the bytes, with the float32
   * rows in a file of this process under `dir`, read back to score `limit × oversample` candidates exactly; scores are
   * float32's). The files always hold float32 vectors, so either opens a folder the other wrote.
   */
  precision?: VectorPrecision
  /** With `int8`: candidates taken per hit asked (default 4, at least 1). */
  oversample?: number
}

export type VectorPrecision = 'float32' | 'int8'


const BACKEND = backendName('vector-store', 'memory')

/** Per partition (collection, namespace): a queue that serialises changes, and the partition once loaded (`null`: absent). */
interface Slot {
  queue: TaskQueue
  state: Collection | null | undefined
  /** The partition's compaction, from the write that asks for it until it is done or given up; at most one. */
  compaction?: Promise<void>
  /** Whether that compaction has set the log aside (until it is done or given up): a drop waits for it. */
  folding?: boolean
}

/**
 * Exact cosine search over unit vectors, persisted under `dir`.
 *
 * Partitions: each (collection, namespace) has its own records, snapshot and log, so a search in one namespace scans
 * only that namespace's vectors. In memory a namespace's partitions (of one dimension) share one pool of rows
 * (row-pool.ts) holding each distinct vector once: a derived Episode's records take their chunk's vector, and hold a
 * reference to the chunk's row instead of a copy. The files keep every record's vector. The `default` namespace keeps the file names a
 * store without namespaces wrote (`dir/<collection>.snap` and `.log`), so such a folder opens with
 * everything in `default`, untouched; another namespace lives under `dir/namespaces/<namespace>/`. The
 * default partition's snapshot also marks that the collection exists, and holds its dimension.
 *
 * Durability: every `write` is one length-prefixed, CRC-32-checked record appended to the partition's log and
 * fsynced before the promise resolves. Opening replays the log over the snapshot; a torn or corrupt record
 * ends the replay and is cut off, so a write is either wholly present or wholly absent after a crash.
 *
 * Compaction, off the write queue (issue 44: at a million chunks a snapshot is gigabytes, and a write waited for its
 * encoding and its fsync for up to 108 s): when the log outgrows the snapshot, on the queue, the log is linked aside as
 * `<collection>.fold.log`, an empty one (made beforehand) renamed over it, and the partition copied as it stands
 * (`FrozenPartition`: references, its rows held); off the queue, the copy's snapshot is written to
 * `<collection>.snap.fold.tmp` a slice at a time while writes go on into the new log; on the queue again it is renamed
 * over the snapshot and every record not written since reads its payload from it; off the queue, the set-aside log is
 * removed. Opening replays the snapshot, the set-aside log, then the log, each record once (by its sequence number); a
 * set-aside log whose records the snapshot lacks (a crash before the rename) is folded into a snapshot there and then,
 * the old way (the whole partition encoded and written on the queue), as is one a failed compaction left.
 */
export class EmbeddedVectorStore implements VectorStore {
  readonly backend = 'memory' as const
  private readonly dir: string
  private readonly compactionFloorBytes: number
  private readonly slots = new Map<string, Slot>()
  /** Per namespace and dimension: the rows its partitions' vectors share. */
  private readonly pools = new Map<string, SharedRows>()
  private readonly precision: VectorPrecision
  private readonly oversample: number
  private closed = false
  private lastCompactionError: unknown

  constructor(options: EmbeddedVectorStoreOptions) {
    this.dir = options.dir
    this.compactionFloorBytes = options.compactionFloorBytes ?? 1_048_576
    this.precision = options.precision ?? 'float32'
    this.oversample = options.oversample ?? 4
    if (!(this.oversample >= 1)) throw new RangeError(`oversample must be at least 1, got ${this.oversample}`)
  }

  async ensureCollection(collection: string, dimensions: number): Promise<void> {
    if (!Number.isInteger(dimensions) || dimensions <= 0) {
      throw new RangeError(`dimensions must be a positive integer, got ${dimensions}`)
    }
    await this.exclusive(collection, DEFAULT_NAMESPACE, async (slot) => {
      const existing = await this.load(collection, DEFAULT_NAMESPACE, slot)
      if (existing) {
        if (existing.dims !== dimensions) {
          throw new RangeError(
            `collection ${collection} has ${existing.dims} dimensions, not ${dimensions}`
          )
        }
        return
      }
      slot.state = await this.create(collection, DEFAULT_NAMESPACE, dimensions)
    })
  }

  async write(collection: string, namespace: string, change: VectorWrite): Promise<void> {
    checkNamespace(namespace)
    await this.exclusive(collection, namespace, async (slot) => {
      let c = await this.load(collection, namespace, slot)
      // the default partition marks the collection and holds its dimension
      const marker = c ?? (namespace === DEFAULT_NAMESPACE ? null : await this.loaded(collection, DEFAULT_NAMESPACE))
      if (!marker) throw new Error(`vector collection ${collection} does not exist; call ensureCollection first`)
      if (c?.broken) throw new BackendUnavailableError(BACKEND, c.broken.message, { cause: c.broken })
      const decoded = prepareWrite(marker.dims, (c?.seq ?? 0) + 1, change)
      if (decoded.records.length === 0 && (decoded.deleteDocIds.length === 0 || !c)) return
      // a namespace's partition is made by its first upsert, never by a read or a delete
      if (!c) {
        c = slot.state = await this.create(collection, namespace, marker.dims)
        decoded.seq = c.seq + 1
      }
      // room first, so that applying the write after it is durable cannot fail half-way
      try {
        c.reserve(decoded.records.length)
      } catch (error) {
        throw new BackendUnavailableError(BACKEND, `no memory for ${decoded.records.length} more vectors`, { cause: error })
      }
      const record = encodeRecord(decoded, c.dims)
      const log = c.log!
      const where = partitionName(collection, namespace)
      try {
        await log.appendFile(record)
        await log.datasync()
      } catch (error) {
        try {
          await log.truncate(c.logBytes)
          await log.datasync()
        } catch (rollbackError) {
          c.broken = new Error(`log of ${where} could not be rolled back after a failed append`, {
            cause: rollbackError
          })
        }
        throw new BackendUnavailableError(BACKEND, `append to the log of ${where} failed`, { cause: error })
      }
      c.logBytes += record.length
      try {
        c.apply(decoded)
      } catch (error) {
        // durable but not applied (an int8 pool's float file could not be written): the files stay right, memory does not
        c.broken = new Error(`write to ${where} is in its log but could not be applied in memory; restart the service`, { cause: error })
        throw new BackendUnavailableError(BACKEND, c.broken.message, { cause: error })
      }
      // not awaited by this write, which is already durable in the log
      if (c.logBytes > Math.max(c.snapshotBytes, this.compactionFloorBytes) && !slot.compaction) this.startCompaction(collection, namespace, slot, c)
    })
  }

  async search(collection: string, namespace: string, vector: Float32Array, limit: number, filter?: VectorFilter): Promise<VectorHit[]> {
    const c = await this.searchable(collection, namespace, vector)
    return c ? c.search(toUnit(vector, 'query'), limit, filter) : []
  }

  async rank(collection: string, namespace: string, vector: Float32Array, limit: number, filter?: VectorFilter): Promise<VectorRank[]> {
    const c = await this.searchable(collection, namespace, vector)
    return c ? c.rank(toUnit(vector, 'query'), limit, filter) : []
  }

  /** The partition a query searches (undefined when absent), once the query's dimension is checked against it. */
  private async searchable(collection: string, namespace: string, vector: Float32Array): Promise<Collection | undefined> {
    const c = await this.loaded(collection, checkNamespace(namespace))
    if (c && vector.length !== c.dims) {
      throw new RangeError(`query has ${vector.length} dimensions, collection ${collection} has ${c.dims}`)
    }
    return c ?? undefined
  }

  async *scroll(collection: string, namespace: string, docIds?: readonly string[]): AsyncIterable<{ id: string; payload: VectorPayload }> {
    const c = await this.loaded(collection, checkNamespace(namespace))
    if (!c) return
    const owners = docIds ? new Set(docIds) : undefined
    // taken now: writes while the caller iterates move records around
    const rows: { id: string; payload: () => VectorPayload }[] = []
    const take = (): void => {
      if (owners) {
        for (const docId of owners) for (const n of c.recordsOfDoc.numbersOf(docId)) rows.push({ id: c.ids.at(n), payload: c.pinPayload(n) })
        return
      }
      for (let row = 0; row < c.size; row++) rows.push({ id: c.ids.at(row), payload: c.pinPayload(row) })
    }
    // a whole partition is read in order; a few documents' records are read one by one
    if (owners) take()
    else c.payloads.inOrder(take)
    rows.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    for (const { id, payload } of rows) yield { id, payload: payload() }
  }

  /** The partition's sequence number (each partition made starts its own at random) and its record count. */
  async stamp(collection: string, namespace: string): Promise<string | undefined> {
    const c = await this.loaded(collection, checkNamespace(namespace))
    return c ? `${c.seq}:${c.size}` : undefined
  }

  async vectorsOf(collection: string, namespace: string, ids: readonly string[]): Promise<Map<string, Float32Array>> {
    const out = new Map<string, Float32Array>()
    const c = await this.loaded(collection, checkNamespace(namespace))
    if (!c) return out
    for (const id of ids) {
      const index = c.ids.indexOf(id)
      if (index >= 0) out.set(id, c.vectorAt(index))
    }
    return out
  }

  async count(collection: string, namespace: string): Promise<number> {
    return (await this.loaded(collection, checkNamespace(namespace)))?.size ?? 0
  }

  /** Every record here is filed under its namespace: none is a legacy one. */
  async legacyRecords(_collection: string): Promise<number> {
    return 0
  }

  async adoptLegacyRecords(_collection: string): Promise<number> {
    return 0
  }

  async namespaces(collection: string): Promise<string[]> {
    const out: string[] = []
    for (const namespace of await this.partitionsOf(collection)) {
      if (((await this.loaded(collection, namespace))?.size ?? 0) > 0) out.push(namespace)
    }
    return out
  }

  async dropNamespace(collection: string, namespace: string): Promise<void> {
    checkNamespace(namespace)
    await this.exclusiveWithoutFold(collection, namespace, async (slot) => {
      const c = await this.load(collection, namespace, slot)
      if (!c) return
      if (namespace === DEFAULT_NAMESPACE) {
        // the default partition's snapshot marks the collection: it becomes empty, and stays
        await this.io(async () => {
          await c.log?.close()
          slot.state = null
          this.release(namespace, c)
          slot.state = await this.create(collection, namespace, c.dims)
        })
        return
      }
      slot.state = null
      this.release(namespace, c)
      await this.removeFiles(collection, namespace, c)
    })
  }

  async dropCollection(collection: string): Promise<void> {
    // other namespaces first: the default partition marks the collection, so it goes last
    const namespaces = (await this.partitionsOf(collection)).filter((ns) => ns !== DEFAULT_NAMESPACE)
    for (const namespace of [...namespaces, DEFAULT_NAMESPACE]) {
      await this.exclusiveWithoutFold(collection, namespace, async (slot) => {
        const c = await this.load(collection, namespace, slot)
        slot.state = null
        if (c) this.release(namespace, c)
        await this.removeFiles(collection, namespace, c)
      })
    }
  }

  health(): Promise<BackendHealth> {
    return probeHealth(BACKEND, async () => {
      if (this.closed) throw new Error('store is closed')
      await mkdir(this.dir, { recursive: true })
      await access(this.dir, constants.R_OK | constants.W_OK)
      return this.lastCompactionError ? `last compaction failed: ${String(this.lastCompactionError)}` : undefined
    })
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    for (const slot of this.slots.values()) {
      // a write may start a compaction, which queues its steps, so wait until neither moves
      let chain: Promise<unknown> | undefined
      let compaction: Promise<void> | undefined
      while (chain !== slot.queue.tail || compaction !== slot.compaction) {
        chain = slot.queue.tail
        compaction = slot.compaction
        await chain.catch(() => undefined)
        await compaction
      }
      await slot.state?.log?.close()
      slot.state?.payloads.closeStored()
    }
    for (const pool of this.pools.values()) pool.close()
    this.pools.clear()
  }

  /** The namespaces with a partition of `collection`, on disk or in memory (empty ones included), ascending. */
  private async partitionsOf(collection: string): Promise<string[]> {
    const found = new Set<string>()
    for (const [key, slot] of this.slots) {
      const [namespace, name] = splitKey(key)
      if (name === collection && slot.state) found.add(namespace)
    }
    const stem = fileStem(collection)
    await this.io(async () => {
      if (await exists(join(this.dir, `${stem}.snap`))) found.add(DEFAULT_NAMESPACE)
      for (const namespace of await storedNamespaces(this.dir)) {
        if (await exists(join(namespaceDir(this.dir, namespace), `${stem}.snap`))) found.add(namespace)
      }
    })
    return [...found].sort()
  }

  /** A new, empty partition on disk: its snapshot, then an empty log. */
  private async create(collection: string, namespace: string, dimensions: number): Promise<Collection> {
    const created = new Collection(dimensions, this.poolOf(namespace, dimensions))
    // A new partition's writes are numbered from a random start, not from 0: a partition dropped and written again
    // then never repeats a stamp (`stamp`) of the one before, so a copy kept of the old records is never taken as current.
    created.seq = randomInt(1, 2 ** 31) * 2 ** 21
    await this.io(async () => {
      const dir = this.partitionDir(namespace)
      await mkdir(dir, { recursive: true })
      // a log left by a crash during an earlier drop must not be replayed into the new partition
      await rm(this.logPath(collection, namespace), { force: true })
      await rm(this.foldLogPath(collection, namespace), { force: true })
      created.snapshotBytes = await this.writeSnapshot(collection, namespace, created)
      created.log = await open(this.logPath(collection, namespace), 'a')
      await syncDir(dir)
    })
    return created
  }

  private async removeFiles(collection: string, namespace: string, c: Collection | null): Promise<void> {
    await this.io(async () => {
      await c?.log?.close()
      // the snapshot marks existence, so it goes first; a log without a snapshot is an orphan
      await rm(this.snapshotPath(collection, namespace), { force: true })
      await rm(this.logPath(collection, namespace), { force: true })
      await rm(this.foldLogPath(collection, namespace), { force: true })
      await rm(this.foldSnapshotPath(collection, namespace), { force: true })
      await rm(`${this.logPath(collection, namespace)}.next`, { force: true })
      if (namespace !== DEFAULT_NAMESPACE) {
        // the namespace's folder goes with its last partition
        await rmdir(this.partitionDir(namespace)).catch((e: NodeJS.ErrnoException) => {
          if (e.code !== 'ENOENT' && e.code !== 'ENOTEMPTY' && e.code !== 'EEXIST') throw e
        })
      }
    })
  }

  private poolOf(namespace: string, dims: number): SharedRows {
    const key = `${namespace}\u0000${dims}`
    let pool = this.pools.get(key)
    if (!pool) {
      const floatStride = Math.ceil(dims / 8) * 8
      pool = this.precision === 'int8' ? new Int8RowPool(dims, floatStride, this.oversample, this.dir) : new RowPool(dims, floatStride)
      this.pools.set(key, pool)
    }
    return pool
  }

  /**
   * Gives a dropped partition's rows back (its slot already emptied); a pool that holds no row and that no loaded
   * partition uses goes, with its memory and its file; one that empty partitions still use (the default namespace's,
   * which mark their collections) gives its memory back.
   */
  private release(namespace: string, c: Collection): void {
    c.releaseAll()
    if (c.pool.live > 0) return
    if ([...this.slots.values()].some((slot) => slot.state?.pool === c.pool)) c.pool.shrinkWhenEmpty()
    else if (this.pools.delete(`${namespace}\u0000${c.dims}`)) c.pool.close()
  }

  private slot(collection: string, namespace: string): Slot {
    if (this.closed) throw new BackendUnavailableError(BACKEND, 'vector store is closed')
    const key = slotKey(collection, namespace)
    let slot = this.slots.get(key)
    if (!slot) this.slots.set(key, (slot = { queue: new TaskQueue('vector-store'), state: undefined }))
    return slot
  }

  /** Runs `task` after every earlier change to the partition has settled. */
  private exclusive<T>(collection: string, namespace: string, task: (slot: Slot) => Promise<T>): Promise<T> {
    const slot = this.slot(collection, namespace)
    return slot.queue.run(() => task(slot))
  }

  /** {@link exclusive}, once no compaction of the partition has its log set aside (one that has is waited for). */
  private async exclusiveWithoutFold<T>(collection: string, namespace: string, task: (slot: Slot) => Promise<T>): Promise<T> {
    for (;;) {
      await this.slot(collection, namespace).compaction
      const done = await this.exclusive(collection, namespace, async (slot) => (slot.folding ? undefined : { value: await task(slot) }))
      if (done) return done.value
    }
  }

  private async loaded(collection: string, namespace: string): Promise<Collection | null> {
    const slot = this.slot(collection, namespace)
    if (slot.state !== undefined) return slot.state
    return this.exclusive(collection, namespace, (s) => this.load(collection, namespace, s))
  }

  private async load(collection: string, namespace: string, slot: Slot): Promise<Collection | null> {
    if (slot.state !== undefined) return slot.state
    slot.state = await this.io(() => this.read(collection, namespace))
    return slot.state
  }

  private async read(collection: string, namespace: string): Promise<Collection | null> {
    let fd: number
    try {
      fd = openSync(this.snapshotPath(collection, namespace), 'r')
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null
      throw e
    }
    let c: Collection
    try {
      const { size } = await promisify(fstat)(fd)
      c = await readSnapshotFile(fd, size, partitionName(collection, namespace), (dims) => this.poolOf(namespace, dims))
      c.snapshotBytes = size
    } catch (error) {
      closeSync(fd)
      throw error
    }
    // a log set aside for a compaction, then the log: records up to the snapshot's sequence number are in it already (a
    // crash between a snapshot's rename and the removal or truncation of the log it holds)
    const setAside = await replayFile(c, this.foldLogPath(collection, namespace))
    if (setAside) c.foldPending = setAside.applied > 0
    const logPath = this.logPath(collection, namespace)
    const { end: offset, size: logBytes } = (await replayFile(c, logPath)) ?? { end: 0, size: 0 }
    c.log = await open(logPath, 'a')
    if (offset < logBytes) {
      // a torn tail: the write it held never resolved, so it is dropped
      await c.log.truncate(offset)
      await c.log.datasync()
    }
    c.logBytes = offset
    // a compaction's snapshot a crash left before its rename, or the empty log before its
    await rm(this.foldSnapshotPath(collection, namespace), { force: true })
    await rm(`${logPath}.next`, { force: true })
    if (c.foldPending) await this.compact(collection, namespace, c)
    else if (setAside) {
      await rm(this.foldLogPath(collection, namespace))
      await syncDir(this.partitionDir(namespace))
    }
    return c
  }

  /**
   * Starts the partition's compaction off its queue (the class comment); the caller does not wait for it. On the queue
   * are only the log's swap (a link, a rename, one fsync of the folder) with the partition's copy, and the new snapshot's
   * rename with the records' re-pointing at it: a write waits for nothing else.
   */
  private startCompaction(collection: string, namespace: string, slot: Slot, c: Collection): void {
    const dir = this.partitionDir(namespace)
    const empty = `${this.logPath(collection, namespace)}.next`
    const temp = this.foldSnapshotPath(collection, namespace)
    const run = async (): Promise<void> => {
      // the next log, made and synced beforehand
      await this.io(async () => {
        const handle = await open(empty, 'w')
        await handle.sync().finally(() => handle.close())
      })
      // the store may be closing: its own queued steps still run
      const frozen = await slot.queue.runCompaction(async () => (slot.state === c && !c.broken ? this.setLogAside(collection, namespace, slot, c, empty) : undefined))
        .finally(() => rm(empty, { force: true }))
      if (!frozen) return
      try {
        // the copy's rows and its descriptor of the snapshot replaced are not needed after (its ids are)
        const layout = await this.io(() => writeSnapshotFile(temp, frozen)).finally(() => frozen.release())
        // renamed and pointed at together, so that the file replaced is let go as it goes
        const inPlace = await slot.queue.runCompaction(async () => {
          if (slot.state !== c) return false
          await this.io(() => rename(temp, this.snapshotPath(collection, namespace)))
          c.snapshotBytes = layout.length
          this.pointAtNewSnapshot(collection, namespace, c, frozen, layout)
          return true
        })
        if (!inPlace) return
        await this.io(async () => {
          await syncDir(dir)
          // the snapshot is in place for good: the set-aside log's records are in it (should its removal be lost in a
          // crash, opening removes it again)
          c.foldPending = false
          await rm(this.foldLogPath(collection, namespace), { force: true })
        })
      } finally {
        c.changedSinceFold = undefined
        await rm(temp, { force: true }).catch(() => undefined)
        slot.folding = false
      }
    }
    slot.compaction = run()
      .catch((e: unknown) => {
        this.lastCompactionError = e
      })
      .finally(() => {
        slot.compaction = undefined
      })
  }

  /**
   * On the queue: sets the log aside and puts `empty` (an empty file, synced) in its place, and answers the partition's
   * copy to write a snapshot of. After a compaction that did not finish, compacts on the queue instead (its set-aside log
   * must not be overwritten).
   */
  private async setLogAside(collection: string, namespace: string, slot: Slot, c: Collection, empty: string): Promise<FrozenPartition | undefined> {
    if (c.foldPending) {
      await this.compact(collection, namespace, c)
      return undefined
    }
    const logPath = this.logPath(collection, namespace)
    const setAside = this.foldLogPath(collection, namespace)
    await this.io(async () => {
      // the log keeps its name throughout: linked aside, then the empty one renamed over it (a crash in between leaves
      // both names on the same records, each replayed once)
      await rm(setAside, { force: true }) // one whose records a snapshot holds, left by a failure after the rename
      await link(logPath, setAside)
      let log
      try {
        await rename(empty, logPath)
        log = await open(logPath, 'a')
        // the swap is durable before a write to the new log is acknowledged
        await syncDir(this.partitionDir(namespace))
      } catch (error) {
        // the old log back under its name (its handle still writes to it; a rename onto the same file does nothing, so
        // the second name goes too), or no more writes
        await log?.close()
        await rename(setAside, logPath)
          .then(() => rm(setAside, { force: true }))
          .catch((rollbackError: unknown) => {
            c.broken = new Error(`log of ${partitionName(collection, namespace)} was set aside and could not be put back`, { cause: rollbackError })
          })
        throw error
      }
      c.foldPending = true
      await c.log!.close()
      c.log = log
      c.logBytes = 0
    })
    c.changedSinceFold = new Set()
    try {
      const frozen = FrozenPartition.of(c, () => openSync(this.snapshotPath(collection, namespace), 'r'))
      slot.folding = true
      return frozen
    } catch (error) {
      c.changedSinceFold = undefined
      throw error
    }
  }

  /** On the queue, once the snapshot written from `frozen` is in place: the records not written since read from it. */
  private pointAtNewSnapshot(collection: string, namespace: string, c: Collection, frozen: FrozenPartition, layout: SnapshotLayout): void {
    const stored = frozen.ids.length > 0 ? { fd: openSync(this.snapshotPath(collection, namespace), 'r'), at: layout.payloadsAt, ends: layout.ends } : undefined
    c.payloadsStoredAgain(frozen.ids, stored)
  }

  /** Compacts on the queue: the whole partition encoded at once and written (with a log set aside, if any, folded in). */
  private async compact(collection: string, namespace: string, c: Collection): Promise<void> {
    await this.io(async () => {
      c.snapshotBytes = await this.writeSnapshot(collection, namespace, c)
      if (c.foldPending) {
        await rm(this.foldLogPath(collection, namespace), { force: true })
        await syncDir(this.partitionDir(namespace))
        c.foldPending = false
      }
      await c.log!.truncate(0)
      await c.log!.datasync()
      c.logBytes = 0
    })
  }

  /** Writes the snapshot to a temp file, fsyncs it, renames it into place and fsyncs the folder. */
  private async writeSnapshot(collection: string, namespace: string, c: Collection): Promise<number> {
    const { bytes, payloadsAt, ends } = encodeSnapshot(c)
    const path = this.snapshotPath(collection, namespace)
    await writeFileDurably(path, bytes)
    // the payloads are read from the new file from now on: the one they were read from (renamed over) can go
    if (c.size > 0) c.payloads.storedAs({ fd: openSync(path, 'r'), at: payloadsAt, ends })
    return bytes.length
  }

  /** Maps file-system failures onto the provider errors; our own errors pass through. */
  private async io<T>(task: () => Promise<T>): Promise<T> {
    try {
      return await task()
    } catch (error) {
      if (error instanceof UnexpectedResponseError || error instanceof BackendUnavailableError) throw error
      throw new BackendUnavailableError(BACKEND, `vector store file operation failed: ${String(error)}`, {
        cause: error
      })
    }
  }

  private partitionDir(namespace: string): string {
    return namespaceDir(this.dir, namespace)
  }

  private snapshotPath(collection: string, namespace: string): string {
    return join(this.partitionDir(namespace), `${fileStem(collection)}.snap`)
  }

  private logPath(collection: string, namespace: string): string {
    return join(this.partitionDir(namespace), `${fileStem(collection)}.log`)
  }

  private foldLogPath(collection: string, namespace: string): string {
    return join(this.partitionDir(namespace), `${fileStem(collection)}.fold.log`)
  }

  private foldSnapshotPath(collection: string, namespace: string): string {
    return `${this.snapshotPath(collection, namespace)}.fold.tmp`
  }
}

const slotKey = (collection: string, namespace: string): string => `${namespace}\u0000${collection}`

function splitKey(key: string): [namespace: string, collection: string] {
  const at = key.indexOf('\u0000')
  return [key.slice(0, at), key.slice(at + 1)]
}

/** How errors name a partition: the collection, with its namespace unless it is `default`. */
const partitionName = (collection: string, namespace: string): string =>
  namespace === DEFAULT_NAMESPACE ? collection : `${collection} (namespace ${namespace})`

async function exists(path: string): Promise<boolean> {
  return access(path).then(() => true, (e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT') return false
    throw e
  })
}

/** A collection name as a file name: percent-encoded, dots included, so `..` or `/` cannot escape `dir`. */
function fileStem(collection: string): string {
  if (collection.length === 0) throw new RangeError('collection name must not be empty')
  return encodeURIComponent(collection).replace(/[.!'()*~]/g, (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`)
}

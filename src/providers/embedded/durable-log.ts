import { mkdir, open, readFile, rename, rm, stat } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { BackendUnavailableError, ProviderError, UnexpectedResponseError, errorMessage } from '../errors.js'
import { syncDir, writeFileDurably } from './durable-file.js'
import { checkHeader, encodeHeader, type FileIdentity } from './file-header.js'
import { encodeFrame, readFrameAt } from './frame.js'
import { readSnapshotHead, StoredSnapshot } from './snapshot-stream.js'

export interface DurableLogOptions extends FileIdentity {
  /** The backend name errors carry (`knowledge-graph:memory`); every failure is a ProviderError of it (503). */
  backend: string
  /** The folder of the store's files for one namespace; created at the first append. */
  dir: string
  /** File stem: the store keeps `<name>.snap` and `<name>.log` in `dir`. */
  name: string
  /** True when `dir` holds this store's files alone, so `drop()` removes the folder too. */
  ownsDir?: boolean
  /**
   * A file an earlier version of the store wrote (whole-state JSON), read once at open when neither
   * snapshot nor log exists: `upgrade` turns its bytes into a snapshot payload, which is written in the
   * kernel's format before the old file is removed.
   */
  legacy?: { file: string; upgrade(bytes: Buffer): Uint8Array }
  /** The log is worth compacting once it holds more than this many bytes and than the snapshot. Default 1 MiB. */
  compactionFloorBytes?: number
  /**
   * The log is worth compacting once it holds more than this many bytes (and than the floor) even while the snapshot
   * is larger: for a store whose fold holds the log's changes and reads the snapshot a block at a time, so that what a
   * fold holds stays bounded as the namespace grows. Default none (the snapshot's size alone).
   */
  compactionCeilingBytes?: number
}

/** What `open` found on disk: the snapshot's payload (none when there is none, or it is empty) and the records after it, oldest first. */
export interface Recovered {
  snapshot: StoredSnapshot | undefined
  records: Buffer[]
}

/** A log set aside to be folded into the next snapshot, off the write queue (`beginCompaction`). */
export interface PendingFold {
  snapshotFile: string
  foldFile: string
  /** The sequence number of the fold file's last record: the new snapshot's. */
  seq: number
}

const SEQ_BYTES = 8

/**
 * One namespace's files of one embedded store: a snapshot of its whole state and an append-only log of
 * the changes since, both behind a checked header (`file-header.ts`).
 *
 * - `append` writes one checksummed record holding the next sequence number and fsyncs it before it
 *   resolves. `compact` writes the state as a new snapshot (temporary file, fsync, rename, fsync the
 *   folder) that records the last sequence number, then empties the log. `drop` removes everything.
 * - Compaction off the write queue, for states too large to encode between two writes: `beginCompaction`
 *   renames the log to `<name>.fold.log` and starts an empty one (appends go on at once); the store builds
 *   the snapshot from the files (`compaction-worker.ts`, in a thread) and `finishCompaction` puts it in
 *   place and removes the fold file. The fold file stays until its records are in a snapshot.
 * - `open` reads the snapshot, then the fold file's and the log's records whose sequence number is above
 *   the snapshot's (so a crash between a snapshot's rename and the removal of the records it holds
 *   applies nothing twice); a torn or corrupt tail ends the log there and is cut off, everything before it
 *   is kept. A damaged snapshot, records that start after records no snapshot holds, or a file of another
 *   format is refused, never misread.
 * - Calls must not overlap, except `append` with a compaction begun and not yet finished (they write
 *   different files): the store serialises them. No file is held open between calls.
 */
export class DurableLog {
  private seq = 0
  private logBytes = 0
  private headerBytes = 0
  private snapshotBytes = 0
  private exists = false
  /** A failed append may have left bytes past `logBytes`; they are cut before the next one. */
  private dirty = false
  private closed = false
  private fold: PendingFold | undefined

  private constructor(private readonly options: DurableLogOptions) {}

  get snapshotFile(): string {
    return join(this.options.dir, `${this.options.name}.snap`)
  }

  get logFile(): string {
    return join(this.options.dir, `${this.options.name}.log`)
  }

  get foldFile(): string {
    return join(this.options.dir, `${this.options.name}.fold.log`)
  }

  /** A fold begun and not finished (also one a crash left behind, found at open). */
  get pendingFold(): PendingFold | undefined {
    return this.fold
  }

  /** Reads (and repairs) what is on disk; creates nothing unless it upgrades a legacy file. */
  static async open(options: DurableLogOptions): Promise<{ log: DurableLog } & Recovered> {
    const log = new DurableLog(options)
    const recovered = await log.io('open', () => log.recover())
    return { log, ...recovered }
  }

  /** Appends one record and makes it durable; the store applies the change only once this resolves. */
  async append(payload: Uint8Array): Promise<void> {
    this.checkOpen()
    await this.io('append to', async () => {
      if (!this.exists) await this.create()
      const body = Buffer.alloc(SEQ_BYTES + payload.length)
      body.writeDoubleLE(this.seq + 1, 0)
      body.set(payload, SEQ_BYTES)
      const frame = encodeFrame(body)
      const handle = await open(this.logFile, 'r+')
      try {
        if (this.dirty) await handle.truncate(this.logBytes)
        this.dirty = true
        await handle.write(frame, 0, frame.length, this.logBytes)
        await handle.datasync()
        this.dirty = false
      } finally {
        await handle.close()
      }
      this.logBytes += frame.length
      this.seq += 1
    })
  }

  /** True once the log holds more bytes than the compaction floor and than the snapshot (or the ceiling, when lower). */
  needsCompaction(): boolean {
    const floor = this.options.compactionFloorBytes ?? 1_048_576
    const ceiling = this.options.compactionCeilingBytes ?? Infinity
    return this.logBytes - this.headerBytes > Math.max(floor, Math.min(this.snapshotBytes, ceiling))
  }

  /** Bytes of log records not yet folded into a snapshot. */
  get pendingLogBytes(): number {
    return this.logBytes - this.headerBytes
  }

  /**
   * Sets the log's records aside for a fold and starts an empty log, so that appends go on while the fold
   * runs. Answers the fold to run: a new one, or one begun earlier and not finished (it is retried; the
   * log is left as it is).
   */
  async beginCompaction(): Promise<PendingFold | undefined> {
    this.checkOpen()
    if (this.fold) return this.fold
    if (!this.exists || this.seq === 0 || this.logBytes === this.headerBytes) return undefined
    return this.io('set aside the log of', async () => {
      if (this.dirty) {
        await truncateDurably(this.logFile, this.logBytes)
        this.dirty = false
      }
      await rename(this.logFile, this.foldFile)
      // the new log's durable write fsyncs the folder, which makes the rename durable too
      await this.createLog()
      this.fold = { snapshotFile: this.snapshotFile, foldFile: this.foldFile, seq: this.seq }
      return this.fold
    })
  }

  /**
   * Puts in place the snapshot a fold wrote and synced to `written` (beside the snapshot: `encodeSnapshotFile` of
   * the state at `fold.seq`), then removes the fold file.
   */
  async finishCompaction(fold: PendingFold, written: { file: string; bytes: number }): Promise<void> {
    this.checkOpen()
    if (this.fold !== fold) throw new RangeError('that fold is not the pending one')
    await this.io('compact', async () => {
      await rename(written.file, this.snapshotFile)
      await syncDir(this.options.dir)
      this.snapshotBytes = written.bytes
      this.fold = undefined
      await rm(this.foldFile, { force: true })
      await syncDir(this.options.dir)
    })
  }

  /** Folds the log into a snapshot of `state`, which must be the state after every appended record. */
  async compact(state: Uint8Array): Promise<void> {
    this.checkOpen()
    if (this.fold) throw new RangeError('a fold is pending: finish it first')
    if (state.length === 0) throw new RangeError('a snapshot payload must not be empty (empty means dropped)')
    await this.io('compact', () => this.writeSnapshotAndTruncate(state))
  }

  /**
   * Removes the namespace's files. An empty snapshot first replaces the state, so a crash part-way leaves
   * the old state whole or nothing, never the snapshot without its log.
   */
  async drop(): Promise<void> {
    this.checkOpen()
    await this.io('drop', async () => {
      if (!this.exists) return
      await this.writeSnapshotAndTruncate(new Uint8Array(0))
      await rm(this.foldFile, { force: true })
      this.fold = undefined
      await rm(this.logFile, { force: true })
      await rm(this.snapshotFile, { force: true })
      if (this.options.ownsDir) await rm(this.options.dir, { recursive: true, force: true })
      await syncDir(this.options.ownsDir ? dirname(this.options.dir) : this.options.dir)
      this.exists = false
      this.seq = 0
      this.logBytes = this.headerBytes = this.snapshotBytes = 0
    })
  }

  close(): Promise<void> {
    this.closed = true
    return Promise.resolve()
  }

  private checkOpen(): void {
    if (this.closed) throw new BackendUnavailableError(this.options.backend, `${this.options.name} in ${this.options.dir} is closed`)
  }

  private async recover(): Promise<Recovered> {
    const { backend } = this.options
    const found = await this.readSnapshot()
    const hasSnapshot = found !== undefined
    let snapshot = found
    const snapshotSeq = found?.head.seq ?? 0

    // a fold's snapshot a crash left before its rename: the fold is run again
    await rm(`${this.snapshotFile}.fold.tmp`, { force: true })
    await rm(`${this.snapshotFile}.fold.tmp.rows`, { force: true })
    await rm(`${this.snapshotFile}.fold.tmp.shares`, { force: true })
    const records: Buffer[] = []
    this.seq = snapshotSeq
    const chain: RecordChain = { snapshotSeq, hasSnapshot, previous: -1 }
    const foldBytes = await readIfExists(this.foldFile)
    if (foldBytes) {
      const read = readRecords(foldBytes, this.foldFile, chain, this.options, backend)
      if (read.end < foldBytes.length) {
        throw new UnexpectedResponseError(backend, `${this.foldFile} is refused: a record in it is damaged (checksum or length), and a log continues after it`)
      }
      records.push(...read.records)
      if (chain.previous > snapshotSeq) this.fold = { snapshotFile: this.snapshotFile, foldFile: this.foldFile, seq: chain.previous }
      else await rm(this.foldFile) // a crash after the snapshot that holds its records was in place
    }
    const logBytes = await readIfExists(this.logFile)
    if (logBytes) {
      const read = readRecords(logBytes, this.logFile, chain, this.options, backend)
      this.headerBytes = read.headerBytes
      records.push(...read.records)
      if (read.end < logBytes.length) {
        // a torn or corrupt tail: the append it held never resolved, so it is cut off
        await truncateDurably(this.logFile, read.end)
      }
      this.logBytes = read.end
    }
    this.seq = Math.max(snapshotSeq, chain.previous)

    const legacy = this.options.legacy
    if (legacy) {
      // an upgrade interrupted after the new log was made and before the snapshot left a log with no records
      const old = !hasSnapshot && records.length === 0 ? await readIfExists(legacy.file) : undefined
      if (old) {
        let payload: Uint8Array
        try {
          payload = legacy.upgrade(old)
        } catch (error) {
          throw new UnexpectedResponseError(backend, `${legacy.file} cannot be upgraded: ${errorMessage(error)}`, { cause: error })
        }
        await this.create(payload)
        await rm(legacy.file)
        await syncDir(dirname(legacy.file))
        return { snapshot: await this.readSnapshot(), records: [] }
      }
      // an upgrade interrupted after its snapshot was written: the old file is already folded in
      if (hasSnapshot) await rm(legacy.file, { force: true })
    }

    this.exists = hasSnapshot || Boolean(logBytes || foldBytes)
    if ((hasSnapshot || foldBytes) && !logBytes) await this.createLog()
    if (snapshot?.head.payloadBytes === 0) snapshot = undefined
    return { snapshot, records }
  }

  /**
   * The snapshot file's head, its payload's checksum checked a block at a time (none when there is no file): the
   * payload is not kept, since one past V8's longest string or buffer must still be read a row at a time.
   */
  private async readSnapshot(): Promise<StoredSnapshot | undefined> {
    const { backend } = this.options
    const exists = await stat(this.snapshotFile).then(() => true, (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return false
      throw error
    })
    if (!exists) return undefined
    const head = readSnapshotHead(this.snapshotFile, this.options, backend)
    const stored = new StoredSnapshot(head, backend)
    await stored.verify()
    this.snapshotBytes = head.payloadStart + head.payloadBytes
    return stored
  }

  /**
   * A new namespace on disk: its folder, an empty log, a snapshot (empty unless given). The log comes
   * first: a log alone replays from its first record, a snapshot alone would need a log made at open.
   */
  private async create(payload: Uint8Array = new Uint8Array(0)): Promise<void> {
    await mkdir(this.options.dir, { recursive: true })
    this.seq = 0
    await this.createLog()
    await this.writeSnapshot(payload)
    // the folder may be new, and so may `namespaces/` above it
    if (this.options.ownsDir) {
      await syncDir(dirname(this.options.dir))
      await syncDir(dirname(dirname(this.options.dir)))
    }
    this.exists = true
  }

  private async createLog(): Promise<void> {
    const header = encodeHeader('log', this.options)
    await writeFileDurably(this.logFile, header)
    this.headerBytes = this.logBytes = header.length
    this.dirty = false
  }

  private async writeSnapshot(payload: Uint8Array): Promise<void> {
    const bytes = encodeSnapshotFile(this.seq, payload, this.options)
    await writeFileDurably(this.snapshotFile, bytes)
    this.snapshotBytes = bytes.length
  }

  private async writeSnapshotAndTruncate(payload: Uint8Array): Promise<void> {
    await this.writeSnapshot(payload)
    await truncateDurably(this.logFile, this.headerBytes)
    this.logBytes = this.headerBytes
    this.dirty = false
  }

  /** Maps file-system failures onto the provider error every store answers with (503); ours pass through. */
  private async io<T>(what: string, task: () => Promise<T>): Promise<T> {
    try {
      return await task()
    } catch (error) {
      if (error instanceof ProviderError) throw error
      throw new BackendUnavailableError(this.options.backend, `cannot ${what} ${this.options.name} in ${this.options.dir}: ${errorMessage(error)}`, { cause: error })
    }
  }
}

/** A whole snapshot file: the kernel's header, then one frame holding the last sequence number folded in and the payload. */
export function encodeSnapshotFile(seq: number, payload: Uint8Array, identity: FileIdentity): Buffer {
  const body = Buffer.alloc(SEQ_BYTES + payload.length)
  body.writeDoubleLE(seq, 0)
  body.set(payload, SEQ_BYTES)
  return Buffer.concat([encodeHeader('snapshot', identity), encodeFrame(body)])
}

/** A snapshot file's sequence number and payload (undefined when empty); a damaged one is refused. */
export function parseSnapshotFile(bytes: Buffer, file: string, identity: FileIdentity, backend: string): { seq: number; payload: Buffer | undefined } {
  const at = checkHeader(bytes, file, 'snapshot', identity, backend)
  const frame = readFrameAt(bytes, at)
  if (!frame || frame.end !== bytes.length || frame.body.length < SEQ_BYTES) {
    throw new UnexpectedResponseError(backend, `${file} is refused: snapshot record is damaged (checksum or length)`)
  }
  const payload = frame.body.subarray(SEQ_BYTES)
  return { seq: frame.body.readDoubleLE(0), payload: payload.length > 0 ? payload : undefined }
}

/** Where a run of log files stands: the snapshot they continue, and the last record's sequence number (-1 before any). */
export interface RecordChain {
  snapshotSeq: number
  hasSnapshot: boolean
  previous: number
}

/**
 * The records of one log file above the snapshot's sequence number, continuing `chain` (updated); `end` is
 * where the good records end (before a torn or corrupt tail, or a record that does not follow on).
 */
export function readRecords(bytes: Buffer, file: string, chain: RecordChain, identity: FileIdentity, backend: string): { records: Buffer[]; headerBytes: number; end: number } {
  const headerBytes = checkHeader(bytes, file, 'log', identity, backend)
  const records: Buffer[] = []
  const end = followRecords((offset) => readFrameAt(bytes, offset), headerBytes, file, chain, backend, (record) => records.push(record))
  return { records, headerBytes, end }
}

/**
 * Reads frames from `start` (`frameAt`) while they continue `chain` (updated), handing `take` each record above the
 * snapshot's sequence number; answers where the last good one ends. A log whose first records no snapshot holds is refused.
 */
export function followRecords(
  frameAt: (offset: number) => { body: Buffer; end: number } | undefined, start: number, file: string, chain: RecordChain, backend: string,
  take: (record: Buffer) => void
): number {
  let offset = start
  for (;;) {
    const frame = frameAt(offset)
    if (!frame || frame.body.length < SEQ_BYTES) break
    const seq = frame.body.readDoubleLE(0)
    // sequence numbers rise by one; anything else is not a record this log appended
    if (chain.previous >= 0 && seq !== chain.previous + 1) break
    if (chain.previous < 0 && !chain.hasSnapshot && seq !== 1) {
      throw new UnexpectedResponseError(backend, `${file} is refused: it starts at record ${seq} and there is no snapshot with the records before it`)
    }
    if (seq > chain.snapshotSeq) {
      const last = Math.max(chain.previous, chain.snapshotSeq)
      if (seq !== last + 1) {
        throw new UnexpectedResponseError(backend, `${file} is refused: it continues at record ${seq}, the snapshot ends at ${chain.snapshotSeq}`)
      }
      take(frame.body.subarray(SEQ_BYTES))
    }
    chain.previous = seq
    offset = frame.end
  }
  return offset
}

/** Cuts `file` to `bytes` and syncs it before answering. */
async function truncateDurably(file: string, bytes: number): Promise<void> {
  const handle = await open(file, 'r+')
  try {
    await handle.truncate(bytes)
    await handle.datasync()
  } finally {
    await handle.close()
  }
}

async function readIfExists(file: string): Promise<Buffer | undefined> {
  return readFile(file).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return undefined
    throw error
  })
}

import { mkdir, open, readFile, rm } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { BackendUnavailableError, ProviderError, UnexpectedResponseError, errorMessage } from '../errors.js'
import { syncDir, writeFileDurably } from './durable-file.js'
import { checkHeader, encodeHeader, type FileIdentity } from './file-header.js'
import { encodeFrame, readFrameAt } from './frame.js'

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
}

/** What `open` found on disk: the snapshot's payload (none when there is none, or it is empty) and the records after it, oldest first. */
export interface Recovered {
  snapshot: Buffer | undefined
  records: Buffer[]
}

const SEQ_BYTES = 8

/**
 * One namespace's files of one embedded store: a snapshot of its whole state and an append-only log of
 * the changes since, both behind a checked header (`file-header.ts`).
 *
 * - `append` writes one checksummed record holding the next sequence number and fsyncs it before it
 *   resolves. `compact` writes the state as a new snapshot (temporary file, fsync, rename, fsync the
 *   folder) that records the last sequence number, then empties the log. `drop` removes everything.
 * - `open` reads the snapshot, then the log records whose sequence number is above the snapshot's (so a
 *   crash between a snapshot's rename and the log's truncation applies nothing twice); a torn or corrupt
 *   tail ends the log there and is cut off, everything before it is kept. A damaged snapshot, a log that
 *   starts after records no snapshot holds, or a file of another format is refused, never misread.
 * - Calls must not overlap: the store serialises them. No file is held open between calls.
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

  private constructor(private readonly options: DurableLogOptions) {}

  get snapshotFile(): string {
    return join(this.options.dir, `${this.options.name}.snap`)
  }

  get logFile(): string {
    return join(this.options.dir, `${this.options.name}.log`)
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

  /** True once the log holds more bytes than the snapshot and than the compaction floor. */
  needsCompaction(): boolean {
    return this.logBytes - this.headerBytes > Math.max(this.snapshotBytes, this.options.compactionFloorBytes ?? 1_048_576)
  }

  /** Bytes of log records not yet folded into a snapshot. */
  get pendingLogBytes(): number {
    return this.logBytes - this.headerBytes
  }

  /** Folds the log into a snapshot of `state`, which must be the state after every appended record. */
  async compact(state: Uint8Array): Promise<void> {
    this.checkOpen()
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
    const snapshotBytes = await readIfExists(this.snapshotFile)
    let snapshot: Buffer | undefined
    let snapshotSeq = 0
    if (snapshotBytes) {
      const at = checkHeader(snapshotBytes, this.snapshotFile, 'snapshot', this.options, backend)
      const frame = readFrameAt(snapshotBytes, at)
      if (!frame || frame.end !== snapshotBytes.length || frame.body.length < SEQ_BYTES) {
        throw new UnexpectedResponseError(backend, `${this.snapshotFile} is refused: snapshot record is damaged (checksum or length)`)
      }
      snapshotSeq = frame.body.readDoubleLE(0)
      const payload = frame.body.subarray(SEQ_BYTES)
      snapshot = payload.length > 0 ? payload : undefined
      this.snapshotBytes = snapshotBytes.length
    }

    const logBytes = await readIfExists(this.logFile)
    const records: Buffer[] = []
    this.seq = snapshotSeq
    if (logBytes) {
      this.headerBytes = checkHeader(logBytes, this.logFile, 'log', this.options, backend)
      let offset = this.headerBytes
      let previous = -1
      for (;;) {
        const frame = readFrameAt(logBytes, offset)
        if (!frame || frame.body.length < SEQ_BYTES) break
        const seq = frame.body.readDoubleLE(0)
        // sequence numbers rise by one; anything else is not a record this log appended
        if (previous >= 0 && seq !== previous + 1) break
        if (previous < 0 && !snapshotBytes && seq !== 1) {
          throw new UnexpectedResponseError(backend, `${this.logFile} is refused: it starts at record ${seq} and there is no snapshot ${this.snapshotFile} with the records before it`)
        }
        if (seq > snapshotSeq) {
          if (records.length === 0 && seq !== snapshotSeq + 1) {
            throw new UnexpectedResponseError(backend, `${this.logFile} is refused: it continues at record ${seq}, the snapshot ends at ${snapshotSeq}`)
          }
          records.push(frame.body.subarray(SEQ_BYTES))
          this.seq = seq
        }
        previous = seq
        offset = frame.end
      }
      if (offset < logBytes.length) {
        // a torn or corrupt tail: the append it held never resolved, so it is cut off
        const handle = await open(this.logFile, 'r+')
        try {
          await handle.truncate(offset)
          await handle.datasync()
        } finally {
          await handle.close()
        }
      }
      this.logBytes = offset
    }

    const legacy = this.options.legacy
    if (legacy) {
      // an upgrade interrupted after the new log was made and before the snapshot left a log with no records
      const old = !snapshotBytes && records.length === 0 ? await readIfExists(legacy.file) : undefined
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
        return { snapshot: Buffer.from(payload), records: [] }
      }
      // an upgrade interrupted after its snapshot was written: the old file is already folded in
      if (snapshotBytes) await rm(legacy.file, { force: true })
    }

    this.exists = Boolean(snapshotBytes || logBytes)
    if (snapshotBytes && !logBytes) await this.createLog()
    return { snapshot, records }
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
    const body = Buffer.alloc(SEQ_BYTES + payload.length)
    body.writeDoubleLE(this.seq, 0)
    body.set(payload, SEQ_BYTES)
    const bytes = Buffer.concat([encodeHeader('snapshot', this.options), encodeFrame(body)])
    await writeFileDurably(this.snapshotFile, bytes)
    this.snapshotBytes = bytes.length
  }

  private async writeSnapshotAndTruncate(payload: Uint8Array): Promise<void> {
    await this.writeSnapshot(payload)
    const handle = await open(this.logFile, 'r+')
    try {
      await handle.truncate(this.headerBytes)
      await handle.datasync()
    } finally {
      await handle.close()
    }
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

async function readIfExists(file: string): Promise<Buffer | undefined> {
  return readFile(file).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return undefined
    throw error
  })
}

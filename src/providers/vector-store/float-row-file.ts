import { randomUUID } from 'node:crypto'
import { closeSync, mkdirSync, openSync, read, readSync, unlinkSync, writeSync } from 'node:fs'
import { promisify } from 'node:util'
import { join } from 'node:path'

const readAt = promisify(read)

/** Rows gathered before one write: a load or a large write adds rows one after another (128 KiB at 512 dimensions). */
const PENDING_ROWS = 64

/**
 * A pool's float32 rows in a file of this process alone, row `r` at byte `r × dims × 4`, for int8 pools to score
 * their candidates exactly. The file is removed from its folder as soon as it is open: it lives while the process
 * holds it and leaves nothing behind a crash (it is rebuilt from the snapshots and logs at the next start). Its pages
 * sit in the page cache, outside the process's resident memory, and the kernel may drop them (then a search reads them
 * from disk). Rows written one after another are gathered and written together (a start-up writes every row again);
 * a read of a row not yet written is answered from what is gathered.
 */
export class FloatRowFile {
  private readonly fd: number
  private readonly rowBytes: number
  private readonly pending: Uint8Array
  /** The first gathered row, and how many follow it. */
  private pendingFrom = 0
  private pendingRows = 0

  constructor(dir: string, readonly dims: number) {
    this.rowBytes = dims * 4
    this.pending = new Uint8Array(PENDING_ROWS * this.rowBytes)
    mkdirSync(dir, { recursive: true })
    const path = join(dir, `.float-rows-${process.pid}-${randomUUID()}.f32`)
    this.fd = openSync(path, 'w+')
    unlinkSync(path)
  }

  write(row: number, vector: Float32Array): void {
    const bytes = new Uint8Array(vector.buffer, vector.byteOffset, this.rowBytes)
    const at = row - this.pendingFrom
    if (at >= 0 && at < this.pendingRows) {
      this.pending.set(bytes, at * this.rowBytes)
      return
    }
    if (at !== this.pendingRows || this.pendingRows === PENDING_ROWS) {
      this.flush()
      this.pendingFrom = row
    }
    this.pending.set(bytes, this.pendingRows * this.rowBytes)
    this.pendingRows += 1
  }

  /** Reads row `row` into `into` (`dims × 4` bytes). */
  readInto(row: number, into: Uint8Array): void {
    const at = row - this.pendingFrom
    if (at >= 0 && at < this.pendingRows) {
      into.set(this.pending.subarray(at * this.rowBytes, (at + 1) * this.rowBytes))
      return
    }
    const read = readSync(this.fd, into, 0, this.rowBytes, row * this.rowBytes)
    if (read !== this.rowBytes) throw new Error(`float row ${row}: ${read} of ${this.rowBytes} bytes read`)
  }

  /** Reads rows `from` to `from + count` into `into` (`count × dims × 4` bytes); every one must have been written. */
  readRows(from: number, count: number, into: Uint8Array): void {
    this.flush()
    const length = count * this.rowBytes
    const read = readSync(this.fd, into, 0, length, from * this.rowBytes)
    if (read !== length) throw new Error(`float rows ${from}+${count}: ${read} of ${length} bytes read`)
  }

  /**
   * {@link readRows} without holding the event loop while the kernel reads (rows the page cache dropped are read from
   * disk). The rows must stay as they are until it settles, and the file open.
   */
  async readRowsAsync(from: number, count: number, into: Uint8Array): Promise<void> {
    this.flush()
    const length = count * this.rowBytes
    const { bytesRead } = await readAt(this.fd, into, 0, length, from * this.rowBytes)
    if (bytesRead !== length) throw new Error(`float rows ${from}+${count}: ${bytesRead} of ${length} bytes read`)
  }

  read(row: number): Float32Array {
    const out = new Float32Array(this.dims)
    this.readInto(row, new Uint8Array(out.buffer))
    return out
  }

  close(): void {
    closeSync(this.fd)
  }

  private flush(): void {
    if (this.pendingRows === 0) return
    const length = this.pendingRows * this.rowBytes
    const written = writeSync(this.fd, this.pending, 0, length, this.pendingFrom * this.rowBytes)
    if (written !== length) throw new Error(`float rows ${this.pendingFrom}+${this.pendingRows}: ${written} of ${length} bytes written`)
    this.pendingRows = 0
  }
}

import { randomUUID } from 'node:crypto'
import { closeSync, mkdirSync, openSync, readSync, unlinkSync, writeSync } from 'node:fs'
import { join } from 'node:path'

/**
 * A pool's float32 rows in a file of this process alone, row `r` at byte `r × dims × 4`, for int8 pools to score
 * their candidates exactly. The file is removed from its folder as soon as it is open: it lives while the process
 * holds it and leaves nothing behind a crash (it is rebuilt from the snapshots and logs at the next start). Its pages
 * sit in the page cache, outside the process's resident memory, and the kernel may drop them (then a search reads them
 * from disk).
 */
export class FloatRowFile {
  private readonly fd: number
  private readonly rowBytes: number

  constructor(dir: string, readonly dims: number) {
    this.rowBytes = dims * 4
    mkdirSync(dir, { recursive: true })
    const path = join(dir, `.float-rows-${process.pid}-${randomUUID()}.f32`)
    this.fd = openSync(path, 'w+')
    unlinkSync(path)
  }

  write(row: number, vector: Float32Array): void {
    const written = writeSync(this.fd, new Uint8Array(vector.buffer, vector.byteOffset, this.rowBytes), 0, this.rowBytes, row * this.rowBytes)
    if (written !== this.rowBytes) throw new Error(`float row ${row}: ${written} of ${this.rowBytes} bytes written`)
  }

  /** Reads row `row` into `into` (`dims × 4` bytes). */
  readInto(row: number, into: Uint8Array): void {
    const read = readSync(this.fd, into, 0, this.rowBytes, row * this.rowBytes)
    if (read !== this.rowBytes) throw new Error(`float row ${row}: ${read} of ${this.rowBytes} bytes read`)
  }

  read(row: number): Float32Array {
    const out = new Float32Array(this.dims)
    this.readInto(row, new Uint8Array(out.buffer))
    return out
  }

  close(): void {
    closeSync(this.fd)
  }
}

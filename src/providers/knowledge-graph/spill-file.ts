import { closeSync, openSync, rmSync, writeSync } from 'node:fs'
import { readFully } from '../embedded/snapshot-stream.js'

const ENTRY_HEAD_BYTES = 8

/**
 * Numbered lists of entries (a number and some bytes each) in one temporary file, each list read back in the order it
 * was written: a list's entries are gathered in memory up to `blockBytes` and written as one block, so that reading a
 * list reads its own blocks alone. A fold's shares of a log by range of items (`log-shares.ts`).
 */
export class SpillFile {
  private readonly fd: number
  private readonly pending: Buffer[][]
  private readonly pendingBytes: number[]
  /** Per list, the [offset, length] of each block written. */
  private readonly blocks: Array<Array<[number, number]>>
  private written = 0

  constructor(readonly file: string, lists: number, private readonly blockBytes = 1_048_576) {
    this.fd = openSync(file, 'w+')
    this.pending = Array.from({ length: lists }, () => [])
    this.pendingBytes = new Array<number>(lists).fill(0)
    this.blocks = Array.from({ length: lists }, () => [])
  }

  add(list: number, at: number, text: string): void {
    const body = Buffer.from(text, 'utf8')
    const head = Buffer.alloc(ENTRY_HEAD_BYTES)
    head.writeUInt32LE(at, 0)
    head.writeUInt32LE(body.length, 4)
    this.pending[list]!.push(head, body)
    this.pendingBytes[list]! += ENTRY_HEAD_BYTES + body.length
    if (this.pendingBytes[list]! >= this.blockBytes) this.flush(list)
  }

  /** Writes what is still gathered; call once every entry is added, before reading. */
  finish(): void {
    for (let list = 0; list < this.pending.length; list++) this.flush(list)
  }

  /** The entries of `list` in the order added: each entry's number and bytes (valid until the next is read). */
  *read(list: number): Generator<[number, Buffer]> {
    for (const [offset, length] of this.blocks[list]!) {
      const block = Buffer.allocUnsafe(length)
      readFully(this.fd, block, offset)
      for (let at = 0; at < length; ) {
        const bytes = block.readUInt32LE(at + 4)
        yield [block.readUInt32LE(at), block.subarray(at + ENTRY_HEAD_BYTES, at + ENTRY_HEAD_BYTES + bytes)]
        at += ENTRY_HEAD_BYTES + bytes
      }
    }
  }

  remove(): void {
    closeSync(this.fd)
    rmSync(this.file, { force: true })
  }

  private flush(list: number): void {
    if (this.pendingBytes[list] === 0) return
    const bytes = Buffer.concat(this.pending[list]!)
    for (let done = 0; done < bytes.length; ) done += writeSync(this.fd, bytes, done, bytes.length - done, this.written + done)
    this.blocks[list]!.push([this.written, bytes.length])
    this.written += bytes.length
    this.pending[list] = []
    this.pendingBytes[list] = 0
  }
}

import { closeSync, fstatSync, fsyncSync, openSync, readSync, writeSync } from 'node:fs'
import { open } from 'node:fs/promises'
import { crc32 } from 'node:zlib'
import { UnexpectedResponseError } from '../errors.js'
import { readFullyAt } from './durable-file.js'
import { checkHeader, encodeHeader, HEADER_MAX_BYTES, type FileIdentity } from './file-header.js'

/**
 * A snapshot file (`encodeSnapshotFile`: header, then one frame of the sequence number and the payload) read and
 * written a block at a time, so that a fold holds no whole snapshot: the same bytes `parseSnapshotFile` and
 * `encodeSnapshotFile` read and write, the frame's checksum checked (or computed) as the blocks pass.
 */
const SEQ_BYTES = 8
const FRAME_HEADER_BYTES = 8
export const BLOCK_BYTES = 1 << 20
/** Bytes `StoredSnapshot.verify` reads at a time. */
const VERIFY_PIECE_BYTES = 4 * BLOCK_BYTES

/** Where a snapshot file's payload lies, found from its header and frame alone. */
export interface SnapshotHead {
  file: string
  seq: number
  /** The store format its header names. */
  format: number
  payloadStart: number
  payloadBytes: number
  crc: number
}

export function readSnapshotHead(file: string, identity: FileIdentity, backend: string): SnapshotHead {
  const fd = openSync(file, 'r')
  try {
    const size = fstatSync(fd).size
    const head = Buffer.alloc(Math.min(size, HEADER_MAX_BYTES + FRAME_HEADER_BYTES + SEQ_BYTES))
    readFully(fd, head, 0)
    const at = checkHeader(head, file, 'snapshot', identity, backend)
    const format = head.readUInt32LE(at - 8)
    const damaged = () => new UnexpectedResponseError(backend, `${file} is refused: snapshot record is damaged (checksum or length)`)
    if (head.length < at + FRAME_HEADER_BYTES + SEQ_BYTES) throw damaged()
    const bodyBytes = head.readUInt32LE(at)
    if (at + FRAME_HEADER_BYTES + bodyBytes !== size || bodyBytes < SEQ_BYTES) throw damaged()
    const seq = head.readDoubleLE(at + FRAME_HEADER_BYTES)
    const payloadStart = at + FRAME_HEADER_BYTES + SEQ_BYTES
    return { file, seq, format, payloadStart, payloadBytes: size - payloadStart, crc: head.readUInt32LE(at + 4) }
  } finally {
    closeSync(fd)
  }
}

/** What tells a file's bytes unchanged since it was read: the same file, length and times of its last change. */
interface FileStamp {
  dev: bigint
  ino: bigint
  size: bigint
  mtimeNs: bigint
  ctimeNs: bigint
}

function stampOf(fd: number): FileStamp {
  const { dev, ino, size, mtimeNs, ctimeNs } = fstatSync(fd, { bigint: true })
  return { dev, ino, size, mtimeNs, ctimeNs }
}

const sameStamp = (a: FileStamp, b: FileStamp) =>
  a.dev === b.dev && a.ino === b.ino && a.size === b.size && a.mtimeNs === b.mtimeNs && a.ctimeNs === b.ctimeNs

/**
 * The payload's bytes in blocks of at most `blockBytes` (each block a new buffer, the reader's to keep); after the last
 * one the frame's checksum is compared, and a mismatch throws, so nothing built from a damaged file is ever written.
 * `checked`: the stamp of the file when its checksum was found right (`StoredSnapshot.verify`); while the file still has
 * it, the checksum is not computed again (a second pass over each graph's snapshot was about 2 s of a 1M start-up).
 */
export function* payloadBlocks(head: SnapshotHead, backend: string, blockBytes = BLOCK_BYTES, checked?: FileStamp): Generator<Buffer> {
  const fd = openSync(head.file, 'r')
  try {
    const check = checked === undefined || !sameStamp(checked, stampOf(fd))
    const seqBytes = Buffer.alloc(SEQ_BYTES)
    readFully(fd, seqBytes, head.payloadStart - SEQ_BYTES)
    let crc = check ? crc32(seqBytes) : 0
    for (let at = 0; at < head.payloadBytes; ) {
      // every byte is read into it: nothing of the allocation is ever seen
      const block = Buffer.allocUnsafe(Math.min(blockBytes, head.payloadBytes - at))
      readFully(fd, block, head.payloadStart + at)
      if (check) crc = crc32(block, crc)
      at += block.length
      yield block
    }
    if (check && crc !== head.crc) throw new UnexpectedResponseError(backend, `${head.file} is refused: snapshot record is damaged (checksum or length)`)
  } finally {
    closeSync(fd)
  }
}

/** A snapshot payload to read: on disk (`StoredSnapshot`) or in hand (`HeldPayload`). */
export interface SnapshotPayload {
  blocks(blockBytes?: number): Iterator<Buffer>
  bytes(): Buffer
  /** Whether the payload begins with `prefix`. */
  startsWith(prefix: Uint8Array): boolean
}

/**
 * A snapshot's payload as `DurableLog.open` found it on disk, its checksum checked there: read a block at a time or
 * whole, never held by this object, so that a payload past what one string or buffer can hold still loads a row at a time.
 */
export class StoredSnapshot implements SnapshotPayload {
  /** The file's stamp when `verify` found its checksum right. */
  private verified: FileStamp | undefined

  constructor(readonly head: SnapshotHead, private readonly backend: string) {}

  /** The payload's blocks; the checksum is checked again after the last one unless the file is as `verify` found it. */
  blocks(blockBytes = BLOCK_BYTES): Generator<Buffer> {
    return payloadBlocks(this.head, this.backend, blockBytes, this.verified)
  }

  bytes(): Buffer {
    return Buffer.concat([...this.blocks()])
  }

  /**
   * Reads the payload through one buffer and throws unless its checksum is the frame's; the event loop runs while each
   * piece is read (a 1M namespace's graphs are 0.8 and 1.8 GB).
   */
  async verify(): Promise<void> {
    const handle = await open(this.head.file, 'r')
    try {
      const stamp = stampOf(handle.fd)
      const block = Buffer.allocUnsafe(Math.min(VERIFY_PIECE_BYTES, Math.max(this.head.payloadBytes, SEQ_BYTES)))
      const seqBytes = block.subarray(0, SEQ_BYTES)
      await readFullyAt(handle.fd, seqBytes, this.head.payloadStart - SEQ_BYTES)
      let crc = crc32(seqBytes)
      for (let at = 0; at < this.head.payloadBytes; ) {
        const piece = block.subarray(0, Math.min(block.length, this.head.payloadBytes - at))
        await readFullyAt(handle.fd, piece, this.head.payloadStart + at)
        crc = crc32(piece, crc)
        at += piece.length
      }
      if (crc !== this.head.crc) throw new UnexpectedResponseError(this.backend, `${this.head.file} is refused: snapshot record is damaged (checksum or length)`)
      this.verified = stamp
    } finally {
      await handle.close()
    }
  }

  startsWith(prefix: Uint8Array): boolean {
    if (this.head.payloadBytes < prefix.length) return false
    const fd = openSync(this.head.file, 'r')
    try {
      const first = Buffer.alloc(prefix.length)
      readFully(fd, first, this.head.payloadStart)
      return first.equals(prefix)
    } finally {
      closeSync(fd)
    }
  }
}

/** A payload held whole (what a fold thread's whole fold reads), given in blocks as a file's would be. */
export class HeldPayload implements SnapshotPayload {
  constructor(private readonly payload: Buffer) {}

  *blocks(blockBytes = BLOCK_BYTES): Generator<Buffer> {
    for (let at = 0; at < this.payload.length; at += blockBytes) yield this.payload.subarray(at, at + blockBytes)
  }

  bytes(): Buffer {
    return this.payload
  }

  startsWith(prefix: Uint8Array): boolean {
    return this.payload.subarray(0, prefix.length).equals(prefix)
  }
}

/**
 * Writes a snapshot file as `encodeSnapshotFile(seq, payload)` would, the payload given in pieces: the frame's length
 * and checksum are written last, in their place, and the file synced by `finish`.
 */
export class SnapshotFileWriter {
  private readonly fd: number
  private readonly frameAt: number
  private at: number
  private crc: number

  constructor(readonly file: string, seq: number, identity: FileIdentity) {
    const header = encodeHeader('snapshot', identity)
    this.fd = openSync(file, 'w')
    this.frameAt = header.length
    this.writeAt(header, 0)
    const seqBytes = Buffer.alloc(SEQ_BYTES)
    seqBytes.writeDoubleLE(seq, 0)
    this.at = this.frameAt + FRAME_HEADER_BYTES
    this.crc = 0
    this.write(seqBytes)
  }

  write(piece: Uint8Array): void {
    this.crc = crc32(piece, this.crc)
    this.writeAt(piece, this.at)
    this.at += piece.length
  }

  /** Fills in the frame's length and checksum, syncs and closes; answers the file's length. */
  finish(): number {
    const frame = Buffer.alloc(FRAME_HEADER_BYTES)
    frame.writeUInt32LE(this.at - this.frameAt - FRAME_HEADER_BYTES, 0)
    frame.writeUInt32LE(this.crc, 4)
    this.writeAt(frame, this.frameAt)
    fsyncSync(this.fd)
    closeSync(this.fd)
    return this.at
  }

  abort(): void {
    closeSync(this.fd)
  }

  private writeAt(bytes: Uint8Array, position: number): void {
    for (let done = 0; done < bytes.length; ) done += writeSync(this.fd, bytes, done, bytes.length - done, position + done)
  }
}

/** Fills `into` from `fd` at `position`; a file that ends first is refused. */
export function readFully(fd: number, into: Buffer, position: number): void {
  for (let done = 0; done < into.length; ) {
    const read = readSync(fd, into, done, into.length - done, position + done)
    if (read === 0) throw new RangeError('file ended early')
    done += read
  }
}

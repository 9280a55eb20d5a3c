/**
 * A partition's log applied to it at load, read a piece at a time: at a million chunks a collection's log reaches
 * gigabytes (a fold begins once it outgrows the snapshot), and read whole it stood beside everything loaded before it.
 * Each piece's whole records are applied together (`Collection.applyAll`) while the next piece is read (`readAhead`), and
 * a record cut by a piece's end is gathered from the pieces after it (`CutRecord`), however long.
 */
import { open } from 'node:fs/promises'
import { readAhead } from '../embedded/durable-file.js'
import { decodeRecordAt } from './log-codec.js'
import type { Collection, DecodedWrite } from './matrix.js'

/** Bytes of a log read at a time. */
const PIECE_BYTES = 64 * 1_048_576
const FRAME_HEADER_BYTES = 8

export interface Replayed {
  /** Records applied (those after the snapshot's sequence number). */
  applied: number
  /** Where the last whole record ends: the log's length, or where a torn or damaged record begins. */
  end: number
  /** The file's length. */
  size: number
}

/** Applies `log`'s records after the partition's sequence number, from its start until a torn or damaged record. */
export function replay(c: Collection, log: Buffer): Omit<Replayed, 'size'> {
  let applied = 0
  let end = 0
  function* writes(): Generator<DecodedWrite> {
    for (;;) {
      const next = decodeRecordAt(log, end, c.dims)
      if (!next) return
      if (next.write.seq > c.seq) {
        yield next.write
        applied += 1
      }
      end = next.end
    }
  }
  c.applyAll(writes())
  return { applied, end }
}

/** {@link replay} of the log file at `path`, a piece of `pieceBytes` at a time; undefined when there is no such file. */
export async function replayFile(c: Collection, path: string, pieceBytes = PIECE_BYTES): Promise<Replayed | undefined> {
  const handle = await open(path, 'r').catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT') return undefined
    throw e
  })
  if (!handle) return undefined
  try {
    const { size } = await handle.stat()
    let applied = 0
    let cut: CutRecord | undefined
    // the file offset of the piece's first byte
    let base = 0
    for await (const piece of readAhead(handle.fd, 0, size, pieceBytes)) {
      let from = 0
      if (cut) {
        from = cut.fill(piece, 0)
        if (cut.pastFile) return { applied, end: cut.at, size }
        if (cut.whole) {
          const one = replay(c, cut.bytes)
          applied += one.applied
          if (one.end < cut.bytes.length) return { applied, end: cut.at, size }
          cut = undefined
        }
      }
      const rest = piece.subarray(from)
      const whole = wholeRecordsEnd(rest)
      const replayed = replay(c, rest.subarray(0, whole))
      applied += replayed.applied
      // a damaged record
      if (replayed.end < whole) return { applied, end: base + from + replayed.end, size }
      if (whole < rest.length) {
        cut = new CutRecord(base + from + whole, size)
        cut.fill(rest, whole)
        if (cut.pastFile) return { applied, end: cut.at, size }
      }
      base += piece.length
    }
    // a record the file ends inside is torn
    return { applied, end: cut ? cut.at : size, size }
  } finally {
    await handle.close()
  }
}

/**
 * A record cut by a piece's end, gathered from the pieces after: its frame's header first, then (its length known) a
 * buffer of the record's length. A length that reaches past the file's end marks it torn before anything is held.
 */
class CutRecord {
  bytes = Buffer.allocUnsafe(FRAME_HEADER_BYTES)
  private held = 0
  pastFile = false

  /** `at`: the record's file offset; `size`: the file's length. */
  constructor(readonly at: number, private readonly size: number) {}

  get whole(): boolean {
    return this.held === this.bytes.length && !this.needsBody()
  }

  /** Takes from `piece` at `from` what the record lacks; answers the piece's offset after what it took. */
  fill(piece: Buffer, from: number): number {
    let at = from
    for (;;) {
      const n = Math.min(this.bytes.length - this.held, piece.length - at)
      piece.copy(this.bytes, this.held, at, at + n)
      this.held += n
      at += n
      if (!this.needsBody()) return at
      const length = FRAME_HEADER_BYTES + this.bytes.readUInt32LE(0)
      if (this.at + length > this.size) {
        this.pastFile = true
        return at
      }
      const grown = Buffer.allocUnsafe(length)
      this.bytes.copy(grown)
      this.bytes = grown
    }
  }

  /** The header is in, and its record is longer than it: the buffer must grow to the record's length. */
  private needsBody(): boolean {
    return this.bytes.length === FRAME_HEADER_BYTES && this.held === FRAME_HEADER_BYTES && this.bytes.readUInt32LE(0) > 0
  }
}

/** Where the last record whose frame lies whole in `bytes` ends. */
function wholeRecordsEnd(bytes: Buffer): number {
  let at = 0
  while (at + FRAME_HEADER_BYTES <= bytes.length) {
    const end = at + FRAME_HEADER_BYTES + bytes.readUInt32LE(at)
    if (end > bytes.length) break
    at = end
  }
  return at
}

/**
 * A partition's log applied to it at load, read a piece at a time: at a million chunks a collection's log reaches
 * gigabytes (a fold begins once it outgrows the snapshot), and read whole it stood beside everything loaded before it.
 * Each piece's whole records are applied together (`Collection.applyAll`), a record cut by the piece's end is carried
 * into the next piece, and a record longer than the piece gets a piece of its length.
 */
import { open } from 'node:fs/promises'
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
    let piece = Buffer.allocUnsafe(Math.max(FRAME_HEADER_BYTES, Math.min(pieceBytes, size)))
    // the file offset of the piece's first byte, and how many of its bytes are the file's
    let base = 0
    let held = 0
    let applied = 0
    for (;;) {
      while (held < piece.length && base + held < size) {
        const { bytesRead } = await handle.read(piece, held, Math.min(piece.length - held, size - base - held), base + held)
        if (bytesRead === 0) break
        held += bytesRead
      }
      const bytes = piece.subarray(0, held)
      const whole = wholeRecordsEnd(bytes)
      const replayed = replay(c, bytes.subarray(0, whole))
      applied += replayed.applied
      const at = replayed.end
      // a damaged record, or the file's last bytes (whole records, or a torn one)
      if (at < whole || base + held >= size) return { applied, end: base + at, size }
      // the next record's end, when its frame's header is in the piece: past the file's end, it is torn
      const next = at + FRAME_HEADER_BYTES <= held ? base + at + FRAME_HEADER_BYTES + bytes.readUInt32LE(at) : undefined
      if (next !== undefined && next > size) return { applied, end: base + at, size }
      if (at === 0) {
        // one record longer than the piece (a piece holds a frame's header at least): a piece of its length
        const grown = Buffer.allocUnsafe(next! - base)
        bytes.copy(grown)
        piece = grown
      } else {
        piece.copy(piece, 0, at, held)
        held -= at
        base += at
      }
    }
  } finally {
    await handle.close()
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

import { fstat, read } from 'node:fs'
import { open, rename } from 'node:fs/promises'
import { promisify } from 'node:util'
import { dirname } from 'node:path'

/** fsyncs a folder, so that a rename or a new file in it survives a machine crash. */
export async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r')
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}

/**
 * Replaces `file` with `bytes` atomically and durably: write a temporary file beside it, fsync it, rename
 * it over `file`, fsync the folder. After a crash the file holds either the old bytes or the new ones.
 */
export async function writeFileDurably(file: string, bytes: Uint8Array): Promise<void> {
  const temp = `${file}.tmp`
  const handle = await open(temp, 'w')
  try {
    await handle.writeFile(bytes)
    await handle.sync()
  } finally {
    await handle.close()
  }
  await rename(temp, file)
  await syncDir(dirname(file))
}

/** Bytes read from a file by one call: `fs.readFile` takes at most 2 GiB, and so does one read. */
const PIECE_BYTES = 1 << 30

/**
 * A file open as `fd` (from its start), whole, read in pieces: `fs.readFile` fails on a file past 2 GiB, which a vector
 * snapshot or log at a million chunks is.
 */
export async function readWholeFile(fd: number): Promise<Buffer> {
  const { size } = await promisify(fstat)(fd)
  const bytes = Buffer.allocUnsafe(size)
  for (let at = 0; at < size; at += PIECE_BYTES) await readFullyAt(fd, bytes.subarray(at, Math.min(size, at + PIECE_BYTES)), at)
  return bytes
}

const readAt = promisify(read)

/** Fills `into` from `fd` at `position`, without holding the event loop; a file that ends first is refused. */
export async function readFullyAt(fd: number, into: Buffer, position: number): Promise<void> {
  for (let done = 0; done < into.length; ) {
    const { bytesRead } = await readAt(fd, into, done, into.length - done, position + done)
    if (bytesRead === 0) throw new RangeError(`the file ended at byte ${position + done}`)
    done += bytesRead
  }
}

/**
 * `fd`'s bytes from `from` to `to` in order, in pieces of `pieceBytes` (the last shorter), each next piece read while the
 * caller works on the one it was given: a start-up's reads of gigabyte files waited on the disk between pieces, the
 * event loop idle 14-29% of the vector store's load at 1M. Two buffers take turns, so a piece holds its bytes only until
 * the next is asked for. A read under way when the caller stops is waited for (the caller may close `fd` then).
 */
export async function* readAhead(fd: number, from: number, to: number, pieceBytes: number): AsyncGenerator<Buffer> {
  if (!(pieceBytes >= 1)) throw new RangeError(`a piece must hold a byte at least, got ${pieceBytes}`)
  const buffers: Array<Buffer | undefined> = [undefined, undefined]
  const start = (at: number, turn: number): Promise<Buffer> => {
    const length = Math.min(pieceBytes, to - at)
    buffers[turn] ??= Buffer.allocUnsafe(length)
    const piece = buffers[turn].subarray(0, length)
    return readFullyAt(fd, piece, at).then(() => piece)
  }
  let turn = 0
  let pending = from < to ? start(from, turn) : undefined
  try {
    for (let at = from; pending; ) {
      const piece = await pending
      at += piece.length
      pending = undefined
      if (at < to) {
        turn ^= 1
        pending = start(at, turn)
        // failing while the caller holds the piece: thrown at the next ask, or dropped when it asks for none
        pending.catch(() => undefined)
      }
      yield piece
    }
  } finally {
    await pending?.catch(() => undefined)
  }
}

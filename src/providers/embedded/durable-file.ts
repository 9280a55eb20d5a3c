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

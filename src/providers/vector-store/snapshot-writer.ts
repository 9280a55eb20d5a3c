import { open } from 'node:fs/promises'
import { setImmediate as yieldToOthers } from 'node:timers/promises'
import { crc32 } from 'node:zlib'
import { snapshotParts, type SnapshotLayout, type SnapshotSource } from './snapshot-codec.js'

/**
 * Writes the snapshot of `source` to `file` (created or emptied) a slice at a time, letting the event loop run between
 * slices and while vectors are read from a file (a partition's writes and searches go on meanwhile), and fsyncs it. The file is not put in place here.
 */
export async function writeSnapshotFile(file: string, source: SnapshotSource): Promise<SnapshotLayout> {
  const handle = await open(file, 'w')
  try {
    const parts = snapshotParts(source)
    let crc = 0
    let written = 0
    let next = parts.next()
    for (; !next.done; next = parts.next()) {
      if (next.value === null) {
        await yieldToOthers()
        continue
      }
      const part = next.value instanceof Uint8Array ? next.value : await next.value.later()
      // the CRC covers every byte after the first 8 (magic and the CRC itself)
      crc = crc32(written >= 8 ? part : part.subarray(Math.min(part.length, 8 - written)), crc)
      for (let at = 0; at < part.length; ) at += (await handle.write(part, at, part.length - at, written + at)).bytesWritten
      written += part.length
    }
    if (written !== next.value.length) throw new Error(`snapshot of ${written} bytes, its layout says ${next.value.length}`)
    const field = Buffer.alloc(4)
    field.writeUInt32LE(crc, 0)
    await handle.write(field, 0, 4, 4)
    await handle.sync()
    return next.value
  } finally {
    await handle.close()
  }
}

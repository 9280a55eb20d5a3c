import { readSync } from 'node:fs'
import { crc32 } from 'node:zlib'

/**
 * A checksummed record, the unit of every embedded store's log: u32 LE body length, u32 LE CRC-32 of the
 * body, the body. The embedded vector store's log has used this framing since its first version.
 */
const FRAME_HEADER_BYTES = 8

export function encodeFrame(body: Uint8Array): Buffer {
  const out = Buffer.alloc(FRAME_HEADER_BYTES + body.length)
  out.writeUInt32LE(body.length, 0)
  out.writeUInt32LE(crc32(body), 4)
  out.set(body, FRAME_HEADER_BYTES)
  return out
}

/**
 * The frame starting at `offset`: its body and where the next frame starts; undefined when the bytes end
 * there, or the frame is torn (shorter than its length says) or corrupt (checksum mismatch).
 */
export function readFrameAt(bytes: Buffer, offset: number): { body: Buffer; end: number } | undefined {
  if (offset + FRAME_HEADER_BYTES > bytes.length) return undefined
  const length = bytes.readUInt32LE(offset)
  const end = offset + FRAME_HEADER_BYTES + length
  if (end > bytes.length) return undefined
  const body = bytes.subarray(offset + FRAME_HEADER_BYTES, end)
  if (crc32(body) !== bytes.readUInt32LE(offset + 4)) return undefined
  return { body, end }
}

/** `readFrameAt` on an open file of `size` bytes, reading the frame alone. */
export function readFrameFrom(fd: number, size: number, offset: number): { body: Buffer; end: number } | undefined {
  if (offset + FRAME_HEADER_BYTES > size) return undefined
  const header = Buffer.alloc(FRAME_HEADER_BYTES)
  readSync(fd, header, 0, FRAME_HEADER_BYTES, offset)
  const end = offset + FRAME_HEADER_BYTES + header.readUInt32LE(0)
  if (end > size) return undefined
  const body = Buffer.allocUnsafe(end - offset - FRAME_HEADER_BYTES)
  for (let done = 0; done < body.length; ) {
    const read = readSync(fd, body, done, body.length - done, offset + FRAME_HEADER_BYTES + done)
    if (read === 0) return undefined
    done += read
  }
  if (crc32(body) !== header.readUInt32LE(4)) return undefined
  return { body, end }
}

import { inflateRawSync } from 'node:zlib'

/**
 * Reads one entry of a zip (jar) archive held in memory. Enough for the model jar: stored or
 * deflated entries, no zip64, no encryption. Returns undefined when the archive has no such entry.
 */
export function readZipEntry(archive: Buffer, name: string): Buffer | undefined {
  const eocd = findEndOfCentralDirectory(archive)
  const entries = archive.readUInt16LE(eocd + 10)
  let at = archive.readUInt32LE(eocd + 16)
  for (let i = 0; i < entries; i++) {
    if (archive.readUInt32LE(at) !== 0x02014b50) throw new Error('zip: corrupt central directory')
    const method = archive.readUInt16LE(at + 10)
    const compressedSize = archive.readUInt32LE(at + 20)
    const size = archive.readUInt32LE(at + 24)
    const nameLength = archive.readUInt16LE(at + 28)
    const extraLength = archive.readUInt16LE(at + 30)
    const commentLength = archive.readUInt16LE(at + 32)
    const localHeader = archive.readUInt32LE(at + 42)
    const entryName = archive.toString('utf8', at + 46, at + 46 + nameLength)
    if (entryName === name) {
      if (archive.readUInt32LE(localHeader) !== 0x04034b50) throw new Error('zip: corrupt local header')
      // The local header's own name and extra lengths may differ from the central directory's.
      const start = localHeader + 30 + archive.readUInt16LE(localHeader + 26) + archive.readUInt16LE(localHeader + 28)
      const raw = archive.subarray(start, start + compressedSize)
      const data = method === 0 ? Buffer.from(raw) : method === 8 ? inflateRawSync(raw) : undefined
      if (data === undefined) throw new Error(`zip: unsupported compression method ${method} for ${name}`)
      if (data.length !== size) throw new Error(`zip: ${name} inflated to ${data.length} bytes, expected ${size}`)
      return data
    }
    at += 46 + nameLength + extraLength + commentLength
  }
  return undefined
}

function findEndOfCentralDirectory(archive: Buffer): number {
  // The record is 22 bytes plus a comment of at most 65535 bytes, at the very end.
  const lowest = Math.max(0, archive.length - 22 - 0xffff)
  for (let at = archive.length - 22; at >= lowest; at--) {
    if (archive.readUInt32LE(at) === 0x06054b50) return at
  }
  throw new Error('zip: end of central directory not found (not a zip file?)')
}

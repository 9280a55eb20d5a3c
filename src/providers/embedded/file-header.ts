import { crc32 } from 'node:zlib'
import { UnexpectedResponseError } from '../errors.js'

/**
 * The header at the start of every file of the store kernel, so a file is never misread: `RCLF`, the
 * kernel's layout version, the file's role, the store's kind and the store's own format version, then a
 * CRC-32 of those bytes. Layout: 4 bytes magic, u16 LE layout, u8 role, u8 kind length, kind (ASCII),
 * u32 LE store format, u32 LE CRC-32 of everything before it.
 */
const MAGIC = Buffer.from('RCLF', 'ascii')
/** The kernel's own file layout; a file with another is refused. */
const KERNEL_LAYOUT = 1

/** Enough bytes for any header: 8, a kind of at most 64, format and checksum. */
export const HEADER_MAX_BYTES = 8 + 64 + 8

export type FileRole = 'log' | 'snapshot'
const ROLES: readonly FileRole[] = ['log', 'snapshot']

export interface FileIdentity {
  /** What store wrote the file, e.g. `knowledge-graph`; at most 64 ASCII characters. */
  kind: string
  /** The store's payload format, written in every new file; a file of another version is refused. */
  format: number
  /** Earlier formats this build still reads (a store whose new files its older builds must refuse, not misread). */
  reads?: readonly number[]
}

export function encodeHeader(role: FileRole, identity: FileIdentity): Buffer {
  const kind = Buffer.from(identity.kind, 'ascii')
  if (kind.length === 0 || kind.length > 64) throw new RangeError(`store kind must be 1 to 64 ASCII characters: ${identity.kind}`)
  const out = Buffer.alloc(4 + 2 + 1 + 1 + kind.length + 4 + 4)
  MAGIC.copy(out, 0)
  out.writeUInt16LE(KERNEL_LAYOUT, 4)
  out.writeUInt8(ROLES.indexOf(role), 6)
  out.writeUInt8(kind.length, 7)
  kind.copy(out, 8)
  out.writeUInt32LE(identity.format, 8 + kind.length)
  out.writeUInt32LE(crc32(out.subarray(0, out.length - 4)), out.length - 4)
  return out
}

/**
 * Checks the header `file` starts with and returns its length. Throws UnexpectedResponseError naming
 * the file and what is wrong: not a store file, a damaged header, another layout, role, kind or format.
 */
export function checkHeader(bytes: Buffer, file: string, role: FileRole, identity: FileIdentity, backend: string): number {
  const refuse = (why: string) => new UnexpectedResponseError(backend, `${file} is refused: ${why}`)
  if (bytes.length < 8 || !bytes.subarray(0, 4).equals(MAGIC)) throw refuse('not a recall store file (no RCLF header)')
  const kindLength = bytes.readUInt8(7)
  const length = 8 + kindLength + 8
  if (bytes.length < length) throw refuse('header is cut short')
  if (crc32(bytes.subarray(0, length - 4)) !== bytes.readUInt32LE(length - 4)) throw refuse('header checksum mismatch')
  const layout = bytes.readUInt16LE(4)
  if (layout !== KERNEL_LAYOUT) throw refuse(`kernel layout ${layout}, this build reads layout ${KERNEL_LAYOUT}`)
  const foundRole = ROLES[bytes.readUInt8(6)]
  if (foundRole !== role) throw refuse(`it is a ${foundRole ?? 'unknown'} file, expected a ${role}`)
  const kind = bytes.toString('ascii', 8, 8 + kindLength)
  if (kind !== identity.kind) throw refuse(`it belongs to store kind ${kind}, expected ${identity.kind}`)
  const format = bytes.readUInt32LE(8 + kindLength)
  if (format !== identity.format && !identity.reads?.includes(format)) {
    throw refuse(`${kind} format version ${format}, this build reads version ${[...identity.reads ?? [], identity.format].join(' or ')}`)
  }
  return length
}

/**
 * The embedded vector store's log: a write as a log record (framed by the store kernel's checksummed frame,
 * `providers/embedded/frame.ts`). A partition's snapshot is `snapshot-codec.ts`.
 */
import { endianness } from 'node:os'
import { encodeFrame, readFrameAt } from '../embedded/frame.js'
import type { DecodedWrite } from './matrix.js'
import type { VectorPayload, VectorRecord, VectorWrite } from './port.js'
import { detachPayload } from './payload.js'

const LITTLE_ENDIAN_HOST = endianness() === 'LE'

/** A copy of `vector` scaled to unit length; a zero vector stays zero (it scores 0 against everything). */
export function toUnit(vector: Float32Array, what: string): Float32Array {
  const out = new Float32Array(vector.length)
  const nonFiniteAt = writeUnit(vector, out, 0)
  if (nonFiniteAt >= 0) throw nonFinite(what, nonFiniteAt)
  return out
}

/** Writes `vector` scaled to unit length into `out[at ..]`, which holds zeros; answers the index of a non-finite component, or -1. */
function writeUnit(vector: Float32Array, out: Float32Array, at: number): number {
  let norm = 0
  for (let i = 0; i < vector.length; i++) {
    const x = vector[i]!
    if (!Number.isFinite(x)) return i
    norm += x * x
  }
  if (norm === 0) return -1
  const scale = 1 / Math.sqrt(norm)
  for (let i = 0; i < vector.length; i++) out[at + i] = vector[i]! * scale
  return -1
}

const nonFinite = (what: string, at: number): RangeError => new RangeError(`${what} vector has a non-finite component at ${at}`)

/** Validates a write and turns it into its log form; throws before anything is written. */
export function prepareWrite(dims: number, seq: number, change: VectorWrite): DecodedWrite {
  const upserts = change.upsert ?? []
  const vectors = new Float32Array(upserts.length * dims)
  const records: [string, VectorPayload][] = []
  upserts.forEach((record: VectorRecord, i) => {
    if (typeof record.id !== 'string' || record.id.length === 0) throw new RangeError('record id must be a non-empty string')
    if (record.vector.length !== dims) {
      throw new RangeError(`record ${record.id} has ${record.vector.length} dimensions, expected ${dims}`)
    }
    if (typeof record.payload?.doc_id !== 'string') throw new RangeError(`record ${record.id} has no payload.doc_id`)
    // as on Qdrant, where the payload carries the record id under `id` and its namespace under `namespace`
    if ('id' in record.payload && record.payload.id !== record.id) {
      throw new RangeError(`record ${record.id}: payload key "id" is reserved for the record id`)
    }
    if ('namespace' in record.payload) throw new RangeError(`record ${record.id}: payload key "namespace" is reserved`)
    // into the write's vectors at once (a copy per record, and the message's string, were made for every record)
    const nonFiniteAt = writeUnit(record.vector, vectors, i * dims)
    if (nonFiniteAt >= 0) throw nonFinite(`record ${record.id}`, nonFiniteAt)
    records.push([record.id, detachPayload(record.payload)])
  })
  return { seq, deleteDocIds: [...(change.deleteDocIds ?? [])], records, vectors }
}

// Log record: the kernel's frame (u32 body length, u32 CRC-32 of the body, body). Body: u32 JSON length, JSON
// {seq, del, up: [[id, payload]…]}, zero padding to 4 bytes, float32 LE vectors, zero padding to 4 bytes.
export function encodeRecord(write: DecodedWrite, dims: number): Buffer {
  const json = Buffer.from(JSON.stringify({ seq: write.seq, del: write.deleteDocIds, up: write.records }))
  const floatsAt = align4(4 + json.length)
  const body = Buffer.alloc(align4(floatsAt + write.records.length * dims * 4))
  body.writeUInt32LE(json.length, 0)
  json.copy(body, 4)
  writeFloats(body, floatsAt, write.vectors)
  return encodeFrame(body)
}

/** The record at `offset`, or undefined when the log ends there or the record is torn or corrupt. */
export function decodeRecordAt(log: Buffer, offset: number, dims: number): { write: DecodedWrite; end: number } | undefined {
  const frame = readFrameAt(log, offset)
  if (!frame || frame.body.length < 4) return undefined
  const { body, end } = frame
  try {
    const jsonLength = body.readUInt32LE(0)
    const parsed = JSON.parse(body.toString('utf8', 4, 4 + jsonLength)) as {
      seq: number
      del: string[]
      up: [string, VectorPayload][]
    }
    const floatsAt = align4(4 + jsonLength)
    const count = parsed.up.length * dims
    if (floatsAt + count * 4 > body.length) return undefined
    const vectors = readFloats(body, floatsAt, count)
    return { write: { seq: parsed.seq, deleteDocIds: parsed.del, records: parsed.up, vectors }, end }
  } catch {
    return undefined
  }
}

export function align4(n: number): number {
  return (n + 3) & ~3
}

export function writeFloats(into: Buffer, at: number, values: Float32Array): void {
  if (LITTLE_ENDIAN_HOST) {
    into.set(new Uint8Array(values.buffer, values.byteOffset, values.byteLength), at)
    return
  }
  for (let i = 0; i < values.length; i++) into.writeFloatLE(values[i]!, at + i * 4)
}

/**
 * The floats at `at`: a view of `from`'s own bytes when they start on a float boundary (a snapshot read whole, whose
 * floats are 4-aligned: no copy of hundreds of MiB at start-up), else a copy. The caller only reads them, and keeps
 * neither the view nor the file's bytes.
 */
export function readFloats(from: Buffer, at: number, count: number): Float32Array {
  if (LITTLE_ENDIAN_HOST && (from.byteOffset + at) % 4 === 0) return new Float32Array(from.buffer, from.byteOffset + at, count)
  const out = new Float32Array(count)
  if (LITTLE_ENDIAN_HOST) {
    new Uint8Array(out.buffer).set(from.subarray(at, at + count * 4))
    return out
  }
  for (let i = 0; i < count; i++) out[i] = from.readFloatLE(at + i * 4)
  return out
}

/**
 * The embedded vector store's snapshot of one partition. Format 2 (`RVS2`, written since issue 44) keeps what start-up
 * needs of a record in columns (ids, a table of document ids, the pool hash of each vector) and each payload as its own
 * JSON, parsed on first use; format 1 (`RVS1`, one JSON array of `[id, payload]`) is still read. A build that knows only
 * format 1 refuses a format-2 file by its magic ("bad header"), never misreads it.
 */
import { closeSync } from 'node:fs'
import { crc32 } from 'node:zlib'
import { readFullyAt, readWholeFile } from '../embedded/durable-file.js'
import { backendName, UnexpectedResponseError } from '../errors.js'
import { align4, readFloats, writeFloats } from './log-codec.js'
import type { HeldPayloads } from './held-payloads.js'
import type { IdList } from './record-ids.js'
import { Collection } from './matrix.js'
import type { VectorPayload } from './port.js'
import type { SharedRows } from './shared-rows.js'

const BACKEND = backendName('vector-store', 'memory')
const MAGIC_1 = 0x31535652 // 'RVS1' read as a little-endian u32
const MAGIC_2 = 0x32535652 // 'RVS2'
const HEADER_1_BYTES = 28
const HEADER_2_BYTES = 36

/** What a snapshot is written from: a partition, or a copy of one frozen for a compaction off its write queue. */
export interface SnapshotSource {
  readonly dims: number
  readonly seq: number
  readonly ids: IdList
  /** Record `i`'s vector is `pool.row(rows[i])`. */
  readonly rows: readonly number[]
  readonly payloads: HeldPayloads
  readonly pool: SharedRows
}

/** A snapshot's bytes, and where its payloads' JSON lies in them (record `i`'s is payload `i`). */
export interface EncodedSnapshot {
  bytes: Buffer
  payloadsAt: number
  ends: Uint32Array
}

/** Where the payloads of a snapshot written in parts lie, and its length. */
export type SnapshotLayout = Omit<EncodedSnapshot, 'bytes'> & { length: number }

/** Records encoded between two pauses of {@link snapshotParts}: a few milliseconds of work. */
const SLICE_RECORDS = 2048

// Format 2: u32 magic, u32 CRC-32 of everything after byte 8, u32 dims, u32 count, f64 seq, u32 length of the ids'
// JSON, u32 length of the document table's JSON, u32 bytes of payload JSON; then the ids (a JSON array of strings),
// the document table (a JSON array of the distinct doc ids), zero padding to 4 bytes, u32 × count document numbers,
// u32 × count payload ends (in the payload bytes), u32 × count pool hashes (SharedRows.hashAt), the payloads' JSON one
// after another, zero padding to 4 bytes, count × dims float32 LE. Every number little-endian.

/**
 * A slice of the records' vectors, read from the pool when the writer takes it: at once (`now`), or with the event loop
 * running while an int8 pool's file is read (`later`: read a row at a time on the main thread, a 1M ingest's snapshots
 * held the loop for seconds once the page cache had let the rows go).
 */
export interface FloatSlice {
  now(): Buffer
  later(): Promise<Buffer>
}

/**
 * Format 2 as parts in file order, with `null` between slices of work (a writer may let other work run there). The first
 * part is the header with its CRC-32 field zero: the CRC of every byte after byte 8, the header's rest included, goes at
 * byte 4 once the last part is out. Everything is read from `source` as the parts are asked for; the vectors as
 * {@link FloatSlice}s.
 */
export function* snapshotParts(source: SnapshotSource): Generator<Uint8Array | FloatSlice | null, SnapshotLayout> {
  const { ids, rows, payloads, pool, dims } = source
  const count = ids.length
  const docNumbers = new Map<string, number>()
  const docOf = new Uint32Array(count)
  const hashes = new Uint32Array(count)
  // the payloads held in memory as JSON now; those still in the last snapshot's file are read into place below
  const inMemory = new Map<number, Uint8Array>()
  const ends = new Uint32Array(count)
  let payloadBytes = 0
  // the ids' JSON in pieces: the array's elements, joined by commas, are the same bytes as the array's JSON
  const idPieces: Buffer[] = []
  for (let from = 0; from < count; from += SLICE_RECORDS) {
    const to = Math.min(count, from + SLICE_RECORDS)
    for (let i = from; i < to; i++) {
      const docId = payloads.docIdAt(i)
      let n = docNumbers.get(docId)
      if (n === undefined) docNumbers.set(docId, (n = docNumbers.size))
      docOf[i] = n
      hashes[i] = pool.hashAt(rows[i]!)
      let length = payloads.storedLength(i)
      if (length < 0) {
        const json = payloads.json(i)
        inMemory.set(i, json)
        length = json.length
      }
      ends[i] = payloadBytes += length
    }
    const json = JSON.stringify(ids.slice(from, to))
    idPieces.push(Buffer.from(from === 0 ? json.slice(0, -1) : `,${json.slice(1, -1)}`))
    yield null
  }
  if (count === 0) idPieces.push(Buffer.from('['))
  idPieces.push(Buffer.from(']'))
  const idsLength = idPieces.reduce((sum, piece) => sum + piece.length, 0)
  const docs = Buffer.from(JSON.stringify([...docNumbers.keys()]))
  docNumbers.clear()

  const columnsAt = align4(HEADER_2_BYTES + idsLength + docs.length)
  const payloadsAt = columnsAt + 3 * 4 * count
  const floatsAt = align4(payloadsAt + payloadBytes)
  const header = Buffer.alloc(HEADER_2_BYTES)
  header.writeUInt32LE(MAGIC_2, 0)
  header.writeUInt32LE(dims, 8)
  header.writeUInt32LE(count, 12)
  header.writeDoubleLE(source.seq, 16)
  header.writeUInt32LE(idsLength, 24)
  header.writeUInt32LE(docs.length, 28)
  header.writeUInt32LE(payloadBytes, 32)
  yield header
  yield* idPieces
  idPieces.length = 0
  yield docs
  yield Buffer.alloc(columnsAt - (HEADER_2_BYTES + idsLength + docs.length))
  for (const column of [docOf, ends, hashes]) {
    for (let from = 0; from < count; from += 8 * SLICE_RECORDS) {
      const slice = column.subarray(from, Math.min(count, from + 8 * SLICE_RECORDS))
      const bytes = Buffer.alloc(slice.length * 4)
      writeU32s(bytes, 0, slice)
      yield bytes
      yield null
    }
  }
  for (let from = 0; from < count; from += SLICE_RECORDS) {
    const to = Math.min(count, from + SLICE_RECORDS)
    const start = from === 0 ? 0 : ends[from - 1]!
    const slice = Buffer.alloc(ends[to - 1]! - start)
    payloads.inOrder(() => {
      for (let i = from; i < to; i++) slice.set(inMemory.get(i) ?? payloads.json(i), (i === 0 ? 0 : ends[i - 1]!) - start)
    })
    for (let i = from; i < to; i++) inMemory.delete(i)
    yield slice
    yield null
  }
  yield Buffer.alloc(floatsAt - (payloadsAt + payloadBytes))
  for (let from = 0; from < count; from += SLICE_RECORDS) {
    yield floatSlice(pool, rows, from, Math.min(count, from + SLICE_RECORDS), dims)
    yield null
  }
  return { payloadsAt, ends, length: floatsAt + count * dims * 4 }
}

/** The whole snapshot of `source` at once, in memory. */
export function encodeSnapshot(source: SnapshotSource): EncodedSnapshot {
  const parts: Uint8Array[] = []
  const encoding = snapshotParts(source)
  let next = encoding.next()
  for (; !next.done; next = encoding.next()) if (next.value) parts.push(next.value instanceof Uint8Array ? next.value : next.value.now())
  const out = Buffer.concat(parts)
  out.writeUInt32LE(crc32(out.subarray(8)), 4)
  return { bytes: out, payloadsAt: next.value.payloadsAt, ends: next.value.ends }
}

/**
 * The partition a snapshot (format 1 or 2) holds, its vectors taken into `poolOf(dims)`. `fd` is the file `bytes` were
 * read from, open for reading: once the snapshot is read, it is the partition's to close (at once when no payload is
 * read from it: format 2's payloads are, when used); a throw leaves it the caller's.
 */
export function decodeSnapshot(bytes: Buffer, fd: number, collection: string, poolOf: (dims: number) => SharedRows): Collection {
  const corrupt = (why: string): UnexpectedResponseError =>
    new UnexpectedResponseError(BACKEND, `snapshot of vector collection ${collection} is corrupt: ${why}`)
  const magic = bytes.length >= HEADER_1_BYTES ? bytes.readUInt32LE(0) : 0
  if (!(magic === MAGIC_1 || (magic === MAGIC_2 && bytes.length >= HEADER_2_BYTES))) throw corrupt('bad header')
  if (crc32(bytes.subarray(8)) !== bytes.readUInt32LE(4)) throw corrupt('checksum mismatch')
  const dims = bytes.readUInt32LE(8)
  const count = bytes.readUInt32LE(12)
  // no room reserved for `count` rows: most of a derived collection's vectors are already held by the chunks'
  const c = new Collection(dims, poolOf(dims))
  if (magic === MAGIC_2) readFormat2(bytes, fd, c, count, corrupt)
  else {
    readFormat1(bytes, c, count, corrupt)
    closeSync(fd)
  }
  c.seq = bytes.readDoubleLE(16)
  return c
}

function readFormat1(bytes: Buffer, c: Collection, count: number, corrupt: (why: string) => Error): void {
  const jsonLength = bytes.readUInt32LE(24)
  const rows = JSON.parse(bytes.toString('utf8', HEADER_1_BYTES, HEADER_1_BYTES + jsonLength)) as [string, VectorPayload][]
  if (rows.length !== count) throw corrupt('row count mismatch')
  const vectors = readFloats(bytes, align4(HEADER_1_BYTES + jsonLength), count * c.dims)
  rows.forEach(([id, payload], row) => c.upsert(id, payload, vectors, row * c.dims))
}

/** Where a format-2 snapshot's sections lie, from its header; a file whose length is not theirs is refused. */
function layoutOf(head: Buffer, size: number, corrupt: (why: string) => Error) {
  const dims = head.readUInt32LE(8)
  const count = head.readUInt32LE(12)
  const idsLength = head.readUInt32LE(24)
  const docsLength = head.readUInt32LE(28)
  const payloadBytes = head.readUInt32LE(32)
  const columnsAt = align4(HEADER_2_BYTES + idsLength + docsLength)
  const payloadsAt = columnsAt + 3 * 4 * count
  const floatsAt = align4(payloadsAt + payloadBytes)
  if (floatsAt + count * dims * 4 !== size) throw corrupt('section lengths do not add up to the file')
  return { dims, count, idsLength, docsLength, payloadBytes, columnsAt, payloadsAt, floatsAt }
}

function readFormat2(bytes: Buffer, fd: number, c: Collection, count: number, corrupt: (why: string) => Error): void {
  const { idsLength, docsLength, payloadBytes, columnsAt, payloadsAt, floatsAt } = layoutOf(bytes, bytes.length, corrupt)
  const ids = JSON.parse(bytes.toString('utf8', HEADER_2_BYTES, HEADER_2_BYTES + idsLength)) as string[]
  const docs = JSON.parse(bytes.toString('utf8', HEADER_2_BYTES + idsLength, HEADER_2_BYTES + idsLength + docsLength)) as string[]
  if (ids.length !== count) throw corrupt('row count mismatch')
  const [docOf, ends, hashes] = [0, 1, 2].map((k) => readU32s(bytes, columnsAt + k * 4 * count, count)) as [Uint32Array, Uint32Array, Uint32Array]
  checkColumns(docOf, ends, docs.length, payloadBytes, corrupt)
  const vectors = readFloats(bytes, floatsAt, count * c.dims)
  if (!c.fillStored(ids, docs, docOf, vectors, hashes)) throw corrupt('a record id comes twice')
  // last: nothing after it throws, so the file is the partition's only once it is read
  c.payloads.holdStored({ fd, at: payloadsAt, ends }, count)
}

function checkColumns(docOf: Uint32Array, ends: Uint32Array, docCount: number, payloadBytes: number, corrupt: (why: string) => Error): void {
  for (let i = 0; i < docOf.length; i++) {
    if (docOf[i]! >= docCount) throw corrupt(`record ${i} names document ${docOf[i]} of ${docCount}`)
    if (ends[i]! < (i === 0 ? 0 : ends[i - 1]!) || ends[i]! > payloadBytes) throw corrupt(`payload ${i} ends out of order`)
  }
}

/**
 * Bytes {@link readSnapshotFile} reads at a time (the vectors a whole number of rows). Above glibc's largest dynamic mmap
 * threshold (32 MiB), so that each buffer is mapped on its own and given back when freed: buffers of 16-24 MiB were
 * carved from malloc's arena once earlier frees had raised the threshold (unless `MALLOC_MMAP_THRESHOLD_` is set, as
 * `scripts/start.sh` sets it), and a 1M start-up kept 0.9 and 1.8 GB more resident after it than before the cut.
 */
const PIECE_BYTES = 64 * 1_048_576

/**
 * The partition a snapshot file holds, as {@link decodeSnapshot} gives it from the file's bytes, without the file whole
 * in memory (format 2; a format-1 file, which only versions before issue 44's columns wrote, is read whole). The file is
 * read once, in order, through buffers of its own: the columns whole, the payloads' section for its checksum alone (a
 * payload is read from the file when used), the vectors a slice of rows at a time, each slice taken into the pool as it
 * comes; the checksum is compared after the last byte, and a mismatch gives back every row taken. Read whole, a 1M
 * namespace's snapshots (2-3 GB each) stood beside all that was loaded before them: a restart peaked at 9.3 GB resident
 * for 5.2 after it, at 6.0 read this way (bench/results/memory.log.md, "The vector files read a piece at a time"). `fd`
 * and `size`: the file open for reading and its length; `fd` is the partition's as in decodeSnapshot (the caller's on a
 * throw).
 */
export async function readSnapshotFile(fd: number, size: number, collection: string, poolOf: (dims: number) => SharedRows, sliceRows?: number): Promise<Collection> {
  const corrupt = (why: string): UnexpectedResponseError =>
    new UnexpectedResponseError(BACKEND, `snapshot of vector collection ${collection} is corrupt: ${why}`)
  const head = Buffer.alloc(Math.min(size, HEADER_2_BYTES))
  await readFullyAt(fd, head, 0)
  if (head.length < HEADER_2_BYTES || head.readUInt32LE(0) !== MAGIC_2) return decodeSnapshot(await readWholeFile(fd), fd, collection, poolOf)
  let crc = crc32(head.subarray(8))
  const { dims, count, idsLength, docsLength, payloadBytes, columnsAt, payloadsAt, floatsAt } = layoutOf(head, size, corrupt)
  // the ids, the document table, the padding and the columns, in file order
  const front = Buffer.allocUnsafe(payloadsAt - HEADER_2_BYTES)
  await readFullyAt(fd, front, HEADER_2_BYTES)
  crc = crc32(front, crc)
  const columns = front.subarray(columnsAt - HEADER_2_BYTES)
  const hashes = readU32s(columns, 2 * 4 * count, count)
  // the payloads and the padding after them, for the checksum
  const piece = Buffer.allocUnsafe(Math.min(PIECE_BYTES, Math.max(1, floatsAt - payloadsAt)))
  for (let at = payloadsAt; at < floatsAt; at += piece.length) {
    const part = piece.subarray(0, Math.min(piece.length, floatsAt - at))
    await readFullyAt(fd, part, at)
    crc = crc32(part, crc)
  }
  const c = new Collection(dims, poolOf(dims))
  const rows = new Int32Array(count)
  let taken = 0
  const giveBack = () => {
    for (let i = 0; i < taken; i++) c.pool.release(rows[i]!)
  }
  try {
    const rowBytes = dims * 4
    const slice = Math.max(1, Math.min(sliceRows ?? Math.floor(PIECE_BYTES / rowBytes), count))
    const floats = Buffer.allocUnsafe(slice * rowBytes)
    for (let from = 0; from < count; from += slice) {
      const n = Math.min(slice, count - from)
      const part = floats.subarray(0, n * rowBytes)
      await readFullyAt(fd, part, floatsAt + from * rowBytes)
      crc = crc32(part, crc)
      rows.set(c.pool.acquireAll(readFloats(part, 0, n * dims), n, hashes.subarray(from, from + n)), from)
      taken = from + n
    }
    if (crc !== head.readUInt32LE(4)) throw corrupt('checksum mismatch')
    const ids = JSON.parse(front.toString('utf8', 0, idsLength)) as string[]
    const docs = JSON.parse(front.toString('utf8', idsLength, idsLength + docsLength)) as string[]
    if (ids.length !== count) throw corrupt('row count mismatch')
    const [docOf, ends] = [0, 1].map((k) => readU32s(columns, k * 4 * count, count)) as [Uint32Array, Uint32Array]
    checkColumns(docOf, ends, docs.length, payloadBytes, corrupt)
    // placeStored gives back every row itself when it refuses
    const placed = c.placeStored(ids, docs, docOf, rows)
    taken = 0
    if (!placed) throw corrupt('a record id comes twice')
    c.payloads.holdStored({ fd, at: payloadsAt, ends }, count)
  } catch (error) {
    giveBack()
    throw error
  }
  c.seq = head.readDoubleLE(16)
  return c
}

/** Records `from` to `to`'s vectors in record order, without the pool's stride padding. */
function floatSlice(pool: SharedRows, rows: readonly number[], from: number, to: number, dims: number): FloatSlice {
  const bytesOf = (floats: Float32Array): Buffer => {
    const slice = Buffer.alloc(floats.length * 4)
    writeFloats(slice, 0, floats)
    return slice
  }
  return {
    now: () => {
      const floats = new Float32Array((to - from) * dims)
      pool.rowsInto(rows, from, to, floats)
      return bytesOf(floats)
    },
    later: async () => {
      const floats = new Float32Array((to - from) * dims)
      await pool.rowsIntoAsync(rows, from, to, floats)
      return bytesOf(floats)
    }
  }
}

function writeU32s(into: Buffer, at: number, values: Uint32Array): void {
  for (let i = 0; i < values.length; i++) into.writeUInt32LE(values[i]!, at + i * 4)
}

/** `count` little-endian u32 at `at`, as an array of their own. */
function readU32s(from: Buffer, at: number, count: number): Uint32Array {
  const out = new Uint32Array(count)
  for (let i = 0; i < count; i++) out[i] = from.readUInt32LE(at + i * 4)
  return out
}

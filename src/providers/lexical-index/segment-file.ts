import { open, type FileHandle } from 'node:fs/promises'
import { endianness } from 'node:os'
import { crc32 } from 'node:zlib'
import type { ForwardIndex, PackedUints, SegmentData } from './segment.js'

/**
 * A segment on disk: `RLX1`, u32 header length, a JSON header (counts and, per section, its byte offset,
 * length and CRC-32), then each typed array's bytes (little-endian) at an 8-byte aligned offset. Loading
 * reads each section straight into its own buffer; the forward index is only read for merges and removals.
 */
const MAGIC = 0x31584c52 // 'RLX1' read as a little-endian u32
const ALIGN = 8

type ArrayKind = 'u16' | 'u32' | 'i32'
const SECTIONS = {
  idChars: 'u16', idStarts: 'u32', idOrder: 'u32', idRank: 'u32', hashes: 'u32', lengths: 'u32',
  termChars: 'u16', termStarts: 'u32', termTable: 'i32', postStarts: 'u32', postDocs: 'u32', postFreqs: 'u32',
  maxFreq: 'u32', minLength: 'u32', docTermStarts: 'u32', docTerms: 'u32'
} as const satisfies Record<string, ArrayKind>
type SectionName = keyof typeof SECTIONS
const FORWARD: readonly SectionName[] = ['docTermStarts', 'docTerms']

interface Header {
  name: string
  docCount: number
  termCount: number
  totalLength: number
  sections: Record<SectionName, [offset: number, bytes: number, crc: number]>
}

class CorruptSegmentError extends Error {}

function assertLittleEndian(): void {
  if (endianness() !== 'LE') throw new Error('the lexical index files are little-endian; this host is big-endian')
}

const align = (n: number) => Math.ceil(n / ALIGN) * ALIGN

function bytesOf(a: Uint16Array | Uint32Array | Int32Array): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength)
}

/** A packed array (segment.ts `packSegment`) as the file's 32 bits. */
const wide = (a: PackedUints): Uint32Array => (a instanceof Uint32Array ? a : Uint32Array.from(a))

/** Writes the segment to `path` (a new file; the caller renames or references it once complete). */
export async function writeSegment(path: string, data: SegmentData, forward: ForwardIndex): Promise<number> {
  assertLittleEndian()
  const arrays: Record<SectionName, Uint16Array | Uint32Array | Int32Array> = { ...pickSections(data), ...forward }
  const names = Object.keys(SECTIONS) as SectionName[]
  const sections = {} as Header['sections']
  // offsets relative to the end of the header, fixed up below once the header's size is known
  let at = 0
  for (const s of names) {
    const bytes = bytesOf(arrays[s])
    sections[s] = [at, bytes.length, crc32(bytes)]
    at = align(at + bytes.length)
  }
  const header: Header = { name: data.name, docCount: data.docCount, termCount: data.termCount, totalLength: data.totalLength, sections }
  let json = Buffer.from(JSON.stringify(header))
  let base = align(8 + json.length + 256)
  for (const s of names) sections[s][0] += base
  json = Buffer.from(JSON.stringify(header))
  if (8 + json.length > base) throw new Error('segment header grew past its room')
  const head = Buffer.alloc(base)
  head.writeUInt32LE(MAGIC, 0)
  head.writeUInt32LE(json.length, 4)
  json.copy(head, 8)
  const fh = await open(path, 'wx')
  try {
    await fh.write(head, 0, head.length, 0)
    for (const s of names) {
      const bytes = bytesOf(arrays[s])
      if (bytes.length > 0) await fh.write(bytes, 0, bytes.length, sections[s][0])
    }
    const end = sections[names[names.length - 1]!]
    await fh.truncate(align(end[0] + end[1]))
    base = align(end[0] + end[1])
  } finally {
    await fh.close()
  }
  return base
}

function pickSections(d: SegmentData) {
  const { idChars, idStarts, idOrder, idRank, hashes, lengths, termChars, termStarts, termTable, postStarts, postDocs, postFreqs, maxFreq, minLength } = d
  return {
    idChars, idStarts, idOrder, idRank, hashes, lengths, termChars, termStarts, termTable, postStarts,
    postDocs: wide(postDocs), postFreqs: wide(postFreqs), maxFreq: wide(maxFreq), minLength: wide(minLength)
  }
}

async function readHeader(fh: FileHandle, path: string): Promise<Header> {
  const head = Buffer.alloc(8)
  const { bytesRead } = await fh.read(head, 0, 8, 0)
  if (bytesRead < 8 || head.readUInt32LE(0) !== MAGIC) throw new CorruptSegmentError(`${path}: not a lexical segment`)
  const length = head.readUInt32LE(4)
  const json = Buffer.alloc(length)
  if ((await fh.read(json, 0, length, 8)).bytesRead < length) throw new CorruptSegmentError(`${path}: header cut short`)
  try {
    return JSON.parse(json.toString('utf8')) as Header
  } catch {
    throw new CorruptSegmentError(`${path}: header is not JSON`)
  }
}

async function readSection(fh: FileHandle, path: string, header: Header, s: SectionName): Promise<Uint16Array | Uint32Array | Int32Array> {
  const [offset, bytes, crc] = header.sections[s]
  const buffer = new ArrayBuffer(bytes)
  const view = new Uint8Array(buffer)
  let done = 0
  while (done < bytes) {
    const { bytesRead } = await fh.read(view, done, bytes - done, offset + done)
    if (bytesRead === 0) throw new CorruptSegmentError(`${path}: section ${s} cut short`)
    done += bytesRead
  }
  if (crc32(view) !== crc) throw new CorruptSegmentError(`${path}: section ${s} fails its checksum`)
  const kind = SECTIONS[s]
  return kind === 'u16' ? new Uint16Array(buffer) : kind === 'u32' ? new Uint32Array(buffer) : new Int32Array(buffer)
}

/** Reads and checks a segment (and its forward index when asked). Throws CorruptSegmentError on any mismatch. */
export async function readSegment(path: string, withForward: true): Promise<{ data: SegmentData; forward: ForwardIndex }>
export async function readSegment(path: string, withForward: false): Promise<{ data: SegmentData }>
export async function readSegment(path: string, withForward: boolean): Promise<{ data: SegmentData; forward?: ForwardIndex }> {
  assertLittleEndian()
  const fh = await open(path, 'r')
  try {
    const header = await readHeader(fh, path)
    const arrays = {} as Record<SectionName, Uint16Array | Uint32Array | Int32Array>
    for (const s of Object.keys(SECTIONS) as SectionName[]) {
      if (!withForward && FORWARD.includes(s)) continue
      arrays[s] = await readSection(fh, path, header, s)
    }
    const data = {
      name: header.name, docCount: header.docCount, termCount: header.termCount, totalLength: header.totalLength, ...arrays
    } as unknown as SegmentData
    if (data.idStarts.length !== data.docCount + 1 || data.postStarts.length !== data.termCount + 1) {
      throw new CorruptSegmentError(`${path}: counts do not match the arrays`)
    }
    if (!withForward) return { data }
    return { data, forward: { docTermStarts: arrays.docTermStarts as Uint32Array, docTerms: arrays.docTerms as Uint32Array } }
  } finally {
    await fh.close()
  }
}

/** The term ids of the given documents, concatenated (read from the forward index without loading it whole). */
export async function readDocumentTerms(path: string, ordinals: readonly number[]): Promise<Uint32Array> {
  assertLittleEndian()
  const fh = await open(path, 'r')
  try {
    const header = await readHeader(fh, path)
    const [startsAt] = header.sections.docTermStarts
    const [termsAt] = header.sections.docTerms
    const pair = Buffer.alloc(8)
    const rows: Uint32Array[] = []
    let total = 0
    for (const d of ordinals) {
      if (!(d >= 0 && d < header.docCount)) throw new CorruptSegmentError(`${path}: no document ${d}`)
      await fh.read(pair, 0, 8, startsAt + 4 * d)
      const from = pair.readUInt32LE(0)
      const to = pair.readUInt32LE(4)
      const row = new Uint32Array(to - from)
      if (row.length > 0) await fh.read(new Uint8Array(row.buffer), 0, row.byteLength, termsAt + 4 * from)
      rows.push(row)
      total += row.length
    }
    const out = new Uint32Array(total)
    let at = 0
    for (const r of rows) {
      out.set(r, at)
      at += r.length
    }
    return out
  } finally {
    await fh.close()
  }
}

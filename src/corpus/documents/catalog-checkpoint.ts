/**
 * A namespace's chunk catalog kept in a file of its own, so that a start-up reads it as one block instead of scrolling
 * every chunk's payload out of the vector store (issue 44). It is a checkpoint of a read structure, never a source of
 * truth: it names the vector store's stamp of the partition it was made from (`VectorStore.stamp`), and a file that is
 * missing, damaged, of another format or made from another state of the partition is not used (the library reads the
 * vector store instead).
 *
 * File (`RCC2`): u32 magic, u32 CRC-32 of every byte after the first 8, u32 length of the header's JSON, the header
 * (`{stamp, collection, namespace, chunks, lexical}`), then each of the catalog's columns (chunk-catalog.ts,
 * `CatalogColumns`, in `COLUMNS`' order) as a u32 count of pieces, each piece a u32 length and a JSON array of up to
 * `PIECE` of the column's entries; every number little-endian. In pieces, so that no string holds a whole column (V8's
 * limit on a string's length, ~512 M characters, was reached near 2.7M chunks when the columns were one JSON value) and
 * the event loop gets a turn between them. `RCC1` (the columns as one JSON value) is still read. A build that does not
 * know the file never opens it; a later format takes another magic.
 */
import { mkdir, readFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { crc32 } from 'node:zlib'
import { runStepsYielding, type LoadSteps } from '../../providers/embedded/load-steps.js'
import { writeFileDurably } from '../../providers/embedded/durable-file.js'
import { namespaceDir } from '../../providers/namespace.js'
import { ChunkCatalog, type CatalogColumns } from './chunk-catalog.js'

const MAGIC_ONE_VALUE = 0x31434352 // 'RCC1' read as a little-endian u32
const MAGIC = 0x32434352 // 'RCC2'
const FIXED_BYTES = 12
/** Entries of a column a piece holds: at 1M chunks' texts a piece is ~1.5 MB, parsed in a few milliseconds. */
export const PIECE = 8192
/** Bytes the checksum reads between turns. */
const CRC_SLICE = 16 * 2 ** 20

/** Every column (the type checks that none is missing), in the order the file holds them. */
const COLUMNS = Object.keys({
  versions: 0, shared: 0, headingPaths: 0, docs: 0, texts: 0, indexes: 0, headings: 0, anchors: 0, rare: 0
} satisfies Record<keyof CatalogColumns, 0>) as Array<keyof CatalogColumns>

interface Header {
  stamp: string
  collection: string
  namespace: string
  chunks: number
  /** The lexical index's digest of the catalog's chunks (`LexicalIndex.digest`), when it gives one. */
  lexical?: string
}

type Expected = Pick<Header, 'stamp' | 'collection' | 'namespace'>
type Read = { catalog: ChunkCatalog; lexical: string | undefined } | { unused: string }

/** Where a namespace's catalog of `collection` is kept under `dir` (`DATA_DIR/catalog`). */
export function checkpointFile(dir: string, collection: string, namespace: string): string {
  return join(namespaceDir(dir, namespace), `${encodeURIComponent(collection).replace(/\./g, '%2E')}.catalog`)
}

const u32 = (n: number): Buffer => {
  const b = Buffer.alloc(4)
  b.writeUInt32LE(n, 0)
  return b
}

/** The file's bytes, a piece of a column a step, then its checksum a slice a step. */
export function* encodeCheckpoint(catalog: ChunkCatalog, header: Omit<Header, 'chunks'>): LoadSteps<Buffer> {
  const columns = yield* catalog.toColumnsSteps()
  const head = Buffer.from(JSON.stringify({ ...header, chunks: catalog.size } satisfies Header))
  const parts: Buffer[] = [u32(MAGIC), u32(0), u32(head.length), head]
  for (const name of COLUMNS) {
    const column: readonly unknown[] = columns[name]
    parts.push(u32(Math.ceil(column.length / PIECE)))
    for (let at = 0; at < column.length; at += PIECE) {
      const piece = Buffer.from(JSON.stringify(column.slice(at, at + PIECE)))
      parts.push(u32(piece.length), piece)
      yield
    }
  }
  const out = Buffer.concat(parts)
  yield
  let crc = 0
  for (let at = 8; at < out.length; at += CRC_SLICE) {
    crc = crc32(out.subarray(at, Math.min(out.length, at + CRC_SLICE)), crc)
    yield
  }
  out.writeUInt32LE(crc, 4)
  return out
}

/** Reads the pieces of `bytes` after `at` back into columns; throws a RangeError naming what does not fit. */
function* readColumns(bytes: Buffer, at: number): LoadSteps<CatalogColumns> {
  const columns: Record<string, unknown[]> = {}
  const need = (n: number) => {
    if (at + n > bytes.length) throw new RangeError(`the file ends inside its columns (byte ${at})`)
  }
  for (const name of COLUMNS) {
    need(4)
    const pieces = bytes.readUInt32LE(at)
    at += 4
    const column: unknown[] = []
    for (let p = 0; p < pieces; p++) {
      need(4)
      const length = bytes.readUInt32LE(at)
      need(4 + length)
      const piece: unknown = JSON.parse(bytes.toString('utf8', at + 4, at + 4 + length))
      if (!Array.isArray(piece)) throw new RangeError(`a piece of ${name} is not an array`)
      column.push(...(piece as unknown[]))
      at += 4 + length
      yield
    }
    columns[name] = column
  }
  if (at !== bytes.length) throw new RangeError(`${bytes.length - at} bytes after the columns`)
  return columns as unknown as CatalogColumns
}

/**
 * The catalog in `bytes` when it was made from the partition in the state `stamp` names; otherwise why it is not used
 * (damaged, another format, another state of the partition, another collection or namespace).
 */
export function* decodeCheckpoint(bytes: Buffer, expect: Expected): LoadSteps<Read> {
  const magic = bytes.length < FIXED_BYTES ? undefined : bytes.readUInt32LE(0)
  if (magic !== MAGIC && magic !== MAGIC_ONE_VALUE) return { unused: 'another format' }
  let crc = 0
  for (let at = 8; at < bytes.length; at += CRC_SLICE) {
    crc = crc32(bytes.subarray(at, Math.min(bytes.length, at + CRC_SLICE)), crc)
    yield
  }
  if (crc !== bytes.readUInt32LE(4)) return { unused: 'damaged (checksum)' }
  const headEnd = FIXED_BYTES + bytes.readUInt32LE(8)
  let header: Header
  try {
    header = JSON.parse(bytes.toString('utf8', FIXED_BYTES, headEnd)) as Header
  } catch {
    return { unused: 'damaged (header)' }
  }
  if (header.collection !== expect.collection || header.namespace !== expect.namespace) return { unused: 'made for another partition' }
  if (header.stamp !== expect.stamp) return { unused: 'stale (the vector store changed since)' }
  try {
    const columns = magic === MAGIC ? yield* readColumns(bytes, headEnd) : JSON.parse(bytes.toString('utf8', headEnd)) as CatalogColumns
    const catalog = yield* ChunkCatalog.fromColumnsSteps(columns)
    if (catalog.size !== header.chunks) return { unused: `damaged (${catalog.size} chunks, the header says ${header.chunks})` }
    return { catalog, lexical: header.lexical }
  } catch (error) {
    return { unused: `damaged (${error instanceof Error ? error.message : String(error)})` }
  }
}

/** Reads the file (see `decodeCheckpoint`), the event loop given turns; a missing file is `unused` too. */
export async function readCheckpoint(file: string, expect: Expected): Promise<Read> {
  const bytes = await readFile(file).catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT') return undefined
    throw e
  })
  return bytes ? runStepsYielding(decodeCheckpoint(bytes, expect)) : { unused: 'none kept' }
}

/** Replaces the file atomically and durably (a crash leaves the old file or the new one); made with turns given. */
export async function writeCheckpoint(file: string, catalog: ChunkCatalog, header: Omit<Header, 'chunks'>): Promise<void> {
  const bytes = await runStepsYielding(encodeCheckpoint(catalog, header))
  await mkdir(dirname(file), { recursive: true })
  await writeFileDurably(file, bytes)
}

/**
 * A namespace's chunk catalog kept in a file of its own, so that a start-up reads it as one block instead of scrolling
 * every chunk's payload out of the vector store (issue 44). It is a checkpoint of a read structure, never a source of
 * truth: it names the vector store's stamp of the partition it was made from (`VectorStore.stamp`), and a file that is
 * missing, damaged, of another format or made from another state of the partition is not used (the library reads the
 * vector store instead).
 *
 * File: u32 magic `RCC1`, u32 CRC-32 of every byte after the first 8, u32 length of the header's JSON, the header
 * (`{stamp, collection, namespace, chunks, lexical}`), then the catalog's columns as JSON (chunk-catalog.ts, `CatalogColumns`),
 * every number little-endian. A build that does not know the file never opens it; a later format takes another magic.
 */
import { mkdir, readFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { crc32 } from 'node:zlib'
import { writeFileDurably } from '../../providers/embedded/durable-file.js'
import { namespaceDir } from '../../providers/namespace.js'
import { ChunkCatalog, type CatalogColumns } from './chunk-catalog.js'

const MAGIC = 0x31434352 // 'RCC1' read as a little-endian u32
const FIXED_BYTES = 12

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

function encodeCheckpoint(catalog: ChunkCatalog, header: Omit<Header, 'chunks'>): Buffer {
  const head = Buffer.from(JSON.stringify({ ...header, chunks: catalog.size } satisfies Header))
  const body = Buffer.from(JSON.stringify(catalog.toColumns()))
  const out = Buffer.alloc(FIXED_BYTES + head.length + body.length)
  out.writeUInt32LE(MAGIC, 0)
  out.writeUInt32LE(head.length, 8)
  head.copy(out, FIXED_BYTES)
  body.copy(out, FIXED_BYTES + head.length)
  out.writeUInt32LE(crc32(out.subarray(8)), 4)
  return out
}

/**
 * The catalog in `bytes` when it was made from the partition in the state `stamp` names; otherwise why it is not used
 * (damaged, another format, another state of the partition, another collection or namespace).
 */
function decodeCheckpoint(bytes: Buffer, expect: Expected): Read {
  if (bytes.length < FIXED_BYTES || bytes.readUInt32LE(0) !== MAGIC) return { unused: 'another format' }
  if (crc32(bytes.subarray(8)) !== bytes.readUInt32LE(4)) return { unused: 'damaged (checksum)' }
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
    const catalog = ChunkCatalog.fromColumns(JSON.parse(bytes.toString('utf8', headEnd)) as CatalogColumns)
    if (catalog.size !== header.chunks) return { unused: `damaged (${catalog.size} chunks, the header says ${header.chunks})` }
    return { catalog, lexical: header.lexical }
  } catch (error) {
    return { unused: `damaged (${error instanceof Error ? error.message : String(error)})` }
  }
}

/** Reads the file (see `decodeCheckpoint`); a missing file is `unused` too. */
export async function readCheckpoint(file: string, expect: Expected): Promise<Read> {
  const bytes = await readFile(file).catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT') return undefined
    throw e
  })
  return bytes ? decodeCheckpoint(bytes, expect) : { unused: 'none kept' }
}

/** Replaces the file atomically and durably (a crash leaves the old file or the new one). */
export async function writeCheckpoint(file: string, catalog: ChunkCatalog, header: Omit<Header, 'chunks'>): Promise<void> {
  await mkdir(dirname(file), { recursive: true })
  await writeFileDurably(file, encodeCheckpoint(catalog, header))
}

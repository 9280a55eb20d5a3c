import { crc32 } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { decodeCheckpoint, encodeCheckpoint, PIECE } from '../../src/corpus/documents/catalog-checkpoint.js'
import { ChunkCatalog } from '../../src/corpus/documents/chunk-catalog.js'
import { runSteps } from '../../src/providers/embedded/load-steps.js'

// The checkpoint's columns are kept in pieces of PIECE entries (catalog-checkpoint.ts): no string holds a whole
// column, and a read or a write gives the event loop a turn between pieces. These read the file by its documented
// layout, independently of the decoder, and check that the file the earlier build wrote (`RCC1`, the columns as one
// JSON value) is still read.
const HEADER = { stamp: 's1', collection: 'chunks', namespace: 'default' }
const EXPECT = { stamp: 's1', collection: 'chunks', namespace: 'default' }

function catalogOf(chunks: number): ChunkCatalog {
  const catalog = new ChunkCatalog()
  for (let i = 0; i < chunks; i++) {
    const doc = `d${Math.floor(i / 8)}`
    catalog.add({
      id: `${doc}#${i % 8}`, doc_id: doc, chunk_index: i % 8, source: `notes/${doc}.md`, text: `第${i}段：差旅报销与咳嗽随访。`,
      ...(i % 8 === 0 ? { title: `标题${i}`, metadata: { n: i } } : {}), ...(i % 3 === 0 ? { heading_path: ['一', `二${i % 5}`] } : {})
    })
  }
  return catalog
}

/** The file's columns as its layout says: magic, checksum, header, then per column a count of pieces of [length, JSON]. */
function layoutOf(bytes: Buffer) {
  const magic = bytes.toString('latin1', 0, 4)
  const headLength = bytes.readUInt32LE(8)
  const header = JSON.parse(bytes.toString('utf8', 12, 12 + headLength)) as Record<string, unknown>
  let at = 12 + headLength
  const columns: Array<{ pieces: number; entries: unknown[]; longest: number }> = []
  while (at < bytes.length) {
    const pieces = bytes.readUInt32LE(at)
    at += 4
    const entries: unknown[] = []
    let longest = 0
    for (let p = 0; p < pieces; p++) {
      const length = bytes.readUInt32LE(at)
      const piece = JSON.parse(bytes.toString('utf8', at + 4, at + 4 + length)) as unknown[]
      longest = Math.max(longest, piece.length)
      entries.push(...piece)
      at += 4 + length
    }
    columns.push({ pieces, entries, longest })
  }
  return { magic, checksumHolds: crc32(bytes.subarray(8)) === bytes.readUInt32LE(4), header, columns }
}

describe('the catalog checkpoint in pieces', () => {
  it('keeps each column in pieces of at most PIECE entries, every entry once, under a checksum of every byte after the first 8', () => {
    const chunks = 2 * PIECE + 100
    const catalog = catalogOf(chunks)
    const bytes = runSteps(encodeCheckpoint(catalog, HEADER))
    const file = layoutOf(bytes)
    expect(file.magic).toBe('RCC2')
    expect(file.checksumHolds).toBe(true)
    expect(file.header).toEqual({ ...HEADER, chunks })
    const columns = catalog.toColumns()
    const names = ['versions', 'shared', 'headingPaths', 'docs', 'texts', 'indexes', 'headings', 'anchors', 'rare'] as const
    expect(file.columns).toHaveLength(names.length)
    names.forEach((name, k) => {
      expect(file.columns[k]!.entries, name).toEqual(JSON.parse(JSON.stringify(columns[name])))
      expect(file.columns[k]!.pieces, name).toBe(Math.ceil(columns[name].length / PIECE))
      expect(file.columns[k]!.longest, name).toBeLessThanOrEqual(PIECE)
    })
    // the chunks' own columns span three pieces each
    expect(file.columns[names.indexOf('texts')]!.pieces).toBe(3)
  })

  it('reads back the catalog it was made from, a piece a step', () => {
    const catalog = catalogOf(2 * PIECE + 100)
    const bytes = runSteps(encodeCheckpoint(catalog, HEADER))
    const steps = decodeCheckpoint(bytes, EXPECT)
    let turns = 0
    let next = steps.next()
    while (!next.done) {
      turns++
      next = steps.next()
    }
    const read = next.value
    if (!('catalog' in read)) throw new Error(`not read: ${read.unused}`)
    expect(read.catalog.toColumns()).toEqual(catalog.toColumns())
    expect([...read.catalog.values()]).toEqual([...catalog.values()])
    // at least a step for each piece of the three chunk-sized columns' and the rest
    expect(turns).toBeGreaterThanOrEqual(3 * 5)
  })

  it('still reads the file the earlier build wrote (RCC1: the columns as one JSON value)', () => {
    const catalog = catalogOf(300)
    const head = Buffer.from(JSON.stringify({ ...HEADER, chunks: 300 }))
    const body = Buffer.from(JSON.stringify(catalog.toColumns()))
    const old = Buffer.alloc(12 + head.length + body.length)
    old.write('RCC1', 0, 'latin1')
    old.writeUInt32LE(head.length, 8)
    head.copy(old, 12)
    body.copy(old, 12 + head.length)
    old.writeUInt32LE(crc32(old.subarray(8)), 4)
    const read = runSteps(decodeCheckpoint(old, EXPECT))
    if (!('catalog' in read)) throw new Error(`not read: ${read.unused}`)
    expect([...read.catalog.values()]).toEqual([...catalog.values()])
  })

  it('a file whose pieces do not add up is not used, and says why', () => {
    const bytes = runSteps(encodeCheckpoint(catalogOf(40), HEADER))
    // one byte more at the end, the checksum made to hold over it: only the layout can tell
    const longer = Buffer.concat([bytes, Buffer.from([0x20])])
    longer.writeUInt32LE(crc32(longer.subarray(8)), 4)
    expect(runSteps(decodeCheckpoint(longer, EXPECT))).toEqual({ unused: 'damaged (1 bytes after the columns)' })
    const shorter = Buffer.from(bytes.subarray(0, bytes.length - 3))
    shorter.writeUInt32LE(crc32(shorter.subarray(8)), 4)
    expect(runSteps(decodeCheckpoint(shorter, EXPECT))).toMatchObject({ unused: expect.stringMatching(/^damaged \(the file ends inside its columns/) })
    expect(runSteps(decodeCheckpoint(bytes, { ...EXPECT, stamp: 's2' }))).toEqual({ unused: 'stale (the vector store changed since)' })
  })
})

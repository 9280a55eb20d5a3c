/**
 * A partition's snapshot and log read a piece at a time at load (`readSnapshotFile`, `replayFile`), against the same
 * bytes read whole (`decodeSnapshot`, `replay`): the same records, payloads and vectors for slices of 1 row to all of
 * them and log pieces of 8 bytes up (records cut by a piece's end, records longer than the piece, vectors shared between
 * records), a torn log tail ending where its last whole record ends, a damaged snapshot or one naming a record twice
 * refused with every row it took given back. Expected records are the ones the test wrote.
 */
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { encodeRecord } from '../../src/providers/vector-store/log-codec.js'
import { replay, replayFile } from '../../src/providers/vector-store/log-replay.js'
import { Collection, type DecodedWrite } from '../../src/providers/vector-store/matrix.js'
import { RowPool } from '../../src/providers/vector-store/row-pool.js'
import { decodeSnapshot, encodeSnapshot, readSnapshotFile } from '../../src/providers/vector-store/snapshot-codec.js'
import { seededRandom } from '../../src/evaluation/statistics.js'
import { withIds } from '../helpers/snapshot-source.js'

const dirs: string[] = []
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})
const tempFile = (name: string, bytes: Uint8Array): string => {
  const dir = mkdtempSync(join(tmpdir(), 'recall-read-pieces-'))
  dirs.push(dir)
  const file = join(dir, name)
  writeFileSync(file, bytes)
  return file
}

const DIMS = 8
const unit = (v: number[]): Float32Array => {
  const norm = Math.hypot(...v)
  return Float32Array.from(v, (x) => x / norm)
}
// 40 records over 12 distinct vectors (records share rows in the pool), payloads with text of varied length
const next = seededRandom(7)
const distinct = Array.from({ length: 12 }, () => unit(Array.from({ length: DIMS }, () => next() - 0.5)))
const records = Array.from({ length: 40 }, (_, i) => ({
  id: `doc${i % 9}#${i}`, docId: `doc${i % 9}`, vector: distinct[(i * 7) % 12]!, text: '资料'.repeat(1 + (i % 5)) + String(i)
}))

/** Every record as the partition holds it: id, payload, vector. */
const contents = (c: Collection) => c.ids.slice(0, c.size).map((id, i) => ({ id, payload: c.payloads.peek(i), vector: [...c.pool.row(c.rows[i]!)] }))

function written(): Collection {
  const c = new Collection(DIMS, new RowPool(DIMS, DIMS))
  records.forEach((r, i) => c.upsert(r.id, { doc_id: r.docId, text: r.text, n: i }, r.vector, 0))
  c.seq = 3
  return c
}

describe('a vector snapshot read a slice of rows at a time', () => {
  const { bytes } = encodeSnapshot(written())
  const file = tempFile('chunks.snap', bytes)
  const expected = records.map((r, i) => ({ id: r.id, payload: { doc_id: r.docId, text: r.text, n: i }, vector: [...r.vector] }))

  it('holds what the whole file decoded holds, for slices of every length', async () => {
    const wholeFd = openSync(file, 'r')
    const whole = decodeSnapshot(bytes, wholeFd, 'chunks', () => new RowPool(DIMS, DIMS))
    expect(contents(whole)).toEqual(expected)
    for (const slice of [1, 2, 3, 7, 40, 1000]) {
      const fd = openSync(file, 'r')
      const pool = new RowPool(DIMS, DIMS)
      const read = await readSnapshotFile(fd, bytes.length, 'chunks', () => pool, slice)
      expect(contents(read)).toEqual(expected)
      expect(read.seq).toBe(3)
      // the vectors held once each in the pool, as the whole decode holds them
      expect(pool.live).toBe(12)
      closeSync(fd)
    }
    closeSync(wholeFd)
  })

  it('is refused, every row it took given back, when a byte is damaged or a record id comes twice', async () => {
    const damaged = Buffer.from(bytes)
    damaged[damaged.length - 3] = damaged[damaged.length - 3]! ^ 0x10
    const twice = written()
    const ids = twice.ids.slice(0, twice.size)
    ids[5] = ids[0]!
    for (const [bad, why] of [[damaged, /corrupt: checksum mismatch/], [encodeSnapshot(withIds(twice, ids)).bytes, /corrupt: a record id comes twice/]] as const) {
      const badFile = tempFile('facets.snap', bad)
      for (const slice of [1, 3, 1000]) {
        const pool = new RowPool(DIMS, DIMS)
        pool.acquire(distinct[0]!, 0)
        const fd = openSync(badFile, 'r')
        await expect(readSnapshotFile(fd, bad.length, 'facets', () => pool, slice)).rejects.toThrow(why)
        closeSync(fd)
        expect(pool.live).toBe(1)
      }
    }
  })
})

describe('a vector log replayed a piece at a time', () => {
  // writes of 1 to 9 records, a delete among them; the largest record is longer than the small pieces below
  const writes: DecodedWrite[] = []
  for (let w = 0, at = 0; at < records.length; w++) {
    const batch = records.slice(at, at + 1 + (w % 9))
    at += batch.length
    writes.push({
      seq: 4 + w, deleteDocIds: w === 3 ? ['doc1'] : [],
      records: batch.map((r) => [r.id, { doc_id: r.docId, text: r.text, w }]),
      vectors: Float32Array.from(batch.flatMap((r) => [...r.vector]))
    })
  }
  // the first write is before the snapshot's sequence number (3 + 1 = 4 is not after a snapshot at 4): skipped
  const frames = writes.map((w) => encodeRecord(w, DIMS))
  const log = Buffer.concat(frames)
  const start = () => {
    const c = new Collection(DIMS, new RowPool(DIMS, DIMS))
    c.seq = 4
    return c
  }

  it('applies what the whole log applied, for pieces of every length', async () => {
    const whole = start()
    const { applied, end } = replay(whole, log)
    expect(applied).toBe(writes.length - 1)
    expect(end).toBe(log.length)
    const file = tempFile('chunks.log', log)
    for (const piece of [8, 9, 100, 333, 1000, log.length, 1 << 20]) {
      const c = start()
      expect(await replayFile(c, file, piece)).toEqual({ applied, end, size: log.length })
      expect(contents(c)).toEqual(contents(whole))
    }
  })

  it('ends where the last whole record ends when the tail is torn or a record damaged', async () => {
    const ends = frames.map((_, i) => frames.slice(0, i + 1).reduce((n, f) => n + f.length, 0))
    // torn in the middle of the 6th record, and of a record's 8-byte header
    for (const cut of [ends[4]! + 20, ends[7]! + 3]) {
      const file = tempFile('torn.log', log.subarray(0, cut))
      const lastWhole = ends.filter((e) => e <= cut).at(-1)!
      for (const piece of [8, 50, 1 << 20]) {
        const c = start()
        expect(await replayFile(c, file, piece)).toMatchObject({ end: lastWhole, size: cut })
      }
    }
    // a damaged byte in the 4th record's body: the records before it apply, nothing after
    const damaged = Buffer.from(log)
    damaged[ends[2]! + 12] = damaged[ends[2]! + 12]! ^ 0x01
    const file = tempFile('damaged.log', damaged)
    for (const piece of [8, 64, 1 << 20]) {
      const c = start()
      expect(await replayFile(c, file, piece)).toEqual({ applied: 2, end: ends[2], size: log.length })
    }
    expect(await replayFile(start(), join(tmpdir(), 'no-such-recall-log.log'))).toBeUndefined()
  })
})

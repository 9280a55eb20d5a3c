import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { EmbeddedVectorStore } from '../../src/providers/vector-store/embedded.js'
import type { VectorPayload } from '../../src/providers/vector-store/port.js'
import { withIds } from '../helpers/snapshot-source.js'

const dirs: string[] = []
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'recall-vector-format-'))
  dirs.push(dir)
  return dir
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

const magicOf = (file: string): string => readFileSync(file).subarray(0, 4).toString('latin1')

async function scrolled(store: EmbeddedVectorStore, collection: string, docIds?: string[]): Promise<{ id: string; payload: VectorPayload }[]> {
  const out: { id: string; payload: VectorPayload }[] = []
  for await (const row of store.scroll(collection, 'default', docIds)) out.push(row)
  return out
}

describe('a snapshot written before the columns (format 1, test/fixtures/vectors-0bee96b)', () => {
  const fixture = fileURLToPath(new URL('../fixtures/vectors-0bee96b/store', import.meta.url))
  // the fixture's records as its README builds them: vector i of dimension d is sin(1.7 i + 0.61 d + 0.3) + 1.5 at d = i mod 12
  const DIMS = 12
  const vector = (i: number): Float32Array => Float32Array.from({ length: DIMS }, (_, d) => Math.sin(1.7 * i + 0.61 * d + 0.3) + (d === i % DIMS ? 1.5 : 0))
  const unit = (v: Float32Array): number[] => {
    const norm = Math.hypot(...v)
    return [...v].map((x) => x / norm)
  }
  const kept = Array.from({ length: 40 }, (_, i) => i).filter((i) => i < 12 || i > 15)
  const idOf = (i: number): string => `doc${Math.floor(i / 4)}#${i % 4}`
  const expectedRows = kept.map((i) => ({ id: idOf(i), payload: { doc_id: `doc${Math.floor(i / 4)}`, n: i } })).sort((a, b) => (a.id < b.id ? -1 : 1))
  // the best 3 by cosine, worked out here in float64
  const best = (q: number): string[] => {
    const query = unit(vector(q))
    return kept
      .map((i) => ({ id: idOf(i), score: unit(vector(i)).reduce((s, x, d) => s + x * query[d]!, 0) }))
      .sort((a, b) => b.score - a.score)
      .slice(0, 3)
      .map((h) => h.id)
  }

  it('is read as written, and the next compaction writes format 2 holding the same records, payloads and answers', async () => {
    const dir = tempDir()
    cpSync(fixture, dir, { recursive: true })
    const snap = join(dir, 'chunks.snap')
    expect(magicOf(snap)).toBe('RVS1')
    const store = new EmbeddedVectorStore({ dir, compactionFloorBytes: 0 })
    expect(await scrolled(store, 'chunks')).toEqual(expectedRows)
    const before = await Promise.all([3.5, 17.5, 30.5].map((q) => store.search('chunks', 'default', vector(q), 3)))
    expect(before.map((hits) => hits.map((h) => h.id))).toEqual([3.5, 17.5, 30.5].map(best))

    // the same records written again, as they are, until the log outgrows the snapshot and is folded into it
    // the fixture's payloads carry no `text`, as the 0bee96b script wrote them
    const again = kept.slice(0, 8).map((i) => ({ id: idOf(i), vector: vector(i), payload: { doc_id: `doc${Math.floor(i / 4)}`, n: i } as unknown as VectorPayload }))
    for (let n = 0; n < 50 && magicOf(snap) === 'RVS1'; n++) await store.write('chunks', 'default', { upsert: again })
    await store.close()
    expect(magicOf(snap)).toBe('RVS2')

    const reopened = new EmbeddedVectorStore({ dir })
    expect(await scrolled(reopened, 'chunks')).toEqual(expectedRows)
    expect(await Promise.all([3.5, 17.5, 30.5].map((q) => reopened.search('chunks', 'default', vector(q), 3)))).toEqual(before)
    await reopened.close()
  })
})

describe('payloads of a format-2 snapshot, parsed when first used', () => {
  const axis = (i: number, dims = 4): Float32Array => Float32Array.from({ length: dims }, (_, d) => (d === i ? 1 : 0))
  const payloadOf = (i: number): VectorPayload => ({ doc_id: `d${i % 3}`, text: `第${i}条 text ${i}`, metadata: { tag: i % 2 === 0 ? 'even' : 'odd', n: i } })

  /** A store whose 12 records are all in a format-2 snapshot, reopened. */
  async function reopenedWithSnapshot(): Promise<EmbeddedVectorStore> {
    const dir = tempDir()
    const store = new EmbeddedVectorStore({ dir, compactionFloorBytes: 0 })
    await store.ensureCollection('c', 4)
    // the first write outgrows the empty snapshot, so it is folded into one
    await store.write('c', 'default', { upsert: Array.from({ length: 12 }, (_, i) => ({ id: `r${i}`, vector: axis(i % 4), payload: payloadOf(i) })) })
    await store.close()
    expect(magicOf(join(dir, 'c.snap'))).toBe('RVS2')
    expect(readFileSync(join(dir, 'c.log')).length).toBe(0)
    return new EmbeddedVectorStore({ dir })
  }

  it('answers every payload as written, by scroll, by search and through a metadata filter', async () => {
    const store = await reopenedWithSnapshot()
    expect(await scrolled(store, 'c')).toEqual(Array.from({ length: 12 }, (_, i) => ({ id: `r${i}`, payload: payloadOf(i) })).sort((a, b) => (a.id < b.id ? -1 : 1)))
    expect((await scrolled(store, 'c', ['d1'])).map((r) => r.id)).toEqual(['r1', 'r10', 'r4', 'r7'])
    const hits = await store.search('c', 'default', axis(2), 3)
    expect(hits.map((h) => [h.id, h.payload])).toEqual([['r10', payloadOf(10)], ['r2', payloadOf(2)], ['r6', payloadOf(6)]])
    const filtered = await store.search('c', 'default', axis(1), 12, { metadata: [{ key: 'tag', equals: 'odd' }, { key: 'n', range: { gte: 5 } }] })
    expect(filtered.map((h) => h.id)).toEqual(['r5', 'r9', 'r11', 'r7'])
    await store.close()
  })

  it.each([['still JSON', false], ['after a metadata filter read them', true]])('hands out copies of payloads %s: changing a hit or a scrolled row changes nothing held', async (_, parsed) => {
    const store = await reopenedWithSnapshot()
    if (parsed) expect(await store.search('c', 'default', axis(0), 12, { metadata: [{ key: 'n', range: { gte: 0 } }] })).toHaveLength(12)
    const [hit] = await store.search('c', 'default', axis(0), 1)
    hit!.payload.text = 'changed'
    ;(hit!.payload['metadata'] as Record<string, unknown>)['tag'] = 'changed'
    for await (const row of store.scroll('c', 'default')) row.payload.doc_id = 'changed'
    expect(await scrolled(store, 'c', ['d0'])).toEqual([0, 3, 6, 9].map((i) => ({ id: `r${i}`, payload: payloadOf(i) })))
    expect((await store.search('c', 'default', axis(0), 1))[0]!.payload).toEqual(payloadOf(0))
    await store.close()
  })

  it('a scroll answers the records as they were when it began, whatever is written while it runs', async () => {
    const store = await reopenedWithSnapshot()
    const seen: { id: string; payload: VectorPayload }[] = []
    let wrote = false
    for await (const row of store.scroll('c', 'default')) {
      seen.push(row)
      if (!wrote) {
        wrote = true
        // deletes d0's records (the swap-remove moves later records into their places) and replaces r5
        await store.write('c', 'default', { deleteDocIds: ['d0'], upsert: [{ id: 'r5', vector: axis(3), payload: { doc_id: 'd2', text: 'new' } }] })
      }
    }
    expect(seen).toEqual(Array.from({ length: 12 }, (_, i) => ({ id: `r${i}`, payload: payloadOf(i) })).sort((a, b) => (a.id < b.id ? -1 : 1)))
    expect((await scrolled(store, 'c')).map((r) => r.id)).toEqual(['r1', 'r10', 'r11', 'r2', 'r4', 'r5', 'r7', 'r8'])
    expect((await scrolled(store, 'c', ['d1'])).map((r) => r.id)).toEqual(['r1', 'r10', 'r4', 'r7'])
    expect((await scrolled(store, 'c', ['d2'])).map((r) => r.id)).toEqual(['r11', 'r2', 'r5', 'r8'])
    expect((await scrolled(store, 'c', ['d2'])).find((r) => r.id === 'r5')!.payload).toEqual({ doc_id: 'd2', text: 'new' })
    await store.close()
  })
})

describe('a format-2 snapshot naming a record twice', () => {
  // our writer never does: a snapshot that does is refused whole, and the rows it took are given back to the shared pool
  it('is refused as corrupt, and the namespace\'s pool holds only the other partitions\' rows', async () => {
    const { Collection } = await import('../../src/providers/vector-store/matrix.js')
    const { RowPool } = await import('../../src/providers/vector-store/row-pool.js')
    const { decodeSnapshot, encodeSnapshot } = await import('../../src/providers/vector-store/snapshot-codec.js')
    const { openSync, closeSync } = await import('node:fs')
    const pool = new RowPool(4, 8)
    const written = new Collection(4, pool)
    for (const [i, id] of ['a', 'b', 'c'].entries()) written.upsert(id, { doc_id: id, text: id, n: i }, Float32Array.of(i, 1, 0, 0), 0)
    const { bytes } = encodeSnapshot(withIds(written, ['a', 'b', 'a']))
    const other = new RowPool(4, 8)
    other.acquire(Float32Array.of(9, 9, 9, 9), 0)
    const fd = openSync(join(tempDir(), 'x'), 'w+')
    try {
      expect(() => decodeSnapshot(bytes, fd, 'chunks', () => other)).toThrow(/snapshot of vector collection chunks is corrupt: a record id comes twice/)
    } finally {
      closeSync(fd)
    }
    expect(other.live).toBe(1)
  })
})

describe('a damaged format-2 snapshot', () => {
  const unitAxis = (i: number): Float32Array => Float32Array.from({ length: 8 }, (_, d) => (d === i ? 1 : 0))
  const records = (prefix: string) => Array.from({ length: 6 }, (_, i) => ({ id: `${prefix}${i}`, vector: unitAxis(i), payload: { doc_id: `d${i}`, text: `${prefix} ${i}` } }))
  const openFds = (): number => readdirSync('/proc/self/fd').length

  // where the byte is flipped: in the ids' JSON (the decode would throw on its own), in a payload, in the last float
  it.each([['the ids', 40], ['a payload', -1], ['the last float', -2]] as const)('is refused for its checksum when %s is damaged; the other partitions read on', async (_, where) => {
    for (const precision of ['float32', 'int8'] as const) {
      const dir = tempDir()
      const first = new EmbeddedVectorStore({ dir, precision, compactionFloorBytes: 0 })
      for (const c of ['chunks', 'facets']) await first.ensureCollection(c, 8)
      await first.write('chunks', 'default', { upsert: records('c') })
      await first.write('facets', 'default', { upsert: records('f') })
      await first.close()
      const file = join(dir, 'facets.snap')
      const bytes = readFileSync(file)
      expect(bytes.subarray(0, 4).toString('latin1')).toBe('RVS2')
      const at = where === -1 ? bytes.indexOf(Buffer.from('"f 3"')) + 2 : where === -2 ? bytes.length - 1 : where
      expect(at).toBeGreaterThan(8)
      bytes[at] = bytes[at]! ^ 0x20
      writeFileSync(file, bytes)
      const again = new EmbeddedVectorStore({ dir, precision })
      expect(await again.count('chunks', 'default')).toBe(6)
      const fds = openFds()
      await expect(again.count('facets', 'default')).rejects.toThrow(/snapshot of vector collection facets is corrupt: checksum mismatch/)
      // the snapshot's file is closed, and the rows the decode took are given back: the chunks answer as before
      expect(openFds()).toBe(fds)
      const [hit] = await again.search('chunks', 'default', unitAxis(4), 1)
      expect(hit).toEqual({ id: 'c4', score: 1, payload: { doc_id: 'd4', text: 'c 4' } })
      await again.close()
    }
  })
})

import { closeSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { EmbeddedVectorStore } from '../../src/providers/vector-store/embedded.js'
import type { VectorPayload } from '../../src/providers/vector-store/port.js'

const dirs: string[] = []
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'recall-payloads-on-disk-'))
  dirs.push(dir)
  return dir
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

const DIMS = 4
const axis = (i: number): Float32Array => Float32Array.from({ length: DIMS }, (_, d) => (d === i % DIMS ? 1 : 0))
// about 600 bytes of JSON each, so that 3,000 of them span more than one megabyte-sized read
const payloadOf = (i: number): VectorPayload => ({ doc_id: `d${i % 7}`, text: `第${i}条 ${'字'.repeat(180)} ${i}`, metadata: { n: i, tag: i % 3 === 0 ? 'three' : 'other' } })
const byId = (a: { id: string }, b: { id: string }): number => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

async function scrolled(store: EmbeddedVectorStore, collection: string, docIds?: string[]): Promise<{ id: string; payload: VectorPayload }[]> {
  const out: { id: string; payload: VectorPayload }[] = []
  for await (const row of store.scroll(collection, 'default', docIds)) out.push(row)
  return out
}

/** Files under `dir` this process holds open, by what /proc says of each descriptor (" (deleted)" once unlinked). */
function openFilesUnder(dir: string): string[] {
  const out: string[] = []
  for (const fd of readdirSync('/proc/self/fd')) {
    let target: string
    try {
      target = readlinkSync(`/proc/self/fd/${fd}`)
    } catch {
      continue
    }
    if (target.startsWith(dir)) out.push(target.slice(dir.length + 1))
  }
  return out.sort()
}

/** A folder whose collection `c` holds `n` records, all in its format-2 snapshot (an empty log). */
async function folderWithSnapshot(n: number): Promise<string> {
  const dir = tempDir()
  const store = new EmbeddedVectorStore({ dir, compactionFloorBytes: 0 })
  await store.ensureCollection('c', DIMS)
  await store.write('c', 'default', { upsert: Array.from({ length: n }, (_, i) => ({ id: `r${String(i).padStart(5, '0')}`, vector: axis(i), payload: payloadOf(i) })) })
  await store.close()
  expect(readFileSync(join(dir, 'c.snap')).subarray(0, 4).toString('latin1')).toBe('RVS2')
  expect(readFileSync(join(dir, 'c.log')).length).toBe(0)
  return dir
}

const idOf = (i: number): string => `r${String(i).padStart(5, '0')}`

describe('EmbeddedVectorStore payloads read from the snapshot when used', () => {
  it('a reopened partition holds no copy of its payloads: bytes changed in its snapshot file are what a hit answers', async () => {
    const dir = await folderWithSnapshot(8)
    const snap = join(dir, 'c.snap')
    const store = new EmbeddedVectorStore({ dir })
    expect(await store.count('c', 'default')).toBe(8)
    // record 5's text, changed in the file in place (the same number of bytes), after the partition was read
    const bytes = readFileSync(snap)
    const was = Buffer.from(`"第5条 `)
    const at = bytes.indexOf(was)
    expect(at).toBeGreaterThan(0)
    const fd = openSync(snap, 'r+')
    writeSync(fd, Buffer.from(`"第X条 `.replace('X', '9')), 0, was.length, at)
    closeSync(fd)
    const [hit] = await store.search('c', 'default', axis(5), 1, { doc_ids: ['d5'] })
    expect(hit!.id).toBe(idOf(5))
    expect(hit!.payload).toEqual({ ...payloadOf(5), text: payloadOf(5).text.replace('第5条', '第9条') })
    await store.close()
  })

  it('answers every payload as written through a metadata filter and a scroll over more than a megabyte of them', async () => {
    const n = 3000
    const dir = await folderWithSnapshot(n)
    const store = new EmbeddedVectorStore({ dir })
    // the records the filter keeps, worked out from the payloads as written; all score 1 on axis 0 or 0 elsewhere
    const kept = Array.from({ length: n }, (_, i) => i).filter((i) => i % 3 === 0 && i >= 1500)
    const hits = await store.search('c', 'default', axis(1), n, { metadata: [{ key: 'tag', equals: 'three' }, { key: 'n', range: { gte: 1500 } }] })
    expect(hits.map((h) => h.id).sort()).toEqual(kept.map(idOf).sort())
    for (const hit of hits) expect(hit.payload).toEqual(payloadOf(Number(hit.id.slice(1))))
    const all = await scrolled(store, 'c')
    expect(all).toEqual(Array.from({ length: n }, (_, i) => ({ id: idOf(i), payload: payloadOf(i) })).sort(byId))
    expect((await scrolled(store, 'c', ['d3'])).map((r) => r.id)).toEqual(Array.from({ length: n }, (_, i) => i).filter((i) => i % 7 === 3).map(idOf))
    await store.close()
  })

  it('a compaction points every record at the new snapshot and lets the file it replaced go; a drop and a close let theirs go', async () => {
    const dir = await folderWithSnapshot(40)
    const store = new EmbeddedVectorStore({ dir, compactionFloorBytes: 0 })
    expect(await store.count('c', 'default')).toBe(40)
    expect(openFilesUnder(dir)).toEqual(['c.log', 'c.snap'])
    // d3's records deleted (i mod 7 = 3), records 0-9 replaced, again and again until the log outgrows the snapshot and
    // a compaction renames a new snapshot over it (ensureCollection waits for the rename, which is queued; the compaction
    // ends off the queue, with the removal of the log it set aside)
    const replaced = (i: number): VectorPayload => ({ doc_id: `d${i % 7}`, text: `new ${i}` })
    const inode = statSync(join(dir, 'c.snap')).ino
    for (let n = 0; n < 50 && statSync(join(dir, 'c.snap')).ino === inode; n++) {
      await store.write('c', 'default', { deleteDocIds: ['d3'], upsert: Array.from({ length: 10 }, (_, i) => ({ id: idOf(i), vector: axis(i + 1), payload: replaced(i) })) })
      await store.ensureCollection('c', DIMS)
    }
    expect(statSync(join(dir, 'c.snap')).ino).not.toBe(inode)
    for (let n = 0; n < 500 && existsSync(join(dir, 'c.fold.log')); n++) await new Promise((wait) => setTimeout(wait, 10))
    expect(openFilesUnder(dir)).toEqual(['c.log', 'c.snap'])
    const expected = Array.from({ length: 40 }, (_, i) => i)
      .filter((i) => i < 10 || i % 7 !== 3)
      .map((i) => ({ id: idOf(i), payload: i < 10 ? replaced(i) : payloadOf(i) }))
      .sort(byId)
    expect(await scrolled(store, 'c')).toEqual(expected)
    const hits = await store.search('c', 'default', axis(2), 3, { doc_ids: ['d5'] })
    expect(hits.map((h) => [h.id, h.payload])).toEqual([[idOf(5), replaced(5)], [idOf(26), payloadOf(26)], [idOf(12), payloadOf(12)]])
    await store.close()
    expect(openFilesUnder(dir)).toEqual([])

    const reopened = new EmbeddedVectorStore({ dir })
    expect(await scrolled(reopened, 'c')).toEqual(expected)
    await reopened.dropCollection('c')
    expect(openFilesUnder(dir)).toEqual([])
    await reopened.close()
  })
})

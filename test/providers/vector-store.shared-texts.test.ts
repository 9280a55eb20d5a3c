import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { EmbeddedVectorStore } from '../../src/providers/vector-store/embedded.js'
import type { VectorPayload, VectorRecord } from '../../src/providers/vector-store/port.js'

const dirs: string[] = []
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'recall-shared-texts-'))
  dirs.push(dir)
  return dir
}

const CHUNK = Float32Array.of(0.6, 0.8, 0, 0)
const OTHER = Float32Array.of(0, 0, 1, 0)
// a chunk's text: CJK, an astral character, and a lone low surrogate first (a part may start or end inside a pair)
const CHUNK_TEXT = '\uDE00## 第2节\n\n中国大陆由盛大游戏运营，这是Nexon时隔6年再次授予盛大网络其游戏运营权。😀台湾由游戏橘子运营。'

/**
 * The Episode records a chunk's vector is shared with, each text a different relation to the chunk's text: its passage
 * (a header before it), the text itself, a sentence of it, parts too short to share, a part across a surrogate pair,
 * text of its own; and payloads kept whole (another key order, another key).
 */
const ANCHORS: Array<[string, VectorPayload]> = [
  ['e/f1', { doc_id: 'e', text: `资料第0篇 > 第2节\n${CHUNK_TEXT}` }],
  ['e/f2', { doc_id: 'e', text: CHUNK_TEXT }],
  ['e/f3', { doc_id: 'e', text: '中国大陆由盛大游戏运营，这是Nexon时隔6年再次授予盛大网络其游戏运营权。' }],
  ['e/f4', { doc_id: 'e', text: '台湾由游戏橘子运营。' }],
  ['e/f5', { doc_id: 'e', text: `\uD83D${CHUNK_TEXT}` }],
  ['e/f6', { doc_id: 'e', text: CHUNK_TEXT.slice(CHUNK_TEXT.indexOf('😀') + 1) }],
  ['e/f7', { doc_id: 'e', text: '这段话不在那个分块里，长度也足够了。' }],
  ['g/f1', { text: CHUNK_TEXT, doc_id: 'g' } as VectorPayload],
  ['g/f2', { doc_id: 'g', text: CHUNK_TEXT, n: 1 }],
  ['g/f3', { doc_id: 'g', text: '' }]
]

const written = (records: Array<[string, VectorPayload]>) => records.map(([id, payload]) => JSON.stringify([id, payload])).sort()

async function scrolled(store: EmbeddedVectorStore, collection: string): Promise<string[]> {
  const out: string[] = []
  for await (const { id, payload } of store.scroll(collection, 'default')) out.push(JSON.stringify([id, payload]))
  return out.sort()
}

/**
 * The snapshot's records as its payload JSON holds them, read by the file format (format 2, `snapshot-codec.ts`): a
 * 36-byte header (count at 12, the ids' JSON length at 24, the document table's at 28), the ids' JSON array, the
 * document table, padding to 4 bytes, three u32 columns of `count` (document numbers, payload ends, pool hashes), then
 * the payloads' JSON one after another.
 */
function snapshotRecords(dir: string, collection: string): string[] {
  const bytes = readFileSync(join(dir, `${collection}.snap`))
  expect(bytes.toString('latin1', 0, 4)).toBe('RVS2')
  const count = bytes.readUInt32LE(12)
  const idsLength = bytes.readUInt32LE(24)
  const ids = JSON.parse(bytes.toString('utf8', 36, 36 + idsLength)) as string[]
  const columnsAt = Math.ceil((36 + idsLength + bytes.readUInt32LE(28)) / 4) * 4
  const payloadsAt = columnsAt + 3 * 4 * count
  const rows: string[] = []
  let start = 0
  for (let i = 0; i < count; i++) {
    const end = bytes.readUInt32LE(columnsAt + 4 * count + 4 * i)
    rows.push(JSON.stringify([ids[i], JSON.parse(bytes.toString('utf8', payloadsAt + start, payloadsAt + end))]))
    start = end
  }
  return rows.sort()
}

describe('EmbeddedVectorStore texts held as parts of the text of the record first holding the same vector', () => {
  it('reads every text as written, through searches, scrolls, replaced and deleted chunks, snapshots and a reopen', async () => {
    const dir = tempDir()
    let store = new EmbeddedVectorStore({ dir, compactionFloorBytes: 0 })
    await store.ensureCollection('chunks', 4)
    await store.ensureCollection('anchors', 4)
    await store.write('chunks', 'default', { upsert: [{ id: 'd#1', vector: CHUNK, payload: { doc_id: 'd', text: CHUNK_TEXT, chunk_index: 1, title: '资料第0篇' } }] })
    const upsert: VectorRecord[] = ANCHORS.map(([id, payload], i) => ({ id, vector: i === 6 ? OTHER : CHUNK, payload }))
    await store.write('anchors', 'default', { upsert })
    expect(await scrolled(store, 'anchors')).toEqual(written(ANCHORS))
    const hits = await store.search('anchors', 'default', CHUNK, 20)
    expect(hits.map((h) => JSON.stringify([h.id, h.payload])).sort()).toEqual(written(ANCHORS))
    expect((await store.search('anchors', 'default', CHUNK, 20, { doc_ids: ['g'] })).map((h) => h.id).sort()).toEqual(['g/f1', 'g/f2', 'g/f3'])

    // the chunk changes, then goes: the Episode records keep their texts
    await store.write('chunks', 'default', { upsert: [{ id: 'd#1', vector: CHUNK, payload: { doc_id: 'd', text: '另一个文本，已经不一样了。足够长的文本。', chunk_index: 1 } }] })
    expect(await scrolled(store, 'anchors')).toEqual(written(ANCHORS))
    await store.write('chunks', 'default', { deleteDocIds: ['d'] })
    expect(await store.count('chunks', 'default')).toBe(0)
    expect(await scrolled(store, 'anchors')).toEqual(written(ANCHORS))

    await store.write('anchors', 'default', { deleteDocIds: ['g'], upsert: [{ id: 'g/f1', vector: CHUNK, payload: ANCHORS[7]![1] }] })
    const kept = ANCHORS.filter(([id]) => id !== 'g/f2' && id !== 'g/f3')
    await store.close()
    // the first write outgrew the empty snapshot, so it was folded into one: each payload as written, its keys in order
    expect(snapshotRecords(dir, 'anchors')).toEqual(written(ANCHORS))

    // opened again, the chunk first (as start-up reads it) and then its Episode records
    await writeChunkAgain(dir)
    store = new EmbeddedVectorStore({ dir, compactionFloorBytes: 0 })
    expect(await store.count('chunks', 'default')).toBe(1)
    expect(await scrolled(store, 'anchors')).toEqual(written(kept))
    expect((await store.search('anchors', 'default', CHUNK, 1, { doc_ids: ['e'] }))[0]?.payload).toEqual(ANCHORS[0]![1])
    await store.close()
  })

  it('a record replaced with another document is filed, filtered and deleted under the new one', async () => {
    const store = new EmbeddedVectorStore({ dir: tempDir() })
    await store.ensureCollection('anchors', 4)
    await store.write('anchors', 'default', { upsert: ANCHORS.slice(0, 3).map(([id, payload]) => ({ id, vector: CHUNK, payload })) })
    await store.write('anchors', 'default', { upsert: [{ id: 'e/f2', vector: CHUNK, payload: { doc_id: 'h', text: CHUNK_TEXT } }] })
    expect((await store.search('anchors', 'default', CHUNK, 5, { doc_ids: ['h'] })).map((h) => h.payload)).toEqual([{ doc_id: 'h', text: CHUNK_TEXT }])
    await store.write('anchors', 'default', { deleteDocIds: ['e'] })
    expect(await scrolled(store, 'anchors')).toEqual(written([['e/f2', { doc_id: 'h', text: CHUNK_TEXT }]]))
    await store.close()
  })
})

/** The chunk written again by a store of its own, so the reopened store reads a chunk before the records sharing its row. */
async function writeChunkAgain(dir: string): Promise<void> {
  const store = new EmbeddedVectorStore({ dir })
  await store.write('chunks', 'default', { upsert: [{ id: 'd#1', vector: CHUNK, payload: { doc_id: 'd', text: CHUNK_TEXT, chunk_index: 1 } }] })
  await store.close()
}

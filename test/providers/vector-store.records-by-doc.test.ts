import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { EmbeddedVectorStore } from '../../src/providers/vector-store/embedded.js'
import type { VectorPayload } from '../../src/providers/vector-store/port.js'

const dirs: string[] = []
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

const DIMS = 4
const axis = (i: number): Float32Array => Float32Array.from({ length: DIMS }, (_, d) => (d === i % DIMS ? 1 : 0))

async function idsOf(store: EmbeddedVectorStore, docIds: string[]): Promise<string[]> {
  const out: string[] = []
  for await (const row of store.scroll('c', 'default', docIds)) out.push(row.id)
  return out
}

async function searched(store: EmbeddedVectorStore, docIds: string[]): Promise<string[]> {
  return (await store.search('c', 'default', axis(0), 1000, { doc_ids: docIds })).map((h) => h.id).sort()
}

describe('EmbeddedVectorStore records filed by document: one, a few, and more than an array holds', () => {
  // documents of 1, 5 and 40 records (an array holds up to 32), ids `<doc>:<n>`
  const SIZES: Record<string, number> = { one: 1, few: 5, many: 40 }
  const record = (doc: string, n: number, owner = doc) => ({ id: `${doc}:${String(n).padStart(2, '0')}`, vector: axis(n), payload: { doc_id: owner, text: `${doc} ${n}` } as VectorPayload })

  it('a document filter, a scroll by document and a delete by document each take exactly its records, as they move', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'recall-records-by-doc-'))
    dirs.push(dir)
    const store = new EmbeddedVectorStore({ dir })
    await store.ensureCollection('c', DIMS)
    const expected = new Map<string, string[]>()
    for (const [doc, size] of Object.entries(SIZES)) {
      await store.write('c', 'default', { upsert: Array.from({ length: size }, (_, n) => record(doc, n)) })
      expected.set(doc, Array.from({ length: size }, (_, n) => record(doc, n).id))
    }
    for (const doc of Object.keys(SIZES)) {
      expect(await idsOf(store, [doc])).toEqual(expected.get(doc))
      expect(await searched(store, [doc])).toEqual(expected.get(doc))
    }
    // records moved to another document: many:00..09 to `few`, few:00 to `one`, one:00 to `many`
    const moved = [...Array.from({ length: 10 }, (_, n) => record('many', n, 'few')), record('few', 0, 'one'), record('one', 0, 'many')]
    await store.write('c', 'default', { upsert: moved })
    const now: Record<string, string[]> = {
      one: ['few:00'],
      few: [...Array.from({ length: 4 }, (_, n) => `few:0${n + 1}`), ...Array.from({ length: 10 }, (_, n) => `many:${String(n).padStart(2, '0')}`)].sort(),
      many: ['one:00', ...Array.from({ length: 30 }, (_, n) => `many:${n + 10}`)].sort()
    }
    for (const doc of Object.keys(SIZES)) {
      expect(await idsOf(store, [doc])).toEqual(now[doc])
      expect(await searched(store, [doc])).toEqual(now[doc])
    }
    expect(await searched(store, ['one', 'few'])).toEqual([...now['one']!, ...now['few']!].sort())
    // many's records deleted by document, then few's: what is left is `one`'s alone, and a reopen reads the same
    await store.write('c', 'default', { deleteDocIds: ['many'] })
    expect(await idsOf(store, ['many'])).toEqual([])
    expect(await idsOf(store, [])).toEqual([])
    expect((await idsOf(store, ['one', 'few'])).sort()).toEqual([...now['one']!, ...now['few']!].sort())
    await store.write('c', 'default', { deleteDocIds: ['few'] })
    expect(await searched(store, ['one', 'few', 'many'])).toEqual(['few:00'])
    expect(await store.count('c', 'default')).toBe(1)
    await store.close()
    const reopened = new EmbeddedVectorStore({ dir })
    expect(await idsOf(reopened, ['one'])).toEqual(['few:00'])
    expect(await reopened.count('c', 'default')).toBe(1)
    await reopened.close()
  })
})

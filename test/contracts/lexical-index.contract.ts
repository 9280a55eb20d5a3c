import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import type { LexicalIndex, LexicalIndexes } from '../../src/providers/lexical-index/port.js'

// Expected scores derived by hand from BM25 with k1 1.2, b 0.75, idf = ln((N - n + 0.5)/(n + 0.5) + 1),
// each term weight rounded to 4 decimals (wink's formula):
// 3 docs, avgdl 2: w(apple,d1) = 2.2/2.2 * ln(1.6) = 0.4700; w(apple,d2) = 2.2/2.65 * ln(1.6) = 0.3902;
// w(cherry,d2) = 4.4/3.65 * ln(2.6667) = 1.1824.
// 2 docs, avgdl 2.5: w(apple,d1) = 2.2/2.02 * ln(1.2) = 0.1986; w(apple,d2) = 2.2/2.38 * ln(1.2) = 0.1685;
// w(cherry,d2) = 4.4/3.38 * ln 2 = 0.9023.
// 1 doc: w(date) = 2.2/2.2 * ln(0.5/1.5 + 1) = ln(4/3) = 0.2877.
const d1 = { id: 'd1', text: 'apple banana' }
const d2 = { id: 'd2', text: 'apple cherry cherry' }
const d3 = { id: 'd3', text: 'date' }

/** The LexicalIndex promises (port.ts), one `it` each; `make` gets a fresh folder for the index's files. */
export function describeLexicalIndexContract(name: string, make: (dir: string) => LexicalIndex): void {
  const dirs: string[] = []
  const opened: LexicalIndex[] = []
  const fresh = async () => {
    const dir = await mkdtemp(join(tmpdir(), 'recall-lexical-contract-'))
    dirs.push(dir)
    const index = make(dir)
    opened.push(index)
    return index
  }
  afterAll(async () => {
    for (const i of opened) await i.close()
    for (const d of dirs) await rm(d, { recursive: true, force: true })
  })

  describe(`LexicalIndex contract: ${name}`, () => {
    it('scores as BM25 derived by hand, with 3, 2, 1 and 0 documents', async () => {
      const index = await fresh()
      await index.sync([d1, d2, d3])
      const three = await index.search('apple cherry', 10)
      expect(three.map((h) => h.id)).toEqual(['d2', 'd1'])
      expect(three[0]!.score).toBeCloseTo(0.3902 + 1.1824, 9)
      expect(three[1]!.score).toBeCloseTo(0.47, 9)
      await index.sync([d1, d2])
      const two = await index.search('apple cherry', 10)
      expect(two.map((h) => h.id)).toEqual(['d2', 'd1'])
      expect(two[0]!.score).toBeCloseTo(0.1685 + 0.9023, 9)
      expect(two[1]!.score).toBeCloseTo(0.1986, 9)
      await index.sync([d3])
      expect(await index.search('date', 10)).toEqual([{ id: 'd3', score: 0.2877 }])
      await index.sync([])
      expect(await index.search('date', 10)).toEqual([])
      expect(index.size).toBe(0)
    })

    it('keeps statistics exact after each write: adding and deleting a document changes every score', async () => {
      const index = await fresh()
      await index.write({ upsert: [d1, d2] })
      expect((await index.search('apple cherry', 10))[0]!.score).toBeCloseTo(0.1685 + 0.9023, 9)
      await index.write({ upsert: [d3] })
      const three = await index.search('apple cherry', 10)
      expect(three.map((h) => [h.id, h.score])).toEqual([['d2', expect.closeTo(1.5726, 9)], ['d1', expect.closeTo(0.47, 9)]])
      await index.write({ delete: ['d3'] })
      expect((await index.search('apple cherry', 10))[0]!.score).toBeCloseTo(0.1685 + 0.9023, 9)
      expect(index.size).toBe(2)
    })

    it('replaces a document re-upserted under the same id, and ignores deletes of unknown ids', async () => {
      const index = await fresh()
      await index.write({ upsert: [d1, d2, d3] })
      await index.write({ upsert: [{ id: 'd3', text: 'apple' }], delete: ['nobody'] })
      expect(index.size).toBe(3)
      expect(await index.search('date', 10)).toEqual([])
      expect((await index.search('apple', 10)).map((h) => h.id)).toEqual(['d3', 'd1', 'd2'])
    })

    it('says which ids it holds: written ones, not deleted or never written ones', async () => {
      const index = await fresh()
      expect(await index.holding(['d1'])).toEqual(new Set())
      await index.write({ upsert: [d1, d2, d3] })
      await index.write({ delete: ['d2'] })
      expect(await index.holding(['d1', 'd2', 'd3', 'nobody'])).toEqual(new Set(['d1', 'd3']))
      expect(await index.holding([])).toEqual(new Set())
    })

    it('applies a write\'s deletes before its upserts', async () => {
      const index = await fresh()
      await index.write({ upsert: [d1, d2, d3] })
      await index.write({ delete: ['d1'], upsert: [{ id: 'd1', text: 'banana split' }] })
      expect((await index.search('banana', 10)).map((h) => h.id)).toEqual(['d1'])
      expect(index.size).toBe(3)
    })

    it('syncs to exactly the given documents, keeping what is unchanged', async () => {
      const index = await fresh()
      await index.sync([d1, d2, d3])
      await index.sync([d1, { id: 'd2', text: 'cherry' }, { id: 'd4', text: 'date date' }])
      expect(index.size).toBe(3)
      expect((await index.search('date', 10)).map((h) => h.id)).toEqual(['d4'])
      expect((await index.search('apple', 10)).map((h) => h.id)).toEqual(['d1'])
    })

    it('orders equal scores by id and respects the limit', async () => {
      const index = await fresh()
      await index.sync([{ id: 'z', text: 'same words' }, { id: 'a', text: 'same words' }, { id: 'm', text: 'same words' }, { id: 'q', text: 'other' }])
      expect((await index.search('same', 10)).map((h) => h.id)).toEqual(['a', 'm', 'z'])
      expect((await index.search('same', 2)).map((h) => h.id)).toEqual(['a', 'm'])
      await index.write({ upsert: [{ id: 'b', text: 'same words' }] })
      expect((await index.search('same', 3)).map((h) => h.id)).toEqual(['a', 'b', 'm'])
    })

    it('applies the filter before choosing the top `limit`', async () => {
      const index = await fresh()
      // 1,000 documents; the filter keeps every 100th (1%). Scores fall with the document's length.
      const docs = Array.from({ length: 1000 }, (_, i) => ({ id: `doc-${String(i).padStart(4, '0')}`, text: `common ${'pad '.repeat(i % 7)}` }))
      for (let i = 0; i < docs.length; i += 250) await index.write({ upsert: docs.slice(i, i + 250) })
      const keep = (id: string) => Number(id.slice(4)) % 100 === 0
      const hits = await index.search('common', 5, { filter: keep })
      expect(hits).toHaveLength(5)
      expect(hits.every((h) => keep(h.id))).toBe(true)
      // the accepted documents ordered as without a filter
      const all = (await index.search('common', 1000)).filter((h) => keep(h.id)).slice(0, 5)
      expect(hits).toEqual(all)
      expect(await index.search('common', 20, { filter: keep })).toHaveLength(10)
    })

    it('holds a document without tokens and never finds it', async () => {
      const index = await fresh()
      await index.write({ upsert: [{ id: 'emoji', text: '😀👍 ★' }, d1] })
      expect(index.size).toBe(2)
      expect(await index.search('😀', 10)).toEqual([])
      expect((await index.search('banana', 10)).map((h) => h.id)).toEqual(['d1'])
    })

    it('gives [] for an empty index, a query with no indexed token and a limit below 1', async () => {
      const index = await fresh()
      expect(await index.search('apple', 10)).toEqual([])
      await index.sync([d1, d2, d3])
      expect(await index.search('？？', 10)).toEqual([])
      expect(await index.search('the of', 10)).toEqual([])
      expect(await index.search('kiwi', 10)).toEqual([])
      expect(await index.search('apple', 0)).toEqual([])
    })

    it('changes version whenever a write changes what searches see', async () => {
      const index = await fresh()
      await index.sync([d1])
      const v = index.version
      await index.write({ upsert: [d2] })
      expect(index.version).not.toBe(v)
      const w = index.version
      await index.write({ delete: ['d2'] })
      expect(index.version).not.toBe(w)
    })

    it('digest and holds, where given: the index holds a digest\'s documents exactly, in any order and spread, and only those', async () => {
      const index = await fresh()
      if (!index.digest || !index.holds) return // optional: an index without them is synced every time
      const digest = (docs: Array<{ id: string; text: string }>) => index.digest!(docs)
      expect(digest([d1, d2, d3])).toBe(digest([d3, d1, d2]))
      await index.write({ upsert: [d1] })
      await index.write({ upsert: [d2, { id: 'gone', text: 'x' }] })
      await index.write({ upsert: [d3], delete: ['gone'] })
      // three writes (three segments, one tombstone) hold what one sync of the three would
      expect(await index.holds(digest([d2, d3, d1]))).toBe(true)
      // another text under an id, one document more or fewer, another id: not held
      for (const other of [[d1, d2, { id: 'd3', text: 'date date' }], [d1, d2], [d1, d2, d3, { id: 'd4', text: 'x' }], [d1, d2, { id: 'D3', text: 'date' }]]) {
        expect(await index.holds(digest(other)), JSON.stringify(other)).toBe(false)
      }
      await index.write({ delete: ['d2'] })
      expect(await index.holds(digest([d1, d3]))).toBe(true)
      expect(await index.holds(digest([]))).toBe(false)
      await index.sync([])
      expect(await index.holds(digest([]))).toBe(true)
    })

    it('analyzes CJK text into bigrams at index and query time', async () => {
      const index = await fresh()
      await index.sync([
        { id: 'a', text: '咳嗽三周以上需要做胸片检查' }, { id: 'b', text: '发热时先测体温' }, { id: 'c', text: '高血压随访每月一次' }
      ])
      expect((await index.search('咳嗽检查', 10)).map((h) => h.id)).toEqual(['a'])
    })
  })
}

/** Every file under `dir`, relative, sorted (none when it does not exist). */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => [])
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name).slice(dir.length + 1)).sort()
}

/**
 * The LexicalIndexes promises (port.ts): namespaces apart, each its own statistics, drop; `make` gets a fresh root
 * folder. `stored(dir)` lists what the backend holds, one entry naming its namespace per item (default: the files
 * under the folder; a backend keeping nothing on disk lists its namespaces).
 */
export function describeLexicalIndexesContract(
  name: string, make: (dir: string) => LexicalIndexes, stored: (dir: string) => Promise<string[]> = filesUnder
): void {
  const dirs: string[] = []
  const opened: LexicalIndexes[] = []
  const fresh = async () => {
    const dir = await mkdtemp(join(tmpdir(), 'recall-lexical-ns-contract-'))
    dirs.push(dir)
    const indexes = make(dir)
    opened.push(indexes)
    return { dir, indexes }
  }
  afterAll(async () => {
    for (const i of opened) await i.close()
    for (const d of dirs) await rm(d, { recursive: true, force: true })
  })

  describe(`LexicalIndexes contract: ${name}`, () => {
    it('keeps namespaces apart: the same ids in two, a delete in one, searches and sizes in the other', async () => {
      const { indexes } = await fresh()
      await indexes.get('tenant-a').write({ upsert: [d1, d2, d3] })
      await indexes.get('tenant-b').write({ upsert: [{ id: 'd1', text: 'apple pie' }] })
      await indexes.get('tenant-a').write({ delete: ['d1'] })
      expect((await indexes.get('tenant-b').search('apple', 10)).map((h) => h.id)).toEqual(['d1'])
      expect(await indexes.get('tenant-b').search('cherry', 10)).toEqual([])
      expect(indexes.get('tenant-a').size).toBe(2)
      expect(indexes.get('tenant-b').size).toBe(1)
      expect(indexes.get('default').size).toBe(0)
    })

    it('scores each namespace with its own statistics, as if it were the only index', async () => {
      const { indexes } = await fresh()
      // tenant-a holds the 2-document corpus of the single-index contract; tenant-b's many apples change nothing
      await indexes.get('tenant-a').write({ upsert: [d1, d2] })
      await indexes.get('tenant-b').write({ upsert: Array.from({ length: 20 }, (_, i) => ({ id: `b${i}`, text: 'apple apple' })) })
      const hits = await indexes.get('tenant-a').search('apple cherry', 10)
      expect(hits.map((h) => h.id)).toEqual(['d2', 'd1'])
      expect(hits[0]!.score).toBeCloseTo(0.1685 + 0.9023, 9)
      expect(hits[1]!.score).toBeCloseTo(0.1986, 9)
    })

    it('reopened, each namespace has what it held; a read wrote nothing for a namespace never written', async () => {
      const { dir, indexes } = await fresh()
      await indexes.get('tenant-a').write({ upsert: [d1] })
      await indexes.get('default').write({ upsert: [d3] })
      expect(await indexes.get('ghost').search('apple', 10)).toEqual([])
      await indexes.get('ghost').sync([])
      await indexes.close()
      expect((await stored(dir)).some((f) => f.includes('ghost'))).toBe(false)
      const again = make(dir)
      opened.push(again)
      expect((await again.get('tenant-a').search('apple', 10)).map((h) => h.id)).toEqual(['d1'])
      expect((await again.get('default').search('date', 10)).map((h) => h.id)).toEqual(['d3'])
      expect(await again.get('default').search('apple', 10)).toEqual([])
    })

    it('drop removes a namespace\'s index and its files, and nothing of another', async () => {
      const { dir, indexes } = await fresh()
      await indexes.get('tenant-a').write({ upsert: [d1, d2] })
      await indexes.get('tenant-b').write({ upsert: [d1] })
      const before = await stored(dir)
      await indexes.drop('tenant-a')
      const after = await stored(dir)
      expect(after.length).toBeGreaterThan(0)
      expect(after.some((f) => f.includes('tenant-a'))).toBe(false)
      expect(after).toEqual(before.filter((f) => !f.includes('tenant-a')))
      expect(indexes.get('tenant-a').size).toBe(0)
      expect(await indexes.get('tenant-a').search('apple', 10)).toEqual([])
      expect((await indexes.get('tenant-b').search('apple', 10)).map((h) => h.id)).toEqual(['d1'])
      await expect(indexes.drop('never-made')).resolves.toBeUndefined()
    })
  })
}

/**
 * An index whose analyzer is `cjk-bigram-english` (`LEXICAL_STEMMING`): a word meets its plural, its inflections and
 * its possessive at query time, and CJK text is analyzed as before. `make` gets a fresh folder.
 */
export function describeEnglishStemmingContract(name: string, make: (dir: string) => LexicalIndex): void {
  const dirs: string[] = []
  const opened: LexicalIndex[] = []
  afterAll(async () => {
    for (const i of opened) await i.close()
    for (const d of dirs) await rm(d, { recursive: true, force: true })
  })

  describe(`LexicalIndex with English stemming: ${name}`, () => {
    it('finds a turn by another form of its words, and CJK text as before', async () => {
      const dir = await mkdtemp(join(tmpdir(), 'recall-lexical-stemming-'))
      dirs.push(dir)
      const index = make(dir)
      opened.push(index)
      await index.sync([
        { id: 'a', text: 'Melanie: I painted a sunrise over the lake last summer.' },
        { id: 'b', text: 'Caroline: I went to an LGBTQ support group yesterday.' },
        { id: 'c', text: 'John: We adopted two puppies from the shelter.' },
        { id: 'd', text: '咳嗽三周以上需要做胸片检查' }
      ])
      expect((await index.search('paintings', 10)).map((h) => h.id)).toEqual(['a'])
      expect((await index.search('puppy adoption', 10)).map((h) => h.id)).toEqual(['c'])
      expect((await index.search('Caroline’s groups', 10)).map((h) => h.id)).toEqual(['b'])
      expect((await index.search('SUNRISES', 10)).map((h) => h.id)).toEqual(['a'])
      expect((await index.search('咳嗽检查', 10)).map((h) => h.id)).toEqual(['d'])
    })
  })
}

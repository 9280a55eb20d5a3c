import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { WinkLexicalIndex } from '../../src/providers/lexical-index/wink.js'

// Expected scores derived by hand from BM25 with k1 1.2, b 0.75, idf = ln((N - n + 0.5)/(n + 0.5) + 1),
// each term weight rounded to 4 decimals (wink's formula):
// 3 docs, avgdl 2: w(apple,d1) = 2.2/2.2 * ln(1.6) = 0.4700; w(apple,d2) = 2.2/2.65 * ln(1.6) = 0.3902;
// w(cherry,d2) = 4.4/3.65 * ln(2.6667) = 1.1824.
// 2 docs, avgdl 2.5: w(apple,d1) = 2.2/2.02 * ln(1.2) = 0.1986; w(apple,d2) = 2.2/2.38 * ln(1.2) = 0.1685;
// w(cherry,d2) = 4.4/3.38 * ln 2 = 0.9023.
const d1 = { id: 'd1', text: 'apple banana' }
const d2 = { id: 'd2', text: 'apple cherry cherry' }
const d3 = { id: 'd3', text: 'date' }

const dirs: string[] = []
afterAll(async () => { for (const d of dirs) await rm(d, { recursive: true, force: true }) })

describe('WinkLexicalIndex', () => {
  it('scores a 3-document corpus as BM25 derived by hand (wink path)', async () => {
    const index = new WinkLexicalIndex()
    await index.rebuild([d1, d2, d3])
    const hits = await index.search('apple cherry', 10)
    expect(hits.map((h) => h.id)).toEqual(['d2', 'd1'])
    expect(hits[0]!.score).toBeCloseTo(0.3902 + 1.1824, 6)
    expect(hits[1]!.score).toBeCloseTo(0.47, 6)
  })

  it('answers correctly with fewer than 3 documents (2, 1, 0)', async () => {
    const index = new WinkLexicalIndex()
    await index.rebuild([d1, d2])
    const hits = await index.search('apple cherry', 10)
    expect(hits.map((h) => h.id)).toEqual(['d2', 'd1'])
    expect(hits[0]!.score).toBeCloseTo(0.1685 + 0.9023, 6)
    expect(hits[1]!.score).toBeCloseTo(0.1986, 6)

    await index.rebuild([d3])
    // 1 doc: w(date) = 2.2/2.2 * ln(0.5/1.5 + 1) = ln(4/3) = 0.2877
    expect(await index.search('date', 10)).toEqual([{ id: 'd3', score: 0.2877 }])
    await index.rebuild([])
    expect(await index.search('date', 10)).toEqual([])
    expect(index.size).toBe(0)
  })

  it('analyzes the query with the CJK analyzer and counts CJK bigrams', async () => {
    const index = new WinkLexicalIndex()
    await index.rebuild([
      { id: 'a', text: '咳嗽三周以上需要做胸片检查' },
      { id: 'b', text: '发热时先测体温' },
      { id: 'c', text: '高血压随访每月一次' }
    ])
    expect((await index.search('咳嗽检查', 10)).map((h) => h.id)).toEqual(['a'])
    expect(await index.search('？？', 10)).toEqual([])
    expect(await index.search('the of', 10)).toEqual([])
  })

  it('orders equal scores by id and respects the limit', async () => {
    const index = new WinkLexicalIndex()
    await index.rebuild([{ id: 'z', text: 'same words' }, { id: 'a', text: 'same words' }, { id: 'm', text: 'same words' }, { id: 'q', text: 'other' }])
    expect((await index.search('same', 10)).map((h) => h.id)).toEqual(['a', 'm', 'z'])
    expect((await index.search('same', 2)).map((h) => h.id)).toEqual(['a', 'm'])
  })

  it('keeps answering from the previous index while a rebuild runs, and bumps the version on swap', async () => {
    const index = new WinkLexicalIndex()
    await index.rebuild([d1, d2, d3])
    const v = index.version
    const big = Array.from({ length: 3000 }, (_, i) => ({ id: `n${i}`, text: `note ${i} banana` }))
    const rebuilding = index.rebuild(big)
    expect((await index.search('cherry', 10)).map((h) => h.id)).toEqual(['d2'])
    await rebuilding
    expect(index.version).toBe(v + 1)
    expect(await index.search('cherry', 10)).toEqual([])
  })

  it('persists the built index and reuses it only for the same documents', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'recall-bm25-'))
    dirs.push(dir)
    const path = join(dir, 'bm25.json')
    const first = new WinkLexicalIndex({ persistPath: path })
    await first.rebuild([d1, d2, d3])
    const again = new WinkLexicalIndex({ persistPath: path })
    await again.rebuild([d1, d2, d3])
    expect(await again.search('apple cherry', 10)).toEqual(await first.search('apple cherry', 10))
    const changed = new WinkLexicalIndex({ persistPath: path })
    await changed.rebuild([d1, d3, { id: 'd4', text: 'cherry pie' }])
    expect((await changed.search('cherry', 10)).map((h) => h.id)).toEqual(['d4'])
  })
})

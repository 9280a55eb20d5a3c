import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { searchSegments, type LiveSegment } from '../../src/providers/lexical-index/scorer.js'
import { readSegment, writeSegment } from '../../src/providers/lexical-index/segment-file.js'
import { buildSegment, packSegment, type AnalysedDocument, type SegmentData } from '../../src/providers/lexical-index/segment.js'

const live = (data: SegmentData): LiveSegment => ({ data, deleted: null, deletedDf: null, liveDocs: data.docCount, liveLength: data.totalLength })

/** `n` documents over a small vocabulary; document 7 holds `many` `repeat` times (a frequency past 8 bits when over 255). */
function documents(n: number, repeat: number): AnalysedDocument[] {
  const vocabulary = ['甲乙', '乙丙', '丙丁', '丁戊', 'alpha', 'beta', 'gamma']
  return Array.from({ length: n }, (_, d) => {
    const tokens = [vocabulary[d % 7]!, vocabulary[(d * 3) % 7]!, ...(d % 11 === 0 ? ['rare'] : [])]
    if (d === 7) for (let i = 0; i < repeat; i++) tokens.push('many')
    return { id: `doc-${String(d).padStart(6, '0')}#0`, hash: [d, d], tokens }
  })
}

const dirs: string[] = []
afterAll(async () => { for (const d of dirs) await rm(d, { recursive: true, force: true }) })

describe('packed segments', () => {
  const cases = [
    { name: 'under 256 documents, frequencies under 256', n: 200, repeat: 3, docs: 1, freqs: 1 },
    { name: 'a frequency past 255', n: 3_000, repeat: 300, docs: 2, freqs: 2 },
    { name: 'past 65,536 documents', n: 70_000, repeat: 70_000, docs: 4, freqs: 4 }
  ]
  for (const c of cases) {
    it(`${c.name}: the narrowest arrays, the same answers as 32 bits`, () => {
      const { data } = buildSegment('seg-1', documents(c.n, c.repeat))
      const packed = packSegment(data)
      expect(packed.postDocs.BYTES_PER_ELEMENT).toBe(c.docs)
      expect(packed.postFreqs.BYTES_PER_ELEMENT).toBe(c.freqs)
      expect(packed.maxFreq.BYTES_PER_ELEMENT).toBe(c.freqs)
      for (const k of ['postDocs', 'postFreqs', 'maxFreq', 'minLength'] as const) expect(Array.from(packed[k])).toEqual(Array.from(data[k]))
      for (const query of [['many'], ['甲乙', 'rare'], ['beta', 'many', 'gamma'], ['rare', 'rare', 'alpha'], ['absent']]) {
        for (const limit of [1, 10, 1_000]) {
          const expected = searchSegments([live(data)], query, limit)
          expect(searchSegments([live(packed)], query, limit), `${query} ${limit}`).toEqual(expected)
        }
      }
    })
  }

  it('a packed segment is written as the 32-bit file, byte for byte, and reads back as 32 bits', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'recall-packed-'))
    dirs.push(dir)
    const { data, forward } = buildSegment('seg-1', documents(3_000, 300))
    await writeSegment(join(dir, 'wide.seg'), data, forward)
    await writeSegment(join(dir, 'packed.seg'), packSegment(data), forward)
    expect(await readFile(join(dir, 'packed.seg'))).toEqual(await readFile(join(dir, 'wide.seg')))
    const read = (await readSegment(join(dir, 'packed.seg'), false)).data
    expect(read.postDocs).toBeInstanceOf(Uint32Array)
    expect(Array.from(read.postFreqs)).toEqual(Array.from(data.postFreqs))
  })
})

import { describe, expect, it } from 'vitest'
import { batchesOf } from '../../src/corpus/ingest-jobs.js'

describe('batchesOf', () => {
  it('groups consecutive whole documents up to the chunk budget, a larger document alone', () => {
    expect(batchesOf([2, 2, 3, 1, 10, 1], 4)).toEqual([
      { from: 0, to: 2, chunks: 4 }, { from: 2, to: 4, chunks: 4 }, { from: 4, to: 5, chunks: 10 }, { from: 5, to: 6, chunks: 1 }
    ])
    expect(batchesOf([5], 4)).toEqual([{ from: 0, to: 1, chunks: 5 }])
    expect(batchesOf([], 4)).toEqual([])
  })
})

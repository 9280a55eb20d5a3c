import { describe, expect, it } from 'vitest'
import { addDerived, batchesOf } from '../../src/corpus/ingest-jobs.js'

describe('batchesOf', () => {
  it('groups consecutive whole documents up to the chunk budget, a larger document alone', () => {
    expect(batchesOf([2, 2, 3, 1, 10, 1], 4)).toEqual([
      { from: 0, to: 2, chunks: 4 }, { from: 2, to: 4, chunks: 4 }, { from: 4, to: 5, chunks: 10 }, { from: 5, to: 6, chunks: 1 }
    ])
    expect(batchesOf([5], 4)).toEqual([{ from: 0, to: 1, chunks: 5 }])
    expect(batchesOf([], 4)).toEqual([])
  })
})

describe('addDerived', () => {
  it('sums two writes\' derived counts, the LLM\'s calls and tokens too', () => {
    const llm = (calls: number, tokens: number) => ({ chunks: 2, cached: 1, failed: 0, calls, retries: 0, prompt_tokens: tokens, completion_tokens: 10, total_tokens: tokens + 10 })
    expect(addDerived(undefined, { entities: 3, relations: 1, blocked: 0 })).toEqual({ entities: 3, relations: 1, blocked: 0 })
    expect(addDerived({ entities: 3, relations: 1, blocked: 0, llm: llm(1, 100) }, { entities: 4, relations: 2, blocked: 1, episodes: 1, llm: llm(2, 50) }))
      .toEqual({ entities: 7, relations: 3, blocked: 1, episodes: 1, llm: { chunks: 4, cached: 2, failed: 0, calls: 3, retries: 0, prompt_tokens: 150, completion_tokens: 20, total_tokens: 170 } })
  })
})

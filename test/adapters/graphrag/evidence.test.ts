import { describe, expect, it } from 'vitest'
import { evidenceOf } from '../../../adapters/graphrag/evidence.js'
import type { ShownCandidate } from '../../../adapters/graphrag/expand.js'

const candidate = (score: number, chunks: string[], relationChunks: string[] = []): ShownCandidate => ({
  entity: { id: 'd:x', name: 'x', aliases: [], source_chunk_ids: chunks },
  score,
  matchedBy: 'name',
  hop: score === 1 ? 0 : 1,
  links: [],
  relations: relationChunks.length === 0 ? [] : [{
    id: 'r', source: 'd:x', target: 'd:y', type: '负责', weight: 1,
    derived_from: [{ doc_id: 'b', chunk_ids: relationChunks, count: 1 }]
  }]
})

describe('evidenceOf', () => {
  it('weighs the n-th chunk score/√n: 1, 1/√2, 1/√3 for a named entity; 0.6, 0.6/√2 one hop away', () => {
    expect(evidenceOf(candidate(1, ['a#0', 'a#1', 'b#0']), 5)).toEqual([
      { chunk_id: 'a#0', weight: 1 }, { chunk_id: 'a#1', weight: 0.7071 }, { chunk_id: 'b#0', weight: 0.5774 }
    ])
    expect(evidenceOf(candidate(0.6, ['a#0', 'a#1']), 5)).toEqual([{ chunk_id: 'a#0', weight: 0.6 }, { chunk_id: 'a#1', weight: 0.4243 }])
  })

  it('keeps at most the cap per entity', () => {
    expect(evidenceOf(candidate(1, ['a#0', 'a#1', 'a#2', 'a#3']), 2).map((e) => e.chunk_id)).toEqual(['a#0', 'a#1'])
  })

  it('puts first the chunks that state a relation shown, then the rest in the entity\'s order; a relation chunk not naming the entity is none', () => {
    expect(evidenceOf(candidate(1, ['a#0', 'a#1', 'b#0'], ['b#0', 'z#9']), 5).map((e) => e.chunk_id)).toEqual(['b#0', 'a#0', 'a#1'])
  })
})

describe('evidenceOf with support', () => {
  it('keeps the cap\'s best-supported chunks, equal support in the entity\'s order, as a stable sort by support would', () => {
    // support by hand: c 3, f 3, b 2, h 2, a 1, others 0; a stable sort gives c f b h a d e g
    const support = new Map([['c', 3], ['f', 3], ['b', 2], ['h', 2], ['a', 1]])
    const chunks = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h']
    expect(evidenceOf(candidate(1, chunks), 3, support).map((e) => e.chunk_id)).toEqual(['c', 'f', 'b'])
    expect(evidenceOf(candidate(1, chunks), 5, support).map((e) => e.chunk_id)).toEqual(['c', 'f', 'b', 'h', 'a'])
    expect(evidenceOf(candidate(1, chunks), 10, support).map((e) => e.chunk_id)).toEqual(['c', 'f', 'b', 'h', 'a', 'd', 'e', 'g'])
    expect(evidenceOf(candidate(1, chunks), 0, support)).toEqual([])
  })
})

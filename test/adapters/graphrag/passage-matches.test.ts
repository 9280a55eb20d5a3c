/** The scoring of graphrag's passage fallback (`passages.ts`), on hits and entities made by hand. */
import { describe, expect, it } from 'vitest'
import { EVIDENCE_CEILING, documentsOf, passageMatches, passageSupport } from '../../../adapters/graphrag/passages.js'
import { KEYWORD_CEILING } from '../../../adapters/graphrag/keyword.js'
import type { KgEntity } from '../../../src/providers/knowledge-graph/port.js'

const entity = (id: string, chunks: string[], parts: Array<[string, number]> = []): KgEntity => ({
  id, name: id, aliases: [], source_chunk_ids: chunks, derived_from: parts.map(([doc_id, count]) => ({ doc_id, chunk_ids: [], count }))
})

describe('passage fallback scoring', () => {
  it('scores below the keyword fallback\'s ceiling', () => {
    expect(EVIDENCE_CEILING).toBeLessThan(KEYWORD_CEILING)
  })

  it('gives each hit chunk its share of the best hit, and the documents in hit order', () => {
    const hits = [{ id: 'b#2', score: 8 }, { id: 'a#0', score: 2 }, { id: 'b#0', score: 1 }]
    expect([...passageSupport(hits)]).toEqual([['b#2', 1], ['a#0', 0.25], ['b#0', 0.125]])
    expect(documentsOf(hits)).toEqual(['b', 'a'])
    expect(documentsOf([{ id: 'x#y#3', score: 1 }])).toEqual(['x#y'])
    expect(passageSupport([])).toEqual(new Map())
  })

  it('scores an entity by the best hit it cites, ties by hit chunks cited, mentions in the hits\' documents, id', () => {
    const hits = [{ id: 'b#2', score: 8 }, { id: 'a#0', score: 2 }, { id: 'b#0', score: 1 }]
    const entities = [
      entity('e-none', ['c#0']), // cites no hit: left out
      entity('e-low', ['b#0'], [['b', 9]]), // 0.3 × 1/8 = 0.0375
      entity('e-mid', ['a#0', 'c#1'], [['a', 1]]), // 0.3 × 2/8 = 0.075
      entity('e-top-one', ['b#2'], [['b', 5], ['c', 50]]), // 0.3; one hit; 5 mentions in b (c is no hit's document)
      entity('e-top-two', ['b#0', 'b#2'], [['b', 1]]), // 0.3; two hits cited: before the others at 0.3
      entity('e-top-one-b', ['b#2'], [['b', 5]]), // as e-top-one: by id, after it
      entity('e-top-few', ['b#2'], [['b', 2]]) // 0.3; one hit; 2 mentions
    ]
    expect(passageMatches(hits, entities).map((m) => [m.entity.id, m.score])).toEqual([
      ['e-top-two', 0.3], ['e-top-one', 0.3], ['e-top-one-b', 0.3], ['e-top-few', 0.3], ['e-mid', 0.075], ['e-low', 0.0375]
    ])
  })

  it('finds nothing without hits or without a positive best score', () => {
    expect(passageMatches([], [entity('e', ['a#0'])])).toEqual([])
    expect(passageMatches([{ id: 'a#0', score: 0 }], [entity('e', ['a#0'])])).toEqual([])
  })
})

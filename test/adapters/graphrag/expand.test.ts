import { describe, expect, it } from 'vitest'
import { expandMatches, orderRelations } from '../../../adapters/graphrag/expand.js'
import type { KgRelation } from '../../../src/providers/knowledge-graph/port.js'

const r = (id: string, source: string, target: string, weight: number): KgRelation => ({ id, source, target, type: 'co_occurs', weight })

describe('orderRelations', () => {
  // by hand: to a named entity first (r5 to b, r2 from c), then weight descending, then id
  const relations = [r('r1', 'a', 'x', 1), r('r2', 'c', 'a', 1), r('r3', 'a', 'y', 5), r('r4', 'a', 'z', 5), r('r5', 'a', 'b', 0.5), r('r6', 'a', 'a', 9)]
  const named = new Set(['a', 'b', 'c'])
  const full = ['r2', 'r5', 'r6', 'r3', 'r4', 'r1']

  it('relations to another named entity first, then weight descending, then id; a self-loop is not to another', () => {
    expect(orderRelations('a', relations, named).map((x) => x.id)).toEqual(full)
  })

  it('with a limit, the first ones of that order, whatever order they come in', () => {
    for (const limit of [0, 1, 2, 3, 5, 6, 10]) {
      expect(orderRelations('a', relations, named, limit).map((x) => x.id).slice(0, limit)).toEqual(full.slice(0, limit))
      expect(orderRelations('a', [...relations].reverse(), named, limit).map((x) => x.id).slice(0, limit)).toEqual(full.slice(0, limit))
    }
  })
})

describe('expandMatches: a named entity contributes at most maxNeighbours neighbours', () => {
  const entity = (id: string) => ({ id, name: id, aliases: [], source_chunk_ids: [] })
  const hood = {
    entities: ['hub', 'spec', 'n1', 'n2', 'n3', 'n4', 'both', 'solo'].map(entity),
    relations: [
      r('h1', 'hub', 'n1', 3), r('h2', 'hub', 'n2', 9), r('h3', 'hub', 'n3', 1), r('h4', 'n4', 'hub', 5),
      r('h5', 'hub', 'both', 0.1), r('s1', 'spec', 'both', 0.2), r('s2', 'spec', 'solo', 0.5)
    ]
  }
  const matches = [
    { entityId: 'hub', key: 'hub', matchedBy: 'name' as const, share: 1, position: 0 },
    { entityId: 'spec', key: 'spec', matchedBy: 'name' as const, share: 1, position: 4 }
  ]

  it('by hand: linked to both named first (both), then the heaviest relation (n2 9, n4 5, n1 3, n3 1, solo 0.5)', () => {
    const ids = (max: number) => expandMatches(matches, hood, max).map((c) => c.entity.id)
    expect(ids(Infinity)).toEqual(['hub', 'spec', 'both', 'n2', 'n4', 'n1', 'n3', 'solo'])
    // hub keeps both and n2; spec keeps both and solo (its second), though solo comes after neighbours hub dropped
    expect(ids(2)).toEqual(['hub', 'spec', 'both', 'n2', 'solo'])
    expect(ids(1)).toEqual(['hub', 'spec', 'both'])
    expect(ids(0)).toEqual(['hub', 'spec'])
  })
})

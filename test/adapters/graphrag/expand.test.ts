import { describe, expect, it } from 'vitest'
import { orderRelations } from '../../../adapters/graphrag/expand.js'
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

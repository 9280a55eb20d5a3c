import { describe, expect, it } from 'vitest'
import { fuseByRrf } from '../../../adapters/hybrid/rrf.js'

describe('fuseByRrf', () => {
  it('reproduces the worked example: rank 1 and rank 3 give 1/61 + 1/63 = 0.03227', () => {
    const [top] = fuseByRrf([{ leg: 'vector', ids: ['a'] }, { leg: 'lexical', ids: ['x', 'y', 'a'] }], { k: 60, window: 50 })
    expect(top!.id).toBe('a')
    expect(top!.score).toBeCloseTo(0.03227, 5)
    expect(top!.ranks).toEqual({ vector: 1, lexical: 3 })
    expect(top!.contributions.vector).toBeCloseTo(1 / 61, 12)
    expect(top!.contributions.lexical).toBeCloseTo(1 / 63, 12)
  })

  it('gives a candidate nothing from a leg that does not have it', () => {
    const fused = fuseByRrf([{ leg: 'vector', ids: ['a', 'b'] }, { leg: 'lexical', ids: ['b'] }], { k: 60, window: 50 })
    const a = fused.find((c) => c.id === 'a')!
    expect(a.score).toBeCloseTo(1 / 61, 12)
    expect(a.contributions).toEqual({ vector: 1 / 61 })
  })

  it('takes only the first `window` candidates of each leg', () => {
    const fused = fuseByRrf([{ leg: 'vector', ids: ['a', 'b', 'c'] }, { leg: 'lexical', ids: ['c', 'd'] }], { k: 60, window: 2 })
    expect(fused.map((c) => c.id).sort()).toEqual(['a', 'b', 'c', 'd'])
    expect(fused.find((c) => c.id === 'c')!.ranks).toEqual({ lexical: 1 })
  })

  it('applies per-leg weights and k', () => {
    const fused = fuseByRrf([{ leg: 'vector', ids: ['a'] }, { leg: 'lexical', ids: ['b'] }], { k: 10, window: 50, weights: { lexical: 2 } })
    expect(fused.map((c) => c.id)).toEqual(['b', 'a'])
    expect(fused[0]!.score).toBeCloseTo(2 / 11, 12)
    expect(fused[1]!.score).toBeCloseTo(1 / 11, 12)
  })

  it('breaks equal scores by the better best single-leg rank', () => {
    // p: ranks 2 and 2 -> 2/62 = 0.032258; q: ranks 1 and 3 -> 1/61 + 1/63 = 0.032266 (not equal, q first);
    // r: rank 1 in vector only and s: rank 1 in lexical only are equal; both best rank 1.
    const fused = fuseByRrf([{ leg: 'vector', ids: ['r', 'x'] }, { leg: 'lexical', ids: ['s', 'y'] }], { k: 60, window: 50 })
    expect(fused.map((c) => c.id)).toEqual(['r', 's', 'x', 'y'])
  })

  it('breaks equal scores and equal best ranks by the vector leg, then by id', () => {
    // a: vector 1 + lexical 3; b: vector 3 + lexical 1 -> same sum, same best rank 1; vector order puts a first.
    const fused = fuseByRrf([{ leg: 'vector', ids: ['a', 'm', 'b'] }, { leg: 'lexical', ids: ['b', 'n', 'a'] }], { k: 60, window: 50 })
    expect(fused.slice(0, 2).map((c) => c.id)).toEqual(['a', 'b'])
    // Neither in the vector leg: id order.
    const lexOnly = fuseByRrf([{ leg: 'lexical', ids: ['z'] }, { leg: 'other', ids: ['c'] }], { k: 60, window: 50 })
    expect(lexOnly.map((c) => c.id)).toEqual(['c', 'z'])
  })

  it('returns nothing for no legs or empty legs', () => {
    expect(fuseByRrf([], { k: 60, window: 50 })).toEqual([])
    expect(fuseByRrf([{ leg: 'vector', ids: [] }], { k: 60, window: 50 })).toEqual([])
  })
})

import { describe, expect, it } from 'vitest'
import { fuseByConvex, normaliseScores } from '../../../adapters/hybrid/fusion-convex.js'
import { fuseLegs } from '../../../adapters/hybrid/fusion.js'

describe('normaliseScores', () => {
  it('tmm divides the distance from the theoretical minimum by the top score\'s', () => {
    // cosine, m = -1: (0.8+1)/(0.8+1) = 1, (0.5+1)/1.8 = 0.8333, (-0.1+1)/1.8 = 0.5
    const n = normaliseScores([0.8, 0.5, -0.1], 'tmm', -1)
    expect(n[0]).toBe(1)
    expect(n[1]).toBeCloseTo(1.5 / 1.8, 12)
    expect(n[2]).toBeCloseTo(0.9 / 1.8, 12)
  })
  it('minmax maps the returned minimum to 0 and the maximum to 1', () => {
    expect(normaliseScores([12, 6, 4], 'minmax', 0)).toEqual([1, 0.25, 0])
  })
  it('zscore is (s - mean) / std over the returned scores', () => {
    // mean 2, population std sqrt(2/3) = 0.816497: z = 1.224745, 0, -1.224745
    const n = normaliseScores([3, 2, 1], 'zscore', 0)
    expect(n[0]).toBeCloseTo(1.224745, 6)
    expect(n[1]).toBeCloseTo(0, 12)
    expect(n[2]).toBeCloseTo(-1.224745, 6)
  })
  it('a single score (or all equal) normalises to 1 (tmm, minmax) or 0 (zscore)', () => {
    expect(normaliseScores([5], 'minmax', 0)).toEqual([1])
    expect(normaliseScores([0.3, 0.3], 'zscore', 0)).toEqual([0, 0])
  })
})

describe('fuseByConvex', () => {
  const lists = [
    { leg: 'vector', hits: [{ id: 'a', score: 0.8 }, { id: 'b', score: 0.5 }], theoreticalMin: -1 },
    { leg: 'lexical', hits: [{ id: 'b', score: 10 }, { id: 'c', score: 5 }], theoreticalMin: 0 }
  ]
  it('combines alpha·lexical + (1-alpha)·vector, a missing leg counting 0', () => {
    // tmm: vector a 1, b 1.5/1.8 = 0.83333; lexical b 1, c 0.5. alpha 0.5:
    // a = 0.5·1 = 0.5; b = 0.5·0.83333 + 0.5·1 = 0.91667; c = 0.5·0.5 = 0.25
    const fused = fuseByConvex(lists, { alpha: 0.5, window: 50, normalisation: 'tmm' })
    expect(fused.map((c) => c.id)).toEqual(['b', 'a', 'c'])
    expect(fused[0]!.score).toBeCloseTo(0.5 * (1.5 / 1.8) + 0.5, 12)
    expect(fused[0]!.contributions).toEqual({ vector: 0.5 * (1.5 / 1.8), lexical: 0.5 })
    expect(fused[0]!.ranks).toEqual({ vector: 2, lexical: 1 })
    expect(fused[1]!.score).toBeCloseTo(0.5, 12)
    expect(fused[2]!.score).toBeCloseTo(0.25, 12)
  })
  it('alpha 0 is the vector leg\'s order, alpha 1 the lexical leg\'s', () => {
    expect(fuseByConvex(lists, { alpha: 0, window: 50, normalisation: 'tmm' }).map((c) => c.id)).toEqual(['a', 'b', 'c'])
    // alpha 1: a scores 0 and c 0.5, b 1; a (vector rank 1) after c
    expect(fuseByConvex(lists, { alpha: 1, window: 50, normalisation: 'tmm' }).map((c) => c.id)).toEqual(['b', 'c', 'a'])
  })
  it('zscore gives a candidate missing from a leg that leg\'s lowest z', () => {
    // vector z: a +1, b -1; lexical z: b +1, c -1. alpha 0.5: a = 0.5·1 + 0.5·(-1) = 0, b = 0, c = 0.5·(-1) + 0.5·(-1) = -1
    const fused = fuseByConvex(lists, { alpha: 0.5, window: 50, normalisation: 'zscore' })
    expect(fused.map((c) => [c.id, Math.round(c.score * 1e9) / 1e9])).toEqual([['a', 0], ['b', 0], ['c', -1]])
  })
  it('takes only the first `window` hits of each leg', () => {
    const fused = fuseByConvex(lists, { alpha: 0.5, window: 1, normalisation: 'minmax' })
    expect(fused.map((c) => c.id).sort()).toEqual(['a', 'b'])
    expect(fused.find((c) => c.id === 'b')!.ranks).toEqual({ lexical: 1 })
  })
  it('breaks equal scores by best single-leg rank, then the vector leg\'s order, then id', () => {
    const tied = fuseByConvex([
      { leg: 'vector', hits: [{ id: 'y', score: 1 }], theoreticalMin: -1 },
      { leg: 'lexical', hits: [{ id: 'x', score: 3 }], theoreticalMin: 0 }
    ], { alpha: 0.5, window: 50, normalisation: 'tmm' })
    expect(tied.map((c) => c.id)).toEqual(['y', 'x'])
  })
})

describe('fuseLegs', () => {
  it('rrf gives exactly fuseByRrf\'s scores and explains them as before', () => {
    const [top] = fuseLegs([{ leg: 'vector', hits: [{ id: 'a', score: 0.9 }] }, { leg: 'lexical', hits: [{ id: 'x', score: 3 }, { id: 'y', score: 2 }, { id: 'a', score: 1 }] }],
      { fusion: 'rrf', k: 60, window: 50, weights: {}, alpha: 0.5, normalisation: 'tmm' })
    expect(top!.score).toBeCloseTo(1 / 61 + 1 / 63, 12)
    expect(top!.explanation).toEqual({ score_kind: 'rrf', rrf: { k: 60, contributions: { vector: 0.016393, lexical: 0.015873 } } })
  })
  it('convex explains alpha, normalisation, normalised scores and contributions', () => {
    const [top] = fuseLegs([{ leg: 'vector', hits: [{ id: 'a', score: 0.5 }, { id: 'b', score: 0.2 }] }, { leg: 'lexical', hits: [{ id: 'a', score: 4 }] }],
      { fusion: 'convex', k: 60, window: 50, weights: {}, alpha: 0.25, normalisation: 'tmm' })
    expect(top!.explanation).toEqual({ score_kind: 'convex', convex: { alpha: 0.25, normalisation: 'tmm', normalised: { vector: 1, lexical: 1 }, contributions: { vector: 0.75, lexical: 0.25 } } })
  })
})

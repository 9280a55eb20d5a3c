import { describe, expect, it } from 'vitest'
import { common, comparePair, comparePairs, evidenceList, evidenceOf, jaccard, rankBiasedOverlap } from '../src/comparison.js'
import type { RetrieveResponse } from '../src/schemas/recall-item.js'

// Every expected value below is worked out by hand in the comment beside it (p = 0.9 throughout:
// p = 0.9, p² = 0.81, p³ = 0.729, p⁴ = 0.6561, (1-p)/p = 1/9). The RBO values were also checked once
// against an independent implementation (the `rbo` package on PyPI, `RankingSimilarity(S, T).rbo_ext(p=0.9)`).

describe('rankBiasedOverlap (RBO_ext, Webber et al. 2010)', () => {
  it('is 1 for identical lists', () => {
    // X_d = d, so every X_d/d = 1: (1/9)(0.9 + 0.81 + 0.729) + (3/3)(0.729) = 0.271 + 0.729 = 1
    expect(rankBiasedOverlap(['a', 'b', 'c'], ['a', 'b', 'c'])).toBeCloseTo(1, 12)
  })

  it('is 0 for disjoint lists', () => {
    // every X_d = 0
    expect(rankBiasedOverlap(['a', 'b'], ['c', 'd'])).toBe(0)
  })

  it('weighs a swap at the top: [a,b,c] against [b,a,c]', () => {
    // X_1 = 0, X_2 = 2, X_3 = 3; Σ X_d/d·p^d = 0 + 1·0.81 + 1·0.729 = 1.539
    // (1/9)(1.539) + (3/3)(0.729) = 0.171 + 0.729 = 0.9
    expect(rankBiasedOverlap(['a', 'b', 'c'], ['b', 'a', 'c'])).toBeCloseTo(0.9, 12)
  })

  it('weighs a disagreement lower down less: [a,b,c] against [a,c,b]', () => {
    // X_1 = 1, X_2 = 1, X_3 = 3; Σ = 1·0.9 + 0.5·0.81 + 1·0.729 = 0.9 + 0.405 + 0.729 = 2.034
    // (1/9)(2.034) + 0.729 = 0.226 + 0.729 = 0.955
    expect(rankBiasedOverlap(['a', 'b', 'c'], ['a', 'c', 'b'])).toBeCloseTo(0.955, 12)
  })

  it('equal lengths, partial overlap: [a,b,c,d] against [a,x,b,y]', () => {
    // X_1 = 1 (a), X_2 = 1, X_3 = 2 (a, b), X_4 = 2
    // Σ = 1·0.9 + (1/2)·0.81 + (2/3)·0.729 + (2/4)·0.6561 = 0.9 + 0.405 + 0.486 + 0.32805 = 2.11905
    // (1/9)(2.11905) + (2/4)(0.6561) = 0.235450 + 0.32805 = 0.563500
    expect(rankBiasedOverlap(['a', 'b', 'c', 'd'], ['a', 'x', 'b', 'y'])).toBeCloseTo(0.5635, 12)
  })

  it('uneven lengths: a shorter list that agrees with the top of the longer extrapolates to 1', () => {
    // L = [a,b,c], S = [a], s = 1, l = 3: X_1 = X_2 = X_3 = 1, X_s = 1
    // first sum: 1·0.9 + (1/2)·0.81 + (1/3)·0.729 = 0.9 + 0.405 + 0.243 = 1.548
    // second sum (d = 2, 3): 1·(1)/(1·2)·0.81 + 1·(2)/(1·3)·0.729 = 0.405 + 0.486 = 0.891
    // (1/9)(1.548 + 0.891) + ((1 - 1)/3 + 1/1)·0.729 = 0.271 + 0.729 = 1
    expect(rankBiasedOverlap(['a', 'b', 'c'], ['a'])).toBeCloseTo(1, 12)
    expect(rankBiasedOverlap(['a'], ['a', 'b', 'c'])).toBeCloseTo(1, 12)
  })

  it('uneven lengths: the shorter list\'s item found only deep in the longer one', () => {
    // L = [a,b,c], S = [c]: X_1 = 0, X_2 = 0, X_3 = 1 (c), X_s = X_1 = 0
    // first sum: (1/3)·0.729 = 0.243; second sum: 0 (X_s = 0)
    // (1/9)(0.243) + ((1 - 0)/3 + 0/1)·0.729 = 0.027 + 0.243 = 0.27
    expect(rankBiasedOverlap(['a', 'b', 'c'], ['c'])).toBeCloseTo(0.27, 12)
  })

  it('uneven lengths, two against four: [a,b,c,d] against [b,e]', () => {
    // L = [a,b,c,d] (l = 4), S = [b,e] (s = 2)
    // X_1 = |{b} ∩ {a}| = 0, X_2 = |{b,e} ∩ {a,b}| = 1, X_s = 1, X_3 = |S ∩ {a,b,c}| = 1, X_4 = 1
    // first sum: 0 + (1/2)·0.81 + (1/3)·0.729 + (1/4)·0.6561 = 0.405 + 0.243 + 0.164025 = 0.812025
    // second sum: d = 3: 1·(1)/(2·3)·0.729 = 0.1215; d = 4: 1·(2)/(2·4)·0.6561 = 0.164025; total 0.285525
    // (1/9)(0.812025 + 0.285525) = (1/9)(1.09755) = 0.121950
    // + ((1 - 1)/4 + 1/2)·0.6561 = 0.32805  ->  0.450000
    expect(rankBiasedOverlap(['a', 'b', 'c', 'd'], ['b', 'e'])).toBeCloseTo(0.45, 12)
  })

  it('is null when both lists are empty and 0 when one is', () => {
    expect(rankBiasedOverlap([], [])).toBeNull()
    expect(rankBiasedOverlap(['a'], [])).toBe(0)
    expect(rankBiasedOverlap([], ['a', 'b'])).toBe(0)
  })

  it('is symmetric', () => {
    expect(rankBiasedOverlap(['b', 'e'], ['a', 'b', 'c', 'd'])).toBeCloseTo(0.45, 12)
  })
})

describe('jaccard and common', () => {
  it('counts distinct values', () => {
    // {a, b} and {b, c}: 1 shared of 3 distinct -> 1/3; the repeated a counts once
    expect(jaccard(['a', 'a', 'b'], ['b', 'c'])).toBeCloseTo(1 / 3, 12)
    expect(jaccard(['a'], ['a'])).toBe(1)
    expect(jaccard(['a'], ['b'])).toBe(0)
    expect(jaccard(['a'], [])).toBe(0)
    expect(jaccard([], [])).toBeNull()
  })

  it('common keeps the first list\'s order, each value once', () => {
    expect(common(['c', 'a', 'b', 'a'], ['a', 'c'])).toEqual(['c', 'a'])
  })
})

const item = (mode: 'hybrid' | 'graphrag' | 'episodic', id: string, source: string, metadata: Record<string, unknown> = {}) =>
  ({ id, text: id, score: 1, source, mode, metadata: { rank: 1, score_kind: 'rrf' as const, ...metadata } })

const response = (mode: 'hybrid' | 'graphrag' | 'episodic', items: ReturnType<typeof item>[], took_ms: number, match_strength: RetrieveResponse['match_strength']): RetrieveResponse =>
  ({ mode, query: 'q', namespace: 'default', recall_bundle: items, legs: [], match_strength, cached: false, took_ms })

describe('evidence of an item', () => {
  it('is the chunk for hybrid, source_chunk_ids for graphrag, episode:<id> for an Episode', () => {
    expect(evidenceOf(item('hybrid', 'doc#2', 'd.md'))).toEqual(['doc#2'])
    expect(evidenceOf(item('graphrag', 'e1', 'd.md', { source_chunk_ids: ['doc#2', 'doc#5'] }))).toEqual(['doc#2', 'doc#5'])
    expect(evidenceOf(item('graphrag', 'e2', 'graph:entity/e2'))).toEqual([])
    expect(evidenceOf(item('episodic', 'ep-1', 'episode:ep-1', { best_facet_id: 'f1' }))).toEqual(['episode:ep-1'])
  })

  it('a bundle\'s evidence list is in rank order with repeats dropped', () => {
    const bundle = [
      item('graphrag', 'e1', 'd.md', { source_chunk_ids: ['doc#2', 'doc#5'] }),
      item('graphrag', 'e2', 'd.md', { source_chunk_ids: ['doc#5', 'doc#1'] })
    ]
    expect(evidenceList(bundle)).toEqual(['doc#2', 'doc#5', 'doc#1'])
  })
})

describe('comparePair', () => {
  // Hybrid: doc1#0 (a.md), doc2#1 (b.md), doc1#2 (a.md)
  // Graphrag: e1 (a.md, cites doc1#2 and doc3#0), e2 (graph:entity/e2, cites nothing)
  const hybrid = response('hybrid', [item('hybrid', 'doc1#0', 'a.md'), item('hybrid', 'doc2#1', 'b.md'), item('hybrid', 'doc1#2', 'a.md')], 12.5, 'strong')
  const graphrag = response('graphrag', [
    item('graphrag', 'e1', 'a.md', { source_chunk_ids: ['doc1#2', 'doc3#0'] }),
    item('graphrag', 'e2', 'graph:entity/e2')
  ], 0.8, 'medium')

  it('hybrid against graphrag', () => {
    // ids: {doc1#0, doc2#1, doc1#2} ∩ {e1, e2} = {}
    // evidence: [doc1#0, doc2#1, doc1#2] and [doc1#2, doc3#0]: common doc1#2
    // sources: {a.md, b.md} and {a.md, graph:entity/e2}: common a.md, Jaccard 1/3 = 0.333333
    // RBO_ext, L = [doc1#0, doc2#1, doc1#2] (l = 3), S = [doc1#2, doc3#0] (s = 2):
    //   X_1 = 0, X_2 = 0 (= X_s), X_3 = 1; first sum (1/3)·0.729 = 0.243; second sum 0
    //   (1/9)(0.243) + ((1 - 0)/3 + 0/2)·0.729 = 0.027 + 0.243 = 0.27
    expect(comparePair(0, hybrid, 1, graphrag)).toEqual({
      arms: [0, 1],
      common_ids: [],
      common_evidence: ['doc1#2'],
      common_sources: ['a.md'],
      sources_jaccard: 0.333333,
      evidence_rbo: 0.27,
      took_ms: [12.5, 0.8],
      match_strength: ['strong', 'medium']
    })
  })

  it('two hybrid arms that differ in legs', () => {
    // A = [x#0 (x.md), y#1 (y.md), x#3 (x.md)], B = [x#0 (x.md), z#2 (z.md)]
    // common ids = common evidence = [x#0]; sources {x.md, y.md} and {x.md, z.md}: Jaccard 1/3
    // RBO_ext, L = A (l = 3), S = B (s = 2): X_1 = 1, X_2 = 1 (= X_s), X_3 = 1
    //   first sum: 1·0.9 + (1/2)·0.81 + (1/3)·0.729 = 0.9 + 0.405 + 0.243 = 1.548
    //   second sum (d = 3): 1·(1)/(2·3)·0.729 = 0.1215
    //   (1/9)(1.6695) + ((1 - 1)/3 + 1/2)·0.729 = 0.1855 + 0.3645 = 0.55
    const a = response('hybrid', [item('hybrid', 'x#0', 'x.md'), item('hybrid', 'y#1', 'y.md'), item('hybrid', 'x#3', 'x.md')], 9, 'strong')
    const b = response('hybrid', [item('hybrid', 'x#0', 'x.md'), item('hybrid', 'z#2', 'z.md')], 1.5, 'weak')
    expect(comparePair(0, a, 1, b)).toMatchObject({
      common_ids: ['x#0'], common_evidence: ['x#0'], common_sources: ['x.md'], sources_jaccard: 0.333333, evidence_rbo: 0.55
    })
  })

  it('pairs only arms that answered, in index order', () => {
    const episodic = response('episodic', [item('episodic', 'ep-1', 'episode:ep-1')], 20, 'weak')
    expect(comparePairs([hybrid, graphrag, episodic]).map((p) => p.arms)).toEqual([[0, 1], [0, 2], [1, 2]])
    expect(comparePairs([hybrid, undefined, episodic]).map((p) => p.arms)).toEqual([[0, 2]])
    // hybrid against an Episode: nothing in common, Jaccard 0 of 3 distinct sources, RBO 0
    expect(comparePairs([hybrid, undefined, episodic])[0]).toMatchObject({ common_evidence: [], sources_jaccard: 0, evidence_rbo: 0 })
  })

  it('two empty bundles have no Jaccard or RBO to give', () => {
    const empty = response('graphrag', [], 0.1, 'none')
    expect(comparePair(0, empty, 1, { ...empty, took_ms: 0.2 })).toMatchObject({ sources_jaccard: null, evidence_rbo: null })
  })
})

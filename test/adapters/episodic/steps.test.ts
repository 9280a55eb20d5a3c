import { describe, expect, it } from 'vitest'
import { adaptiveEdgeScore, computeAdaptiveContext, computeCollectionStats, fDist } from '../../../adapters/episodic/adaptive.js'
import { extractNumberTokens } from '../../../adapters/episodic/bonuses.js'
import { DEFAULT_EPISODIC_CONFIG, resolveEpisodicConfig, EpisodicOptionError } from '../../../adapters/episodic/config.js'
import { normaliseCollections, normaliseDistances } from '../../../adapters/episodic/normalise.js'
import { buildInMemoryGraph, projectNodeset, projectTwoPhases, relevantIds } from '../../../src/providers/episodic-graph/projection.js'
import { episodicMatchStrength, topTie } from '../../../adapters/episodic/strength.js'
import { filterSummary, formatEpisodeTime } from '../../../adapters/episodic/output.js'
import { runScenario, type ScenarioInput } from '../../../adapters/episodic/scenario.js'
import { computeTimeMatch, lowerByTimeBonus } from '../../../adapters/episodic/time-bonus.js'
import type { CollectionHits, QueryTime } from '../../../adapters/episodic/types.js'

const cfg = DEFAULT_EPISODIC_CONFIG

describe('normaliseDistances', () => {
  it('min-max normalises per collection', () => {
    const out = normaliseDistances([0.42, 0.55, 0.61, 0.9].map((d, i) => ({ id: `n${i}`, distance: d, text: '' })))
    expect(out.map((h) => h.score)).toEqual([0, expect.closeTo(0.2708, 4), expect.closeTo(0.3958, 4), 1])
    expect(out[3]!.raw_distance).toBe(0.9)
  })
  it('gives 0 to every hit when all distances are equal, and nothing for no hit', () => {
    expect(normaliseDistances([{ id: 'a', distance: 0.3, text: '' }, { id: 'b', distance: 0.3, text: '' }]).map((h) => h.score)).toEqual([0, 0])
    expect(normaliseDistances([])).toEqual([])
  })
})

describe('normaliseCollections (difference 6 and m-flow\'s per-collection rule)', () => {
  // Four raw distances, split over two collections.
  const raw = {
    Episode_summary: [{ id: 'E1', distance: 0.42, text: '' }, { id: 'E2', distance: 0.55, text: '' }],
    Facet_search_text: [{ id: 'F1', distance: 0.61, text: '' }, { id: 'F2', distance: 0.9, text: '' }]
  }
  it('query: one pool, min 0.42 and max 0.90 over both collections', () => {
    const out = normaliseCollections(raw, 'query')
    // (0.55 - 0.42) / 0.48 = 0.270833…, (0.61 - 0.42) / 0.48 = 0.395833…
    expect(out['Episode_summary']!.map((h) => h.score)).toEqual([0, expect.closeTo(0.270833, 6)])
    expect(out['Facet_search_text']!.map((h) => h.score)).toEqual([expect.closeTo(0.395833, 6), 1])
    expect(out['Facet_search_text']![1]!.raw_distance).toBe(0.9)
  })
  it('collection: each collection on its own, so both best hits score 0', () => {
    const out = normaliseCollections(raw, 'collection')
    expect(out['Episode_summary']!.map((h) => h.score)).toEqual([0, 1])
    expect(out['Facet_search_text']!.map((h) => h.score)).toEqual([0, 1])
  })
  it('query: one hit in the whole pool, or equal distances everywhere, score 0; an empty collection stays empty', () => {
    expect(normaliseCollections({ A: [{ id: 'a', distance: 0.7, text: '' }], B: [] }, 'query')).toEqual({
      A: [{ id: 'a', text: '', raw_distance: 0.7, score: 0 }], B: []
    })
    const equal = normaliseCollections({ A: [{ id: 'a', distance: 0.3, text: '' }], B: [{ id: 'b', distance: 0.3, text: '' }] }, 'query')
    expect([...equal['A']!, ...equal['B']!].map((h) => h.score)).toEqual([0, 0])
  })
})

describe('projectTwoPhases: Episode hits outside max_relevant_ids (difference 5)', () => {
  const graph = buildInMemoryGraph(
    [
      { id: 'E1', type: 'Episode' }, { id: 'E2', type: 'Episode' }, { id: 'F1', type: 'Facet' }, { id: 'F2', type: 'Facet' },
      { id: 'N1', type: 'Entity' }
    ],
    [
      { from: 'E1', to: 'F1', relationship_name: 'has_facet', edge_text: 'hf1' },
      { from: 'E2', to: 'F2', relationship_name: 'has_facet', edge_text: 'hf2' },
      { from: 'E2', to: 'N1', relationship_name: 'involves_entity', edge_text: 'ie2' }
    ]
  )
  const project = async (ids: readonly string[]) => projectNodeset(graph, ids)
  it('adds a stray Episode hit as a node, without its edges or the nodes they lead to, in the phase-2 round trip', async () => {
    const calls: string[][] = []
    const counting = async (ids: readonly string[]) => { calls.push([...ids]); return project(ids) }
    const best = new Map([['F1', 0], ['E2', 0.2]])
    const r = await projectTwoPhases(counting, { relevant_ids: relevantIds(best, 1), best_by_id: best, max_ids: 2, episode_hit_ids: ['E2'] })
    expect(calls).toEqual([['F1'], ['E1', 'E2']])
    expect([...r.nodes.keys()].sort()).toEqual(['E1', 'E2', 'F1'])
    expect(r.edges.map((e) => e.edge_text)).toEqual(['hf1'])
  })
  it('leaves the projection as upstream has it when every Episode hit is reached', async () => {
    const best = new Map([['F1', 0], ['E1', 0.2]])
    const r = await projectTwoPhases(project, { relevant_ids: relevantIds(best, 1), best_by_id: best, max_ids: 2, episode_hit_ids: ['E1'] })
    expect([...r.nodes.keys()].sort()).toEqual(['E1', 'F1'])
  })
})

describe('ties at the top (difference 1)', () => {
  const bundle = (episode_id: string, score: number) => ({
    episode_id, score, best_path: 'facet' as const, best_support_id: 'F', best_facet_id: 'F', best_point_id: null, best_entity_id: null
  })
  it('names every Episode tied with the first, with their cost', () => {
    expect(topTie([bundle('E1', 0.15), bundle('E2', 0.15), bundle('E3', 0.15), bundle('E4', 0.3)])).toEqual({ ids: ['E1', 'E2', 'E3'], value: 0.15, ordered_by: 'id' })
    expect(topTie([bundle('E1', 0.15), bundle('E2', 0.16)])).toBeUndefined()
    expect(topTie([bundle('E1', 0.15)])).toBeUndefined()
    // 0.4 + 0.5 + 0.05 and 0.3 + 0.6 + 0.05 differ in the last bit: not a tie, and not ordered by id.
    expect(topTie([bundle('E2', 0.3 + 0.6 + 0.05), bundle('E1', 0.4 + 0.5 + 0.05)])).toBeUndefined()
  })
  it('caps match_strength at medium when the first two tie', () => {
    expect(episodicMatchStrength(0.8, true)).toBe('medium')
    expect(episodicMatchStrength(0.8, false)).toBe('strong')
    expect(episodicMatchStrength(0.55, true)).toBe('medium')
    expect(episodicMatchStrength(0.3, true)).toBe('weak')
  })
})

describe('extractNumberTokens', () => {
  const rows: Array<[string, Array<[string, string]>]> = [
    ['40万', [['40', '40万']]],
    ['1.5GB', [['1.5', '1.5GB']]],
    ['3个人5天', [['3', '3个'], ['5', '5天']]],
    ['in 2022?', [['2022', '2022']]],
    ['12:30', [['12', '12'], ['30', '30']]],
    ['v2', []],
    ['４０', [['４０', '４０']]],
    ['预算40万', [['40', '40万']]]
  ]
  for (const [text, tokens] of rows) {
    it(text, () => expect(extractNumberTokens(text).map((t) => [t.raw, t.full])).toEqual(tokens))
  }
})

describe('bundle costs (docs/episodic.md, step 8)', () => {
  const g6 = (dF: number, extra: ScenarioInput['hits'] = {}): ScenarioInput => ({
    query: '变更边界讨论结果',
    graph: { nodes: [{ id: 'E1', type: 'Episode', name: 'e', summary: 's' }, { id: 'F1', type: 'Facet', name: 'f', search_text: 'f' }],
      edges: [{ from: 'E1', to: 'F1', relationship_name: 'has_facet', edge_text: 'hf' }] },
    hits: { Facet_search_text: [{ id: 'F1', score: dF }], RelationType_relationship_name: [{ text: 'hf', score: 0 }], ...extra }
  })
  it('is not monotonic in the facet score: 0.09 costs 0.24, 0.10 costs 0.115', async () => {
    expect((await runScenario(g6(0.09))).bundles[0]!.score).toBeCloseTo(0.24, 9)
    expect((await runScenario(g6(0.1))).bundles[0]!.score).toBeCloseTo(0.115, 9)
  })
  it('reaches the minimum point cost 0.065', async () => {
    const input = g6(0.1, { FacetPoint_search_text: [{ id: 'P1', score: 0 }], RelationType_relationship_name: [{ text: 'hf', score: 0 }, { text: 'hp', score: 0 }] })
    input.graph.nodes.push({ id: 'P1', type: 'FacetPoint', name: 'p', search_text: 'p' })
    input.graph.edges.push({ from: 'F1', to: 'P1', relationship_name: 'has_point', edge_text: 'hp' })
    const [b] = (await runScenario(input)).bundles
    expect(b).toMatchObject({ best_path: 'point', best_point_id: 'P1', best_facet_id: 'F1' })
    expect(b!.score).toBeCloseTo(0.065, 9)
  })
})

describe('adaptive scoring (a worked example of m-flow\'s rule)', () => {
  const hit = (raw: number) => ({ id: String(raw), score: 0, text: '', raw_distance: raw })
  const hits: CollectionHits = {
    FacetPoint_search_text: [hit(0.35), hit(0.52)],
    Episode_summary: [hit(0.9), hit(0.95)],
    RelationType_relationship_name: [hit(0.3), hit(0.4)],
    Entity_name: [hit(0.4)]
  }
  it('gives the example confidences, weights and final score', () => {
    const stats = computeCollectionStats(hits, cfg)
    expect(stats.map((s) => s.confidence)).toEqual([0.8, 0.3906, 0.7714, 0.1824].map((c) => expect.closeTo(c, 4)))
    const ctx = computeAdaptiveContext(stats, cfg)
    expect(ctx.conf_node).toBeCloseTo(0.8, 9)
    expect(ctx.conf_edge).toBeCloseTo(0.7714, 4)
    expect(ctx.w_node).toBeCloseTo(0.5059, 4)
    expect(ctx.best_gap).toBeCloseTo(0.17, 9)
    expect(adaptiveEdgeScore(0, 0.9, 0, ctx, cfg)).toBeCloseTo(0.4225, 4)
  })
  it('f_dist at the quoted points', () => {
    expect([0.75, 1.0, 1.25, 2.0, 3.0].map((r) => fDist(r, cfg))).toEqual([0.75, 0.5, 0.4, 0.2, 0.1].map((v) => expect.closeTo(v, 9)))
  })
})

describe('time match and bonus', () => {
  const day = (d: string) => Date.parse(`${d}T00:00:00Z`)
  const week: QueryTime = { has_time: true, start_ms: day('2026-04-13'), end_ms: day('2026-04-20'), confidence: 0.85, duration_days: 7, query_wo_time: '', matches: [] }
  it('a contained mentioned time scores its confidence times the query confidence', () => {
    // score 1 (containment) x 0.9 x 1.0 = 0.9; x 0.85 = 0.765; bonus = 0.04 x 0.765 = 0.0306.
    const m = computeTimeMatch({ id: 'E', type: 'Episode', mentioned_time_start_ms: day('2026-04-15'), mentioned_time_end_ms: day('2026-04-16'), mentioned_time_confidence: 0.9 }, week, cfg, 0.04)
    expect(m.bonus).toBeCloseTo(0.0306, 12)
  })
  it('falls back to created_at (0.5) and reads a missing confidence as 0.7', () => {
    expect(computeTimeMatch({ id: 'E', type: 'Episode', created_at: day('2026-04-14') }, week, cfg, 0.04).bonus).toBeCloseTo(0.04 * 0.5 * 0.85, 12)
    expect(computeTimeMatch({ id: 'E', type: 'Episode', mentioned_time_start_ms: day('2026-04-14'), mentioned_time_end_ms: day('2026-04-15') }, week, cfg, 0.04).bonus)
      .toBeCloseTo(0.04 * 0.7 * 0.85, 12)
  })
  it('damps query ranges longer than a year', () => {
    const twoYears: QueryTime = { ...week, start_ms: day('2024-01-01'), end_ms: day('2026-01-01'), duration_days: 731, confidence: 0.9 }
    // 365/731 = 0.4993 > 0.3; match = 1 x 0.7 x 0.4993 x 0.9.
    const m = computeTimeMatch({ id: 'E', type: 'Episode', mentioned_time_start_ms: day('2025-03-01'), mentioned_time_end_ms: day('2025-03-02') }, twoYears, cfg, 0.04)
    expect(m.bonus).toBeCloseTo(0.04 * 0.7 * (365 / 731) * 0.9, 12)
  })
  it('never raises a cost (difference 4)', () => {
    expect(lowerByTimeBonus(0.05, 0.04, 0.08)).toBe(0.05)
    expect(lowerByTimeBonus(0.08, 0.04, 0.08)).toBe(0.08)
    expect(lowerByTimeBonus(0.1, 0.04, 0.08)).toBe(0.08)
    expect(lowerByTimeBonus(0.5, 0.04, 0.08)).toBeCloseTo(0.46, 12)
  })
})

describe('output', () => {
  it('formats the Episode time as m-flow does', () => {
    expect(formatEpisodeTime({ id: 'E', type: 'Episode', mentioned_time_text: 'May 7, 2023' })).toBe('May 7, 2023')
    expect(formatEpisodeTime({ id: 'E', type: 'Episode', mentioned_time_text: 'last Sunday', mentioned_time_start_ms: Date.parse('2023-05-07T00:00:00Z') })).toBe('May 07, 2023')
    expect(formatEpisodeTime({ id: 'E', type: 'Episode', mentioned_time_text: '去年夏天' })).toBe('去年夏天')
    expect(formatEpisodeTime({ id: 'E', type: 'Episode', created_at: 1704153600000 })).toBe('January 02, 2024 (recorded)')
    expect(formatEpisodeTime({ id: 'E', type: 'Episode' })).toBeNull()
  })
  it('keeps the summary sections whose title is a matched facet name, else the whole summary', () => {
    const s = '【目标】改成流式。【变更边界】鉴权不变。'
    expect(filterSummary(s, new Set(['变更边界']))).toBe('【变更边界】鉴权不变。')
    expect(filterSummary(s, new Set(['风险']))).toBe(s)
    expect(filterSummary(s, new Set())).toBe(s)
    expect(filterSummary('没有标记的摘要', new Set(['目标']))).toBe('没有标记的摘要')
  })
})

describe('resolveEpisodicConfig', () => {
  it('applies overrides in range and ignores unknown keys', () => {
    const c = resolveEpisodicConfig({ hop_cost: 0.1, top_k: 3, display_mode: 'detail', enable_time_bonus: false, mode: 'episodic' })
    expect([c.hop_cost, c.top_k, c.display_mode, c.enable_time_bonus, c.edge_miss_cost]).toEqual([0.1, 3, 'detail', false, 0.9])
  })
  it.each([
    [{ hop_cost: -0.1 }, /hop_cost/], [{ hop_cost: 'x' }, /hop_cost/], [{ wide_search_top_k: 0 }, /wide_search_top_k/],
    [{ max_relevant_ids: 1.5 }, /integer/], [{ top_k: 101 }, /top_k/], [{ display_mode: 'full' }, /display_mode/],
    [{ enable_time_bonus: 'yes' }, /enable_time_bonus/], [{ edge_miss_cost: Number.NaN }, /edge_miss_cost/]
  ])('refuses %j', (overrides, message) => {
    expect(() => resolveEpisodicConfig(overrides)).toThrow(EpisodicOptionError)
    expect(() => resolveEpisodicConfig(overrides)).toThrow(message)
  })
})

describe('episodicOptionProperties', () => {
  it('describes every option with its range and the default of the constants table', async () => {
    const { episodicOptionProperties } = await import('../../../adapters/episodic/config.js')
    const props = episodicOptionProperties()
    expect(props['hop_cost']).toMatchObject({ type: 'number', minimum: 0, maximum: 10, default: 0.05 })
    expect(props['wide_search_top_k']).toMatchObject({ type: 'integer', default: 100 })
    expect(props['display_mode']).toMatchObject({ enum: ['summary', 'highly_related_summary', 'detail'], default: 'summary' })
    expect(props['enable_time_bonus']).toMatchObject({ type: 'boolean', default: true })
  })
})

/**
 * `meaningMatches` (adapters/graphrag/meaning.ts): which entities the nearest names reach, worked out by hand from the
 * names below: a name under the floor reaches nothing, an entity found by name is not found again, an entity held by two
 * near names keeps the nearer (the search's order), and a name the matcher's part of the graph does not hold is skipped.
 */
import { describe, expect, it } from 'vitest'
import { buildNameMatcher, type NameMatch } from '../../../adapters/graphrag/match.js'
import { meaningMatches } from '../../../adapters/graphrag/meaning.js'

const matcher = buildNameMatcher([
  { id: 'over', name: '住宿超标', aliases: ['住宿费超标准'] },
  { id: 'std', name: '住宿标准', aliases: [] },
  { id: 'leave', name: '年假', aliases: [] },
  { id: 'org', name: 'Qinghe', aliases: [] },
  { id: 'org2', name: 'qinghe', aliases: [] }
])

describe('meaningMatches', () => {
  it('keeps the name matches first, then the entities of the names at or above the floor, nearest first', () => {
    const named: NameMatch[] = [{ entityId: 'leave', matchedBy: 'name', position: 0, key: '年假', share: 1 }]
    const found = meaningMatches(named, [
      { text: '住宿标准', similarity: 0.61234 },
      { text: '住宿费超标准', similarity: 0.58 },
      { text: '住宿超标', similarity: 0.57 },
      { text: '年假', similarity: 0.9 },
      { text: '不在图里', similarity: 0.99 },
      { text: 'qinghe', similarity: 0.549 }
    ], matcher, 0.55)
    expect(found.map((m) => [m.entityId, m.matchedBy, m.key, m.share])).toEqual([
      ['leave', 'name', '年假', 1],
      ['std', 'meaning', '住宿标准', 0.6123],
      ['over', 'meaning', '住宿费超标准', 0.58]
    ])
  })

  it('one text held by two entities reaches both, by id', () => {
    expect(meaningMatches([], [{ text: 'qinghe', similarity: 0.7 }], matcher, 0.55).map((m) => m.entityId)).toEqual(['org', 'org2'])
  })

  it('nothing at or above the floor: the name matches alone', () => {
    expect(meaningMatches([], [{ text: '住宿标准', similarity: 0.5499 }], matcher, 0.55)).toEqual([])
  })
})

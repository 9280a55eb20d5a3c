/**
 * Derived Episodes from one document's chunks (docs/derivation.md, "Derived Episodes"): the expected Episodes, Facets,
 * FacetPoints and links are worked out by hand from the rules there.
 */
import { describe, expect, it } from 'vitest'
import type { DerivedEntity } from '../../src/derive/document.js'
import { DEFAULT_EPISODE_OPTIONS, deriveEpisodes, derivedEpisodeIds, type EpisodeChunk } from '../../src/derive/episodes.js'

const chunk = (i: number, text: string, heading_path?: string[], title = '网关手册'): EpisodeChunk =>
  ({ id: `g#${i}`, chunk_index: i, text, title, passage: `passage ${i}`, ...(heading_path ? { heading_path } : {}) })
const entity = (key: string, chunk_ids: string[], mentions: number, description?: string): DerivedEntity =>
  ({ key, name: key, chunk_ids, mentions, ...(description ? { description } : {}) })

describe('deriveEpisodes', () => {
  const chunks = [
    chunk(0, '# 网关手册\n\n网关由平台组负责维护。', ['网关手册']),
    chunk(1, '## 限流\n\n短句。这是一个很普通的句子没有实体。网关对每个租户限流。平台组和网关一起调整限流阈值。', ['网关手册', '限流'])
  ]
  const entities = [entity('网关', ['g#0', 'g#1'], 4, '网关是问诊的入口。'), entity('平台组', ['g#0', 'g#1'], 2), entity('限流阈值', ['g#1'], 1)]

  const linking = { ...DEFAULT_EPISODE_OPTIONS, entitiesPerFacet: 4, entitiesPerEpisode: 8, entityMinMentions: 1 }

  it('gives one Episode per document, a Facet per chunk labelled by its headings, the best key sentences as points', () => {
    const { episodes, entities: linked } = deriveEpisodes('g', chunks, entities, linking)
    expect(episodes).toHaveLength(1)
    const { episode, nodes, edges } = episodes[0]!
    expect(episode).toMatchObject({ id: 'd:ep:g', type: 'Episode', name: '网关手册', derived_doc: 'g' })
    expect(nodes.filter((n) => n.type === 'Facet').map((n) => [n.id, n.search_text, n.anchor_text])).toEqual([
      ['d:ep:g/f1', '网关手册', 'passage 0'],
      ['d:ep:g/f2', '网关手册 > 限流', 'passage 1']
    ])
    // f2: 短句 is under 8 characters; of the rest, 平台组和网关…阈值 names 3 entities, 网关对…限流 1, the plain one 0: the two best, in text order
    expect(nodes.filter((n) => n.type === 'FacetPoint').map((n) => [n.id, n.search_text])).toEqual([
      ['d:ep:g/f1/p1', '网关由平台组负责维护。'],
      ['d:ep:g/f2/p1', '网关对每个租户限流。'],
      ['d:ep:g/f2/p2', '平台组和网关一起调整限流阈值。']
    ])
    // most mentioned first; the Episode's link to 网关 carries the document's definition
    expect(edges.filter((e) => e.from === 'd:ep:g' && e.relationship_name === 'involves_entity').map((e) => [e.to, e.edge_text])).toEqual([
      ['d:网关', '网关 | 网关是问诊的入口。'], ['d:平台组', '平台组'], ['d:限流阈值', '限流阈值']
    ])
    expect(edges.filter((e) => e.from === 'd:ep:g/f1' && e.relationship_name === 'involves_entity').map((e) => e.to)).toEqual(['d:网关', 'd:平台组'])
    expect(linked.map((e) => e.id)).toEqual(['d:平台组', 'd:网关', 'd:限流阈值'])
    expect(episode.summary).toBe('网关手册：【网关手册】网关由平台组负责维护。【限流】网关对每个租户限流。')
    expect(JSON.parse(episode.evidence!)).toEqual([
      { chunk_id: 'g#0', heading_path: ['网关手册'], nodes: ['d:ep:g/f1', 'd:ep:g/f1/p1'] },
      { chunk_id: 'g#1', heading_path: ['网关手册', '限流'], nodes: ['d:ep:g/f2', 'd:ep:g/f2/p1', 'd:ep:g/f2/p2'] }
    ])
  })

  it('links no entity by default; with 4 and 8, only those the document mentions twice or more', () => {
    const { episodes, entities: linked } = deriveEpisodes('g', chunks, entities)
    expect(linked).toEqual([])
    expect(episodes[0]!.edges.filter((e) => e.relationship_name === 'involves_entity')).toEqual([])
    const some = deriveEpisodes('g', chunks, entities, { ...DEFAULT_EPISODE_OPTIONS, entitiesPerFacet: 4, entitiesPerEpisode: 8 })
    expect(some.entities.map((e) => e.id)).toEqual(['d:平台组', 'd:网关'])
    expect(some.episodes[0]!.edges.filter((e) => e.relationship_name === 'involves_entity').map((e) => [e.from, e.to])).toEqual([
      ['d:ep:g/f1', 'd:网关'], ['d:ep:g/f1', 'd:平台组'], ['d:ep:g/f2', 'd:网关'], ['d:ep:g/f2', 'd:平台组'], ['d:ep:g', 'd:网关'], ['d:ep:g', 'd:平台组']
    ])
  })

  it('links only the entities the document mentions at least entityMinMentions times, and keeps its key sentences', () => {
    const all = deriveEpisodes('g', chunks, entities, linking).episodes[0]!
    const { episodes, entities: linked } = deriveEpisodes('g', chunks, entities, { ...linking, entityMinMentions: 2 })
    const { nodes, edges } = episodes[0]!
    // 限流阈值 is mentioned once: neither f2 nor the Episode links it; 网关 (4) and 平台组 (2) stay, most mentioned first
    const links = (from: string) => edges.filter((e) => e.from === from && e.relationship_name === 'involves_entity').map((e) => e.to)
    expect(links('d:ep:g')).toEqual(['d:网关', 'd:平台组'])
    expect(links('d:ep:g/f1')).toEqual(['d:网关', 'd:平台组'])
    expect(links('d:ep:g/f2')).toEqual(['d:网关', 'd:平台组'])
    expect(linked.map((e) => e.id)).toEqual(['d:平台组', 'd:网关'])
    expect(nodes).toEqual(all.nodes)
    expect(deriveEpisodes('g', chunks, entities, { ...linking, entityMinMentions: 5 }).entities).toEqual([])
  })

  it('borrows the chunks\' vectors: each Facet\'s label and anchor and each point its chunk\'s, the summary all of the Episode\'s', () => {
    const { borrowed } = deriveEpisodes('g', chunks, entities)
    expect(borrowed.map((b) => [b.collection, b.id, b.chunk_ids])).toEqual([
      ['Episode_summary', 'd:ep:g', ['g#0', 'g#1']],
      ['Facet_search_text', 'd:ep:g/f1', ['g#0']], ['Facet_anchor_text', 'd:ep:g/f1', ['g#0']], ['FacetPoint_search_text', 'd:ep:g/f1/p1', ['g#0']],
      ['Facet_search_text', 'd:ep:g/f2', ['g#1']], ['Facet_anchor_text', 'd:ep:g/f2', ['g#1']],
      ['FacetPoint_search_text', 'd:ep:g/f2/p1', ['g#1']], ['FacetPoint_search_text', 'd:ep:g/f2/p2', ['g#1']]
    ])
    expect(new Set(borrowed.map((b) => b.episode))).toEqual(new Set(['d:ep:g']))
    // with every text embedded, only the anchors (the chunks' own passages) borrow
    const texts = deriveEpisodes('g', chunks, entities, { ...DEFAULT_EPISODE_OPTIONS, vectors: { labels: 'text', points: 'text', summaries: 'text' } })
    expect(texts.borrowed.map((b) => [b.collection, b.id])).toEqual([['Facet_anchor_text', 'd:ep:g/f1'], ['Facet_anchor_text', 'd:ep:g/f2']])
    // another choice of sources is another stored Episode: it is written again
    expect(texts.episodes[0]!.episode.derived_hash).not.toBe(deriveEpisodes('g', chunks, entities).episodes[0]!.episode.derived_hash)
  })

  it('is deterministic, and its hash follows the content', () => {
    const a = deriveEpisodes('g', chunks, entities, linking)
    expect(deriveEpisodes('g', [...chunks].reverse(), [...entities].reverse(), linking)).toEqual(a)
    const edited = deriveEpisodes('g', [chunks[0]!, chunk(1, '## 限流\n\n网关对每个租户限流，每秒 100 次。', ['网关手册', '限流'])], entities, linking)
    expect(edited.episodes[0]!.episode.derived_hash).not.toBe(a.episodes[0]!.episode.derived_hash)
  })

  it('splits a long document at its top-level sections (under the title every chunk shares)', () => {
    const long = [
      chunk(0, '# 网关手册\n\n导言部分的一句话在这里。', ['网关手册']),
      chunk(1, '## 限流\n\n限流部分的第一句话在这里。', ['网关手册', '限流']),
      chunk(2, '### 阈值\n\n阈值部分的一句话在这里。', ['网关手册', '限流', '阈值']),
      chunk(3, '## 回滚\n\n回滚部分的一句话在这里。', ['网关手册', '回滚'])
    ]
    const { episodes } = deriveEpisodes('g', long, [], { ...DEFAULT_EPISODE_OPTIONS, maxEpisodeChunks: 3 })
    expect(episodes.map((e) => [e.episode.id, e.episode.name, e.nodes.filter((n) => n.type === 'Facet').length])).toEqual([
      ['d:ep:g#1', '网关手册 > 限流', 3], ['d:ep:g#2', '网关手册 > 回滚', 1]
    ])
    expect(derivedEpisodeIds('g', { maxEpisodesPerDocument: 2 })).toEqual(['d:ep:g', 'd:ep:g#1', 'd:ep:g#2'])
    // at the default threshold the same document is one Episode
    expect(deriveEpisodes('g', long, []).episodes.map((e) => e.episode.id)).toEqual(['d:ep:g'])
  })

  it('derives nothing from no chunks', () => {
    expect(deriveEpisodes('g', [], [])).toEqual({ episodes: [], entities: [], borrowed: [] })
  })
})

/**
 * Evidence ordered by support (adapters/graphrag/support.ts): a chunk more of the question's named entities cite comes
 * first in each item's evidence, and a named entity citing such a chunk comes before one that does not. Expected
 * orders and weights are worked out by hand from the graph below.
 */
import { describe, expect, inject, it } from 'vitest'
import { createGraphragAdapter } from '../../../adapters/graphrag/index.js'
import type { GraphCandidate } from '../../../adapters/graphrag/expand.js'
import { chunkSupport } from '../../../adapters/graphrag/support.js'
import { ingestGraph } from '../../helpers/turns.js'
import type { GraphIngestBody } from '../../../src/corpus/graph.js'
import { storeHolding, storeMakers } from './fixture.js'

// s#0 is the one chunk that names both 网关 and 平台组; 回滚 shares no chunk with them.
const GRAPH: GraphIngestBody = {
  entities: [
    { id: 'gw', name: '网关', type: '系统', source_chunk_ids: ['g#0', 'g#1', 's#0'] },
    { id: 'team', name: '平台组', type: '团队', source_chunk_ids: ['t#0', 's#0'] },
    { id: 'rb', name: '回滚', type: '操作', source_chunk_ids: ['r#0'] }
  ],
  relations: []
}
// Named in the order 回滚 (0), 网关 (2), 平台组 (7).
const QUERY = '回滚网关这件事归平台组管吗'

type Item = { id: string; metadata: Record<string, unknown> }
const evidence = (item: Item) => item.metadata['evidence'] as Array<{ chunk_id: string; weight: number }>

for (const maker of storeMakers(inject('neo4jUri'))) {
  describe(`graphrag evidence by support on the ${maker.name} store`, () => {
    const store = storeHolding(maker, GRAPH)

    it('puts first the chunk two named entities cite, and the entities citing it before the one that does not', async () => {
      const { items } = await createGraphragAdapter({ graph: store() }).retrieve({ query: QUERY, top_k: 10 })
      // best support: 网关 2 (s#0), 平台组 2 (s#0), 回滚 1; equal ones keep the question's order
      expect(items.map((i) => [i.id, i.score, i.metadata['rank']])).toEqual([['gw', 1, 1], ['team', 1, 2], ['rb', 1, 3]])
      // weights 1, 1/√2, 1/√3 down each item's list (rounded to 4 places)
      expect(evidence(items[0]!)).toEqual([{ chunk_id: 's#0', weight: 1 }, { chunk_id: 'g#0', weight: 0.7071 }, { chunk_id: 'g#1', weight: 0.5774 }])
      expect(evidence(items[1]!)).toEqual([{ chunk_id: 's#0', weight: 1 }, { chunk_id: 't#0', weight: 0.7071 }])
      expect(evidence(items[2]!)).toEqual([{ chunk_id: 'r#0', weight: 1 }])
    })

    it('a named entity of a type the request leaves out still supports the chunk it cites', async () => {
      const { items } = await createGraphragAdapter({ graph: store() }).retrieve({ query: QUERY, top_k: 10, entity_types: ['系统'] })
      expect(items.map((i) => i.id)).toEqual(['gw'])
      expect(evidence(items[0]!).map((e) => e.chunk_id)).toEqual(['s#0', 'g#0', 'g#1'])
    })

    it('one named entity: its chunks in its own order', async () => {
      const { items } = await createGraphragAdapter({ graph: store() }).retrieve({ query: '网关怎么样', top_k: 10 })
      expect(items.map((i) => i.id)).toEqual(['gw'])
      expect(evidence(items[0]!).map((e) => e.chunk_id)).toEqual(['g#0', 'g#1', 's#0'])
    })
  })
}

function expectSupport(support: ReadonlyMap<string, number>, expected: Record<string, number>) {
  expect([...support.keys()].sort()).toEqual(Object.keys(expected).sort())
  for (const [id, value] of Object.entries(expected)) expect(support.get(id)).toBeCloseTo(value, 5)
}

describe('chunkSupport: a neighbour adds the share of its name the question holds', () => {
  const candidate = (name: string, hop: 0 | 1, chunks: string[], matchedBy: GraphCandidate['matchedBy'] = 'name'): GraphCandidate =>
    ({ entity: { id: name, name, aliases: [], source_chunk_ids: chunks }, score: hop === 0 ? 1 : 0.6, matchedBy, hop, links: [] })

  it('named: its specificity; 访问令牌有效期 3/6 of its own (访问 问令 令牌 of its six bigrams are the question\'s); 平台组 none', () => {
    const support = chunkSupport([
      candidate('令牌', 0, ['k#0', 'k#1', 'k#2']),
      candidate('访问令牌有效期', 1, ['k#2', 'v#0']),
      candidate('平台组', 1, ['k#1'])
    ], '新版鉴权的访问令牌多久过期？')
    // 令牌 cites 3 chunks: 1/(1 + ln 3) = 0.476505; 访问令牌有效期 2: 1/(1 + ln 2) = 0.590616, half of it 0.295308
    expectSupport(support, { 'k#0': 0.476505, 'k#1': 0.476505, 'k#2': 0.771813, 'v#0': 0.295308 })
  })

  it('a relation between two named entities adds the smaller specificity to each chunk stating it', () => {
    const related: GraphCandidate = { ...candidate('鉴权', 0, ['a#0', 'j#0']), links: [
      { id: 'r1', source: '鉴权', target: '网关', type: 'co_occurs', weight: 1, derived_from: [{ doc_id: 'j', chunk_ids: ['j#0'], count: 1 }] },
      { id: 'r2', source: '鉴权', target: '日志', type: 'co_occurs', weight: 1, derived_from: [{ doc_id: 'a', chunk_ids: ['a#0'], count: 1 }] }
    ] }
    // 鉴权 and 网关 cite 2 chunks each (0.590616), 日志 is a neighbour the question does not name: r2 adds nothing
    const support = chunkSupport([related, candidate('网关', 0, ['b#0', 'j#0']), candidate('日志', 1, ['a#0'])], '鉴权和网关什么关系')
    expectSupport(support, { 'a#0': 0.590616, 'b#0': 0.590616, 'j#0': 3 * 0.590616 })
  })

  it('the keyword fallback names nothing: no support', () => {
    expect(chunkSupport([candidate('令牌', 0, ['k#0'], 'keyword')], '令牌').size).toBe(0)
  })
})

describe('graphrag evidence by a neighbour the question half names, on the embedded store', () => {
  it('the chunk the neighbour cites comes first in the named entity\'s evidence', async () => {
    const { store } = await storeMakers(inject('neo4jUri'))[0]!.make()
    await ingestGraph(store, 'default', {
      entities: [
        { id: 'token', name: '令牌', source_chunk_ids: ['k#0', 'k#1', 'k#2'] },
        { id: 'ttl', name: '访问令牌有效期', source_chunk_ids: ['k#2'] },
        { id: 'team', name: '平台组', source_chunk_ids: ['k#1'] }
      ],
      relations: [{ source: 'token', target: 'ttl', type: 'co_occurs' }, { source: 'token', target: 'team', type: 'co_occurs' }]
    })
    const { items } = await createGraphragAdapter({ graph: store }).retrieve({ query: '新版鉴权的访问令牌多久过期？', top_k: 10 })
    expect(items[0]!.id).toBe('token')
    // support k#2 1/(1 + ln 3) + 3/6 = 0.9765, k#0 and k#1 0.4765 (平台组 shares nothing with the question)
    expect(evidence(items[0]!)).toEqual([{ chunk_id: 'k#2', weight: 1 }, { chunk_id: 'k#0', weight: 0.7071 }, { chunk_id: 'k#1', weight: 0.5774 }])
    await store.close()
  })
})

for (const maker of storeMakers(inject('neo4jUri'))) {
  describe(`graphrag neighbour names kept per graph version on the ${maker.name} store`, () => {
    it('a neighbour renamed by a write supports by its new name on the next question', async () => {
      const { store, drop } = await maker.make()
      try {
        await ingestGraph(store, 'default', {
          entities: [
            { id: 'token', name: '令牌', source_chunk_ids: ['k#0', 'k#1', 'k#2'] },
            { id: 'ttl', name: '访问令牌有效期', source_chunk_ids: ['k#2'] }
          ],
          relations: [{ source: 'token', target: 'ttl', type: 'co_occurs' }]
        })
        const adapter = createGraphragAdapter({ graph: store })
        const ask = async () => evidence((await adapter.retrieve({ query: '新版鉴权的访问令牌多久过期？', top_k: 1 })).items[0]!).map((e) => e.chunk_id)
        // 访问令牌有效期 holds 3 of its 6 bigrams of the question: k#2 first
        expect(await ask()).toEqual(['k#2', 'k#0', 'k#1'])
        // renamed to a name sharing nothing with the question: no support, the entity's own order
        await ingestGraph(store, 'default', { entities: [{ id: 'ttl', name: '平台组', source_chunk_ids: ['k#2'] }] })
        expect(await ask()).toEqual(['k#0', 'k#1', 'k#2'])
      } finally {
        await store.close()
        await drop()
      }
    })
  })
}

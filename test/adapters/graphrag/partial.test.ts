/**
 * A question that holds a name only in part (adapters/graphrag/fragments.ts) reaches that entity as a `partial` match,
 * after the entities it names in full, on both graph stores. Expected orders, scores and weights are worked out by hand:
 * a partial match scores 0.6 + 0.4 × share and supports each chunk it cites by its share.
 */
import { describe, expect, inject, it } from 'vitest'
import { createGraphragAdapter, graphragMode } from '../../../adapters/graphrag/index.js'
import type { GraphIngestBody } from '../../../src/corpus/graph.js'
import { storeHolding, storeMakers } from './fixture.js'

// 流式 is cited by s#0 and s#1, 回滚 by r#0 and s#1, 流式返回接口 by s#1 only.
const GRAPH: GraphIngestBody = {
  entities: [
    { id: 'stream', name: '流式', source_chunk_ids: ['s#0', 's#1'] },
    { id: 'api', name: '流式返回接口', source_chunk_ids: ['s#1'] },
    { id: 'rb', name: '回滚', source_chunk_ids: ['r#0', 's#1'] },
    { id: 'doc1', name: '支付接口文档', source_chunk_ids: ['d#1'] },
    { id: 'doc2', name: '支付接口测试', source_chunk_ids: ['d#2'] },
    { id: 'doc3', name: '支付接口规范', source_chunk_ids: ['d#3'] },
    { id: 'doc4', name: '支付接口地址', source_chunk_ids: ['d#4'] }
  ],
  relations: []
}

type Item = { id: string; score: number; metadata: Record<string, unknown> }
const summary = (items: Item[]) => items.map((i) => [i.id, i.score, i.metadata['matched_by'], i.metadata['hop'], i.metadata['rank']])
const evidence = (item: Item | undefined) => item?.metadata['evidence']

for (const maker of storeMakers(inject('neo4jUri'))) {
  describe(`graphrag names held in part on the ${maker.name} store`, () => {
    const store = storeHolding(maker, GRAPH)

    it('a question naming 流式返回 finds 流式 and the longer 流式返回接口 (4 of 6 characters: 0.6 + 0.4 × 2/3)', async () => {
      const { items } = await createGraphragAdapter({ graph: store() }).retrieve({ query: '流式返回出问题怎么回滚？', top_k: 10 })
      // support of s#1: 1 (流式) + 1 (回滚) + 2/3 (流式返回接口); 流式 and 回滚 tie at it and keep the question's order
      expect(summary(items)).toEqual([
        ['stream', 1, 'name', 0, 1],
        ['rb', 1, 'name', 0, 2],
        ['api', 0.8667, 'partial', 0, 3]
      ])
      expect(evidence(items[0])).toEqual([{ chunk_id: 's#1', weight: 1 }, { chunk_id: 's#0', weight: 0.7071 }])
      expect(evidence(items[2])).toEqual([{ chunk_id: 's#1', weight: 0.8667 }])
    })

    it('without fragments (GRAPHRAG_PARTIAL_NAMES=false reaches the mode as graphragPartialNames), 流式 alone', async () => {
      const { items } = await createGraphragAdapter({ graph: store() }, { fragments: false }).retrieve({ query: '流式返回怎么配置', top_k: 10 })
      expect(summary(items)).toEqual([['stream', 1, 'name', 0, 1]])
      const deployment = (partial?: boolean) => ({
        backends: { embedder: '', vectors: '', lexical: '', graph: maker.name, episodes: '' },
        timeouts: { embedding: 1000, vector: 1000, lexical: 1000, graph: 10_000 },
        collectionPrefix: 'recall_',
        ...(partial === undefined ? {} : { graphragPartialNames: partial })
      })
      const off = await graphragMode.create({ graph: store() }, deployment(false)).retrieve({ query: '流式返回怎么配置', top_k: 10 })
      expect(summary(off.items)).toEqual([['stream', 1, 'name', 0, 1]])
      const on = await graphragMode.create({ graph: store() }, deployment()).retrieve({ query: '流式返回怎么配置', top_k: 10 })
      expect(summary(on.items)).toEqual([['stream', 1, 'name', 0, 1], ['api', 0.8667, 'partial', 0, 2]])
    })

    it('a question naming no entity in full is answered by the name it holds in part, weakly', async () => {
      const result = await createGraphragAdapter({ graph: store() }).retrieve({ query: '返回接口的格式', top_k: 10 })
      // 返回接口: 4 of 流式返回接口's 6 characters
      expect(summary(result.items)).toEqual([['api', 0.8667, 'partial', 0, 1]])
      expect(result.match_strength).toBe('weak')
    })

    it('a piece of more than three names points at none: the keyword fallback answers', async () => {
      const { items } = await createGraphragAdapter({ graph: store() }).retrieve({ query: '支付接口在哪', top_k: 10 })
      expect(items.length).toBeGreaterThan(0)
      expect(items.every((i) => i.metadata['matched_by'] === 'keyword')).toBe(true)
    })
  })
}

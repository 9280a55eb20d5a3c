/**
 * Evidence ordered by support (adapters/graphrag/support.ts): a chunk more of the question's named entities cite comes
 * first in each item's evidence, and a named entity citing such a chunk comes before one that does not. Expected
 * orders and weights are worked out by hand from the graph below.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { createGraphragAdapter } from '../../../adapters/graphrag/index.js'
import { ingestGraph } from '../../../src/corpus/graph.js'
import type { GraphIngestBody } from '../../../src/corpus/graph.js'
import type { KnowledgeGraphStore } from '../../../src/providers/knowledge-graph/port.js'
import { storeMakers } from './fixture.js'

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
    let store: KnowledgeGraphStore
    let drop: () => Promise<void>
    beforeAll(async () => {
      ;({ store, drop } = await maker.make())
      await ingestGraph(store, 'default', GRAPH)
    })
    afterAll(async () => {
      await store.close()
      await drop()
    })

    it('puts first the chunk two named entities cite, and the entities citing it before the one that does not', async () => {
      const { items } = await createGraphragAdapter({ graph: store }).retrieve({ query: QUERY, top_k: 10 })
      // best support: 网关 2 (s#0), 平台组 2 (s#0), 回滚 1; equal ones keep the question's order
      expect(items.map((i) => [i.id, i.score, i.metadata['rank']])).toEqual([['gw', 1, 1], ['team', 1, 2], ['rb', 1, 3]])
      // weights 1, 1/√2, 1/√3 down each item's list (rounded to 4 places)
      expect(evidence(items[0]!)).toEqual([{ chunk_id: 's#0', weight: 1 }, { chunk_id: 'g#0', weight: 0.7071 }, { chunk_id: 'g#1', weight: 0.5774 }])
      expect(evidence(items[1]!)).toEqual([{ chunk_id: 's#0', weight: 1 }, { chunk_id: 't#0', weight: 0.7071 }])
      expect(evidence(items[2]!)).toEqual([{ chunk_id: 'r#0', weight: 1 }])
    })

    it('a named entity of a type the request leaves out still supports the chunk it cites', async () => {
      const { items } = await createGraphragAdapter({ graph: store }).retrieve({ query: QUERY, top_k: 10, entity_types: ['系统'] })
      expect(items.map((i) => i.id)).toEqual(['gw'])
      expect(evidence(items[0]!).map((e) => e.chunk_id)).toEqual(['s#0', 'g#0', 'g#1'])
    })

    it('one named entity: its chunks in its own order', async () => {
      const { items } = await createGraphragAdapter({ graph: store }).retrieve({ query: '网关怎么样', top_k: 10 })
      expect(items.map((i) => i.id)).toEqual(['gw'])
      expect(evidence(items[0]!).map((e) => e.chunk_id)).toEqual(['g#0', 'g#1', 's#0'])
    })
  })
}

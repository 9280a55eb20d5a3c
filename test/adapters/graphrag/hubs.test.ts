/**
 * A question naming two hubs and one specific entity (adapters/graphrag/support.ts, specificity): the hubs cite seven
 * chunks each and meet in one; the specific entity cites one chunk of its own. Counting each named entity 1, the hubs'
 * meeting chunk (2) beat the specific entity's (1) and the hubs came first; weighted 1 / (1 + ln n), the specific
 * entity's chunk (1) beats the meeting (2 × 0.339454 = 0.678908). Expected orders and weights worked out by hand.
 */
import { describe, expect, inject, it } from 'vitest'
import { createGraphragAdapter } from '../../../adapters/graphrag/index.js'
import type { GraphIngestBody } from '../../../src/corpus/graph.js'
import type { KnowledgeGraphStore } from '../../../src/providers/knowledge-graph/port.js'
import { storeHolding, storeMakers } from './fixture.js'

const GRAPH: GraphIngestBody = {
  entities: [
    { id: 'cmp', name: '组件', source_chunk_ids: ['h#0', 'h#1', 'h#2', 'h#3', 'h#4', 'h#5', 'h#6'] },
    { id: 'props', name: 'props', source_chunk_ids: ['h#0', 'p#1', 'p#2', 'p#3', 'p#4', 'p#5', 'p#6'] },
    { id: 'vm', name: 'v-model', source_chunk_ids: ['m#0'] }
  ],
  relations: []
}
// Named in the order 组件, props, v-model.
const QUERY = '组件的 props 和 v-model 有什么区别？'

type Item = { id: string; metadata: Record<string, unknown> }
const evidence = (item: Item) => item.metadata['evidence'] as Array<{ chunk_id: string; weight: number }>

for (const maker of storeMakers(inject('neo4jUri'))) {
  describe(`graphrag with named hubs on the ${maker.name} store`, () => {
    const store = storeHolding(maker, GRAPH)

    it('the specific entity first; the hubs after it in the question\'s order, each with the chunk where they meet first', async () => {
      const { items } = await createGraphragAdapter({ graph: store() }).retrieve({ query: QUERY, top_k: 10 })
      // best support: v-model 1 (m#0), 组件 and props 0.678908 (h#0), equal ones in the question's order
      expect(items.map((i) => [i.id, i.score, i.metadata['rank']])).toEqual([['vm', 1, 1], ['cmp', 1, 2], ['props', 1, 3]])
      expect(evidence(items[0]!)).toEqual([{ chunk_id: 'm#0', weight: 1 }])
      // h#0 (0.678908), then four of the six chunks of support 0.339454 in the entity's own order; weights 1/√n
      expect(evidence(items[1]!)).toEqual([
        { chunk_id: 'h#0', weight: 1 }, { chunk_id: 'h#1', weight: 0.7071 }, { chunk_id: 'h#2', weight: 0.5774 },
        { chunk_id: 'h#3', weight: 0.5 }, { chunk_id: 'h#4', weight: 0.4472 }
      ])
      expect(evidence(items[2]!).map((e) => e.chunk_id)).toEqual(['h#0', 'p#1', 'p#2', 'p#3', 'p#4'])
    })

    it('the graph leg\'s reach keeps the same order', async () => {
      const { entities } = await createGraphragAdapter({ graph: store() }).reach({ query: QUERY, namespace: 'default', maxEntities: 50, maxEvidence: 5 }, new AbortController().signal)
      expect(entities.map((e) => [e.id, e.evidence[0]!.chunk_id])).toEqual([['vm', 'm#0'], ['cmp', 'h#0'], ['props', 'h#0']])
    })
  })
}

/**
 * A hub with 70 neighbours, one of them joined to the other named entity too: the graph leg's store cuts each named
 * entity's neighbours to 50 (KgNeighbourhoodOptions) and reaches exactly what reading the whole neighbourhood and
 * cutting after (expandMatches) reached.
 */
const HUB: GraphIngestBody = {
  entities: [
    { id: 'cmp', name: '组件', source_chunk_ids: ['c#0'] },
    { id: 'slot', name: '插槽', source_chunk_ids: ['s#0'] },
    ...Array.from({ length: 70 }, (_, i) => ({ id: `n${String(i).padStart(2, '0')}`, name: `选项${i}`, source_chunk_ids: [`n#${i}`, 'c#0'] }))
  ],
  relations: [
    ...Array.from({ length: 70 }, (_, i) => ({ id: `r${i}`, source: 'cmp', target: `n${String(i).padStart(2, '0')}`, type: '包含', weight: (i % 7) + 1 })),
    { id: 'rs', source: 'slot', target: 'n69', type: '用于', weight: 1 }
  ]
}

for (const maker of storeMakers(inject('neo4jUri'))) {
  describe(`the graph leg over a hub of 70 neighbours on the ${maker.name} store`, () => {
    const store = storeHolding(maker, HUB)
    const reachOf = (graph: KnowledgeGraphStore) => createGraphragAdapter({ graph })
      .reach({ query: '组件的插槽怎么写', namespace: 'default', maxEntities: 50, maxEvidence: 5 }, new AbortController().signal)

    it('reaches the same entities, in the same order and weights, as the whole neighbourhood read and cut after', async () => {
      const read: number[] = []
      // the store as before: every neighbour read, whatever the leg asks for
      const whole = new Proxy(store(), {
        get: (target, key) => key === 'neighbourhood'
          ? (ns: string, ids: readonly string[], signal?: AbortSignal) => target.neighbourhood(ns, ids, signal)
          : (Reflect.get(target, key) as (...a: unknown[]) => unknown).bind(target)
      })
      const counting = new Proxy(store(), {
        get: (target, key) => key === 'neighbourhood'
          ? async (...args: Parameters<KnowledgeGraphStore['neighbourhood']>) => {
            const hood = await target.neighbourhood(...args)
            read.push(hood.entities.length)
            return hood
          }
          : (Reflect.get(target, key) as (...a: unknown[]) => unknown).bind(target)
      })
      const before = await reachOf(whole)
      const after = await reachOf(counting)
      expect(after).toEqual(before)
      // 2 named + 50 of the hub's (n69, joined to both, among them)
      expect(read).toEqual([52])
      expect(after.entities.some((e) => e.id === 'n69')).toBe(true)
    })
  })
}

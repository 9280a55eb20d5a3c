import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { createGraphragAdapter } from '../../../adapters/graphrag/index.js'
import { ingestGraph } from '../../helpers/turns.js'
import type { KnowledgeGraphStore } from '../../../src/providers/knowledge-graph/port.js'
import { UNIVERSITIES, storeHolding, storeMakers } from './fixture.js'

const summary = (items: Array<{ id: string; score: number; metadata: Record<string, unknown> }>) =>
  items.map((i) => [i.id, i.score, i.metadata['matched_by'], i.metadata['hop'], i.metadata['rank']])
const relationIds = (item: { metadata: Record<string, unknown> } | undefined) =>
  (item?.metadata['relations'] as Array<{ type: string; source: string; target: string }>).map((r) => `${r.source}>${r.target}`)

for (const maker of storeMakers(inject('neo4jUri'))) {
  describe(`graphrag adapter on the ${maker.name} store`, () => {
    const store = storeHolding(maker, UNIVERSITIES)

    it('answers named entities first, then one-hop neighbours, with relations to named entities first', async () => {
      const adapter = createGraphragAdapter({ graph: store() })
      // 北大 (pku, alias) at 0 and 清华 (thu, alias) at 3; neighbours hd (linked to both) before bj (to pku only).
      const { items, legs } = await adapter.retrieve({ query: '北大和清华哪个好', top_k: 10 })
      expect(summary(items)).toEqual([
        ['pku', 1, 'alias', 0, 1],
        ['thu', 1, 'alias', 0, 2],
        ['hd', 0.6, 'alias', 1, 3],
        ['bj', 0.6, 'alias', 1, 4]
      ])
      // pku: r4 to thu (named) first, then r1 (weight 1), then r2 (0.8).
      expect(relationIds(items[0])).toEqual(['pku>thu', 'pku>bj', 'pku>hd'])
      expect(relationIds(items[1])).toEqual(['pku>thu', 'thu>hd'])
      // hd's links r2 and r3 weigh 0.8 each: id order.
      expect(relationIds(items[2])).toEqual(['pku>hd', 'thu>hd'])
      expect(relationIds(items[3])).toEqual(['pku>bj'])
      expect(legs).toEqual([{ name: 'graph', status: 'ok', took_ms: expect.any(Number), hits: 4 }])
    })

    it('renders the entity line then relation lines, and the metadata docs/api.md lists for graphrag', async () => {
      const adapter = createGraphragAdapter({ graph: store() })
      const { items } = await adapter.retrieve({ query: '北大和清华哪个好', top_k: 1 })
      expect(items).toEqual([
        {
          id: 'pku',
          text: [
            '北京大学 [organization] (aliases: 北大): 位于北京的综合性大学',
            '北京大学 -[rival_of]-> 清华大学: 竞争',
            '北京大学 -[located_in]-> 北京: 校址',
            '北京大学 -[located_in]-> 海淀区'
          ].join('\n'),
          score: 1,
          source: 'docs/pku.md',
          mode: 'graphrag',
          metadata: {
            rank: 1,
            score_kind: 'graph_match',
            entity_id: 'pku',
            entity_name: '北京大学',
            matched_by: 'alias',
            hop: 0,
            relations: [
              { type: 'rival_of', source: 'pku', target: 'thu', description: '竞争' },
              { type: 'located_in', source: 'pku', target: 'bj', description: '校址' },
              { type: 'located_in', source: 'pku', target: 'hd', description: null }
            ],
            source_chunk_ids: ['pku#0', 'pku#3'],
            derived: false,
            // a named entity weighs 1.0; its second chunk 1/√2
            evidence: [{ chunk_id: 'pku#0', weight: 1 }, { chunk_id: 'pku#3', weight: 0.7071 }]
          }
        }
      ])
    })

    it('the longest name wins where names overlap, and top_k cuts after ordering', async () => {
      const adapter = createGraphragAdapter({ graph: store() })
      // 北京大学 at 0 covers 北京 there; 北京 again at 5. Neighbours: hd (linked to pku and bj) then thu.
      const { items, legs } = await adapter.retrieve({ query: '北京大学在北京吗', top_k: 10 })
      expect(summary(items)).toEqual([
        ['pku', 1, 'name', 0, 1],
        ['bj', 1, 'name', 0, 2],
        ['hd', 0.6, 'name', 1, 3],
        ['thu', 0.6, 'name', 1, 4]
      ])
      expect(relationIds(items[1])).toEqual(['pku>bj', 'hd>bj'])
      const cut = await adapter.retrieve({ query: '北京大学在北京吗', top_k: 2 })
      expect(cut.items.map((i) => i.id)).toEqual(['pku', 'bj'])
      expect(cut.legs[0]?.hits).toBe(4)
      const few = await adapter.retrieve({ query: '北京大学在北京吗', top_k: 1, max_relations: 1 })
      expect(relationIds(few.items[0])).toEqual(['pku>bj'])
    })

    it('falls back to keywords over names and descriptions, below any name score, ties by id', async () => {
      const adapter = createGraphragAdapter({ graph: store() })
      // analyze('复旦在哪里') = 复旦 旦在 在哪 哪里: only 复旦大学's name has 复旦 (2 of 8): 0.45 × 2 / 8.
      const one = await adapter.retrieve({ query: '复旦在哪里', top_k: 10 })
      expect(summary(one.items)).toEqual([['fd', 0.1125, 'keyword', 0, 1]])
      expect(one.items[0]?.text).toBe('复旦大学: 位于上海的大学\n复旦大学 -[located_in]-> 上海')
      // 位于 is in three descriptions (1 of 2 × 3 tokens each): 0.45 × 1 / 6 = 0.075, in id order.
      const tied = await adapter.retrieve({ query: '位于何处', top_k: 10 })
      expect(summary(tied.items)).toEqual([
        ['fd', 0.075, 'keyword', 0, 1],
        ['pku', 0.075, 'keyword', 0, 2],
        ['thu', 0.075, 'keyword', 0, 3]
      ])
      const none = await adapter.retrieve({ query: 'zzz 无关', top_k: 10 })
      expect(none).toEqual({ items: [], legs: [{ name: 'graph', status: 'ok', took_ms: expect.any(Number), hits: 0 }], match_strength: 'none' })
    })

    it('gives the same answer to the same request, every time', async () => {
      const adapter = createGraphragAdapter({ graph: store() })
      const first = await adapter.retrieve({ query: '北京大学在北京吗，清华呢', top_k: 10 })
      for (let i = 0; i < 3; i++) {
        const again = await createGraphragAdapter({ graph: store() }).retrieve({ query: '北京大学在北京吗，清华呢', top_k: 10 })
        expect(again.items).toEqual(first.items)
      }
    })

    it('takes hostile strings in the question as data', async () => {
      const adapter = createGraphragAdapter({ graph: store() })
      const before = await store().count('default')
      for (const query of [
        `"}) MATCH (n) DETACH DELETE n //`,
        "北大' OR 1=1 --",
        '\\" } ] ) CALL db.clearQueryCaches()',
        '{entities: []} AND OR NOT * ? ~ : 北京大学',
        'CREATE (x:KgEntity {id: "evil"}) RETURN x'
      ]) {
        const result = await adapter.retrieve({ query, top_k: 5 })
        expect(result.legs[0]?.status).toBe('ok')
      }
      expect(await store().count('default')).toEqual(before)
      expect(await store().getEntities('default', ['evil'])).toEqual([])
      const named = await adapter.retrieve({ query: '{entities: []} AND OR NOT * ? ~ : 北京大学', top_k: 1 })
      expect(named.items.map((i) => i.id)).toEqual(['pku'])
    })
  })

  describe(`graphrag adapter on an empty or changing ${maker.name} store`, () => {
    let store: KnowledgeGraphStore
    let drop: () => Promise<void>
    beforeAll(async () => {
      ;({ store, drop } = await maker.make())
    })
    afterAll(async () => {
      await store.close()
      await drop()
    })

    it('an empty graph gives an empty bundle with the leg skipped and saying why', async () => {
      const adapter = createGraphragAdapter({ graph: store })
      expect(await adapter.retrieve({ query: '北京大学', top_k: 10 })).toEqual({
        items: [],
        legs: [{ name: 'graph', status: 'skipped', took_ms: expect.any(Number), hits: 0, reason: 'the knowledge graph of namespace "default" is empty' }],
        match_strength: 'none'
      })
    })

    it('rebuilds the name matcher when the graph changes, and takes hostile names as data', async () => {
      const adapter = createGraphragAdapter({ graph: store })
      const hostile = `Bobby"}) DETACH DELETE n; //\\`
      await ingestGraph(store, 'default', { entities: [{ id: 'x', name: '甲公司' }] })
      expect((await adapter.retrieve({ query: '甲公司和乙公司', top_k: 10 })).items.map((i) => i.id)).toEqual(['x'])
      await ingestGraph(store, 'default', {
        entities: [{ id: 'y', name: '乙公司' }, { id: 'h', name: hostile, aliases: ['{$x}'] }],
        relations: [{ source: 'y', target: 'h', type: `owns"}]->()` }]
      })
      expect((await adapter.retrieve({ query: '甲公司和乙公司', top_k: 10 })).items.map((i) => [i.id, i.metadata['hop']])).toEqual([
        ['x', 0],
        ['y', 0],
        ['h', 1]
      ])
      const viaAlias = await adapter.retrieve({ query: `who is {$x}?`, top_k: 10 })
      expect(viaAlias.items.map((i) => [i.id, i.metadata['matched_by']])).toEqual([['h', 'alias'], ['y', 'alias']])
      expect(viaAlias.items[1]?.text).toBe(`乙公司\n乙公司 -[owns"}]->()]-> ${hostile}`)
      expect((await adapter.retrieve({ query: `${hostile.toLowerCase()} 是谁`, top_k: 10 })).items[0]?.id).toBe('h')
      expect(await store.deleteEntity('default', 'x')).toBe(true)
      expect((await adapter.retrieve({ query: '甲公司和乙公司', top_k: 10 })).items.map((i) => i.id)).toEqual(['y', 'h'])
      expect(await store.count('default')).toEqual({ entities: 2, relations: 1 })
    })
  })
}

/**
 * graphrag's last fallback on a derived graph (`passages.ts`): the derived entities citing the chunks that best match
 * the question lexically, when no name, part of a name or keyword reaches an entity. Over both stores and a real
 * embedded BM25 index; the expected items are worked out by hand below.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { createGraphragAdapter, graphragMode, passagesOf } from '../../../adapters/graphrag/index.js'
import type { KgContribution, KnowledgeGraphStore } from '../../../src/providers/knowledge-graph/port.js'
import { EmbeddedLexicalIndex } from '../../../src/providers/lexical-index/embedded.js'
import { storeMakers } from './fixture.js'

// Three chunks of two documents; the analyzer's bigrams of the question `生意兴隆的是哪家店` (生意 意兴 兴隆 隆的 的是 是哪
// 哪家 家店) meet those of doc1#0 only (生意 意兴 兴隆), and no entity's name (each a single bigram) is among them.
const CHUNKS = [
  { id: 'doc1#0', text: '张三在杭州开设了一家茶馆，生意兴隆。' },
  { id: 'doc1#1', text: '李四喜欢爬山。' },
  { id: 'doc2#0', text: '王五在杭州读书。' }
]
const DOC1: KgContribution = {
  entities: [
    { key: '张三', name: '张三', type: 'person', chunk_ids: ['doc1#0'], mentions: 2 },
    { key: '杭州', name: '杭州', type: 'place', chunk_ids: ['doc1#0'], mentions: 1 },
    { key: '茶馆', name: '茶馆', chunk_ids: ['doc1#0'], mentions: 1 },
    { key: '李四', name: '李四', type: 'person', chunk_ids: ['doc1#1'], mentions: 1 }
  ],
  relations: [{ source: '张三', target: '茶馆', type: '开设', chunk_ids: ['doc1#0'], count: 1 }]
}
const DOC2: KgContribution = {
  entities: [
    { key: '王五', name: '王五', type: 'person', chunk_ids: ['doc2#0'], mentions: 1 },
    { key: '杭州', name: '杭州', type: 'place', chunk_ids: ['doc2#0'], mentions: 1 }
  ],
  relations: []
}
const ASKED = '生意兴隆的是哪家店'

const summary = (items: Array<{ id: string; score: number; metadata: Record<string, unknown> }>) =>
  items.map((i) => [i.id, i.score, i.metadata['matched_by'], i.metadata['hop'], i.metadata['evidence']])

const dirs: string[] = []
let lexical: EmbeddedLexicalIndex
beforeAll(async () => {
  const dir = await mkdtemp(join(tmpdir(), 'recall-graphrag-passages-'))
  dirs.push(dir)
  lexical = new EmbeddedLexicalIndex({ dir })
  await lexical.write({ upsert: CHUNKS })
})
afterAll(async () => {
  await lexical.close()
  for (const d of dirs) await rm(d, { recursive: true, force: true })
})

for (const maker of storeMakers(inject('neo4jUri'))) {
  describe(`graphrag's passage fallback on the ${maker.name} store`, () => {
    let made: { store: KnowledgeGraphStore; drop(): Promise<void> } | undefined
    beforeAll(async () => {
      made = await maker.make()
      await made.store.replaceDerived('default', new Map([['doc1', DOC1], ['doc2', DOC2]]))
    })
    afterAll(async () => {
      await made?.store.close()
      await made?.drop()
    })
    const store = () => made!.store
    const passages = passagesOf(() => ({ lexical }))

    it('answers a question naming nothing with the derived entities citing the best-matching chunk, matched_by evidence', async () => {
      const adapter = createGraphragAdapter({ graph: store(), passages })
      const { items, legs, match_strength } = await adapter.retrieve({ query: ASKED, top_k: 10 })
      // Only doc1#0 matches, so each entity citing it scores 0.3 × 1. Ties: hit chunks cited (1 each), then mentions in
      // doc1 (张三 2, 杭州 1, 茶馆 1), then id (杭 U+676D before 茶 U+8336). 杭州 also cites doc2#0, after the matched chunk:
      // weights 0.3 and 0.3/√2. 李四 (doc1#1) and 王五 (doc2#0) cite no matched chunk.
      expect(summary(items)).toEqual([
        ['d:张三', 0.3, 'evidence', 0, [{ chunk_id: 'doc1#0', weight: 0.3 }]],
        ['d:杭州', 0.3, 'evidence', 0, [{ chunk_id: 'doc1#0', weight: 0.3 }, { chunk_id: 'doc2#0', weight: 0.2121 }]],
        ['d:茶馆', 0.3, 'evidence', 0, [{ chunk_id: 'doc1#0', weight: 0.3 }]]
      ])
      // relations stay those of the entity: 张三 -[开设]-> 茶馆
      expect(items[0]!.text).toBe('张三 [person]\n张三 -[开设]-> 茶馆')
      expect(items.every((i) => i.metadata.derived)).toBe(true)
      expect(match_strength).toBe('weak')
      expect(legs).toEqual([{ name: 'graph', status: 'ok', took_ms: expect.any(Number), hits: 3 }])
    })

    it('keeps top_k and the request\'s entity types', async () => {
      const adapter = createGraphragAdapter({ graph: store(), passages })
      expect((await adapter.retrieve({ query: ASKED, top_k: 2 })).items.map((i) => i.id)).toEqual(['d:张三', 'd:杭州'])
      expect((await adapter.retrieve({ query: ASKED, top_k: 10, entity_types: ['place'] })).items.map((i) => i.id)).toEqual(['d:杭州'])
    })

    it('changes nothing where a name matches, and answers nothing when no chunk matches or the fallback is off', async () => {
      const withPassages = createGraphragAdapter({ graph: store(), passages })
      const without = createGraphragAdapter({ graph: store() })
      const named = await withPassages.retrieve({ query: '杭州生意兴隆吗', top_k: 10 })
      expect(named.items.map((i) => i.metadata.matched_by)).not.toContain('evidence')
      expect(named.items).toEqual((await without.retrieve({ query: '杭州生意兴隆吗', top_k: 10 })).items)
      // 天气 晴朗: in no chunk
      expect((await withPassages.retrieve({ query: '天气晴朗', top_k: 10 })).items).toEqual([])
      expect((await without.retrieve({ query: ASKED, top_k: 10 })).items).toEqual([])
      const off = createGraphragAdapter({ graph: store(), passages }, { passages: false })
      expect((await off.retrieve({ query: ASKED, top_k: 10 })).items).toEqual([])
    })

    it('answers empty, not an error, when the lexical index fails', async () => {
      const failing = createGraphragAdapter({ graph: store(), passages: async () => { throw new Error('lexical index down') } })
      const { items, legs } = await failing.retrieve({ query: ASKED, top_k: 10 })
      expect(items).toEqual([])
      expect(legs).toEqual([{ name: 'graph', status: 'ok', took_ms: expect.any(Number), hits: 0 }])
    })

    it('does not run over an imported graph; with structures both it reads the derived entities no imported name takes', async () => {
      // namespace `mixed`: doc1's derived part, and an imported 张三 (so the derived d:张三 is joined to it under `both`)
      await store().replaceDerived('mixed', new Map([['doc1', DOC1]]))
      await store().upsert('mixed', { entities: [{ id: 'zs', name: '张三', aliases: [], source_chunk_ids: ['doc1#0'] }] })
      const adapter = createGraphragAdapter({ graph: store(), passages })
      // absent structures: the imported entities, where there is any; the fallback reads the derived graph only
      expect((await adapter.retrieve({ query: ASKED, top_k: 10, namespace: 'mixed' })).items).toEqual([])
      expect((await adapter.retrieve({ query: ASKED, top_k: 10, namespace: 'mixed', structures: 'imported' })).items).toEqual([])
      // both: d:张三 is the imported 张三's (joined), so 杭州 and 茶馆 (one mention each in doc1, by id)
      expect((await adapter.retrieve({ query: ASKED, top_k: 10, namespace: 'mixed', structures: 'both' })).items.map((i) => [i.id, i.score]))
        .toEqual([['d:杭州', 0.3], ['d:茶馆', 0.3]])
      expect((await adapter.retrieve({ query: ASKED, top_k: 10, namespace: 'mixed', structures: 'derived' })).items.map((i) => i.id))
        .toEqual(['d:张三', 'd:杭州', 'd:茶馆'])
    })

    it('reads the namespace\'s lexical index through the mode\'s corpus port; GRAPHRAG_EVIDENCE_FALLBACK=false turns it off', async () => {
      const deployment = {
        backends: { embedder: 'e', vectors: 'v', lexical: 'l', graph: 'g', episodes: 'p' },
        timeouts: { embedding: 1000, vector: 1000, lexical: 1000, graph: 60_000 }, collectionPrefix: ''
      }
      const corpus = (namespace: string) => (namespace === 'default' ? { lexical } : undefined)
      const on = graphragMode.create({ graph: store(), corpus }, deployment)
      expect((await on.retrieve({ query: ASKED, top_k: 1 })).items.map((i) => [i.id, i.metadata.matched_by])).toEqual([['d:张三', 'evidence']])
      const off = graphragMode.create({ graph: store(), corpus }, { ...deployment, graphragEvidenceFallback: false })
      expect((await off.retrieve({ query: ASKED, top_k: 1 })).items).toEqual([])
    })
  })
}

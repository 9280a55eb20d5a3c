/**
 * The conformance suite of `KnowledgeGraphStore`: one `it` per promise of its TSDoc, run against every
 * implementation. `make` returns a fresh, empty store (its own namespace or directory) for each test.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  UnknownEntitiesError,
  type KgEntity,
  type KgRelation,
  type KnowledgeGraphStore
} from '../../src/providers/knowledge-graph/port.js'

export interface ContractSubject {
  store: KnowledgeGraphStore
  /** A second store object over the same data (reopened from disk, or a new driver), when the backend has one. */
  reopen?: () => Promise<KnowledgeGraphStore>
  cleanup?: () => Promise<void>
}

const entity = (id: string, name: string, extra: Partial<KgEntity> = {}): KgEntity => ({
  id,
  name,
  aliases: [],
  source_chunk_ids: [],
  ...extra
})
const relation = (id: string, source: string, target: string, type: string, extra: Partial<KgRelation> = {}): KgRelation => ({
  id,
  source,
  target,
  type,
  weight: 1,
  ...extra
})

export function describeKnowledgeGraphStoreContract(name: string, make: () => Promise<ContractSubject>): void {
  describe(`KnowledgeGraphStore contract: ${name}`, () => {
    let subject: ContractSubject
    let store: KnowledgeGraphStore

    beforeEach(async () => {
      subject = await make()
      store = subject.store
    })
    afterEach(async () => {
      await store.close()
      await subject.cleanup?.()
    })

    it('init is idempotent and an empty graph reports nothing', async () => {
      await store.init()
      await store.init()
      expect(await store.count()).toEqual({ entities: 0, relations: 0 })
      expect(await store.names()).toEqual([])
      expect(await store.neighbourhood(['x'])).toEqual({ entities: [], relations: [] })
      expect(await store.searchKeywords(['北京'], 10)).toEqual([])
    })

    it('upsert stores entities and relations with every field, and getEntities returns them in id order', async () => {
      const full = entity('b', '北京大学', {
        aliases: ['北大', 'PKU'],
        type: 'organization',
        description: '位于北京的大学',
        source: 'docs/pku.md',
        source_chunk_ids: ['pku#0', 'pku#2']
      })
      await store.upsert({
        entities: [full, entity('a', '北京')],
        relations: [relation('r1', 'b', 'a', 'located_in', { description: '校址', weight: 0.5 })]
      })
      expect(await store.getEntities(['b', 'a', 'zz'])).toEqual([entity('a', '北京'), full])
      expect(await store.count()).toEqual({ entities: 2, relations: 1 })
      const hood = await store.neighbourhood(['a'])
      expect(hood.relations).toEqual([relation('r1', 'b', 'a', 'located_in', { description: '校址', weight: 0.5 })])
    })

    it('re-upserting an id replaces the entity (absent fields removed) and keeps its relations', async () => {
      await store.upsert({
        entities: [entity('a', 'Alpha', { description: 'old', aliases: ['A1'] }), entity('b', 'Beta')],
        relations: [relation('r1', 'a', 'b', 'knows')]
      })
      await store.upsert({ entities: [entity('a', 'Alpha 2')] })
      expect(await store.getEntities(['a'])).toEqual([entity('a', 'Alpha 2')])
      expect((await store.neighbourhood(['a'])).relations.map((r) => r.id)).toEqual(['r1'])
      expect(await store.count()).toEqual({ entities: 2, relations: 1 })
    })

    it('re-upserting a relation id replaces it, endpoints included', async () => {
      await store.upsert({
        entities: [entity('a', 'A'), entity('b', 'B'), entity('c', 'C')],
        relations: [relation('r1', 'a', 'b', 'knows', { weight: 0.2 })]
      })
      await store.upsert({ relations: [relation('r1', 'a', 'c', 'likes', { weight: 0.9 })] })
      expect(await store.count()).toEqual({ entities: 3, relations: 1 })
      expect((await store.neighbourhood(['b'])).relations).toEqual([])
      expect((await store.neighbourhood(['c'])).relations).toEqual([relation('r1', 'a', 'c', 'likes', { weight: 0.9 })])
    })

    it('a relation to an unknown entity throws UnknownEntitiesError listing the ids, and nothing is written', async () => {
      await store.upsert({ entities: [entity('a', 'A')] })
      const before = await store.version()
      const write = {
        entities: [entity('n', 'New')],
        relations: [
          relation('r1', 'a', 'n', 'ok'),
          relation('r2', 'a', 'ghost', 'bad'),
          relation('r3', 'phantom', 'ghost', 'bad')
        ]
      }
      const error = await store.upsert(write).then(() => null, (e: unknown) => e)
      expect(error).toBeInstanceOf(UnknownEntitiesError)
      expect((error as UnknownEntitiesError).missing).toEqual(['ghost', 'phantom'])
      expect((error as UnknownEntitiesError).references).toEqual([
        { index: 1, field: 'target', id: 'ghost' },
        { index: 2, field: 'source', id: 'phantom' },
        { index: 2, field: 'target', id: 'ghost' }
      ])
      expect(await store.count()).toEqual({ entities: 1, relations: 0 })
      expect(await store.version()).toBe(before)
    })

    it('deleteEntity removes the entity and its relations and answers true; an unknown id answers false', async () => {
      await store.upsert({
        entities: [entity('a', 'A'), entity('b', 'B'), entity('c', 'C')],
        relations: [relation('r1', 'a', 'b', 'x'), relation('r2', 'c', 'a', 'y'), relation('r3', 'b', 'c', 'z')]
      })
      const before = await store.version()
      expect(await store.deleteEntity('nope')).toBe(false)
      expect(await store.version()).toBe(before)
      expect(await store.deleteEntity('a')).toBe(true)
      expect(await store.version()).not.toBe(before)
      expect(await store.count()).toEqual({ entities: 2, relations: 1 })
      expect(await store.getEntities(['a'])).toEqual([])
      expect((await store.neighbourhood(['b'])).relations.map((r) => r.id)).toEqual(['r3'])
    })

    it('version changes on every write and stays put without one', async () => {
      const v0 = await store.version()
      expect(await store.version()).toBe(v0)
      await store.upsert({ entities: [entity('a', 'A')] })
      const v1 = await store.version()
      expect(v1).not.toBe(v0)
      await store.upsert({ entities: [entity('a', 'A')] })
      const v2 = await store.version()
      expect(v2).not.toBe(v1)
      await store.getEntities(['a'])
      await store.names()
      expect(await store.version()).toBe(v2)
    })

    it('names lists every id, name and aliases in id order', async () => {
      await store.upsert({
        entities: [entity('b2', '北京大学', { aliases: ['北大'] }), entity('a1', 'Alpha'), entity('B1', 'Zed', { aliases: ['z', 'zz'] })]
      })
      // UTF-16 order: 'B' (0x42) sorts before 'a' (0x61).
      expect(await store.names()).toEqual([
        { id: 'B1', name: 'Zed', aliases: ['z', 'zz'] },
        { id: 'a1', name: 'Alpha', aliases: [] },
        { id: 'b2', name: '北京大学', aliases: ['北大'] }
      ])
    })

    it('neighbourhood gives the entities, every touching relation and the entities one hop away, each once', async () => {
      await store.upsert({
        entities: ['a', 'b', 'c', 'd', 'e'].map((id) => entity(id, id.toUpperCase())),
        relations: [
          relation('r1', 'a', 'b', 'x'),
          relation('r2', 'c', 'a', 'y'),
          relation('r3', 'b', 'c', 'z'),
          relation('r4', 'c', 'd', 'w'),
          relation('r5', 'a', 'a', 'self')
        ]
      })
      const hood = await store.neighbourhood(['a', 'b', 'a', 'unknown'])
      expect(hood.entities.map((e) => e.id)).toEqual(['a', 'b', 'c'])
      expect(hood.relations.map((r) => r.id)).toEqual(['r1', 'r2', 'r3', 'r5'])
      expect(hood.relations.find((r) => r.id === 'r2')).toMatchObject({ source: 'c', target: 'a' })
      expect(await store.neighbourhood([])).toEqual({ entities: [], relations: [] })
    })

    it('searchKeywords scores 2 per name token and 1 per other description token, ties by id, at most limit', async () => {
      await store.upsert({
        entities: [
          // analyze('北京大学') = 北京 京大 大学; analyze('位于北京') = 位于 于北 北京
          entity('u', '北京大学', { description: '一所大学' }),
          entity('c', '北京', { description: '首都' }),
          entity('t', '清华', { description: '位于北京的大学' }),
          entity('s', '上海', { description: '城市' }),
          entity('k', 'Kafka Streams', { description: 'stream processing with kafka' })
        ]
      })
      // Query tokens 北京, 大学: u has both in its name (4); t has both in its description only (2);
      // c has 北京 in its name (2); s has neither.
      expect((await store.searchKeywords(['北京', '大学', '北京'], 10)).map((h) => [h.entity.id, h.score])).toEqual([
        ['u', 4],
        ['c', 2],
        ['t', 2]
      ])
      expect((await store.searchKeywords(['北京', '大学'], 2)).map((h) => h.entity.id)).toEqual(['u', 'c'])
      // Name token counts 2 even when the description has it too; the description adds 1 only for others.
      expect((await store.searchKeywords(['kafka', 'processing'], 10)).map((h) => [h.entity.id, h.score])).toEqual([['k', 3]])
      expect((await store.searchKeywords(['k', 'streamz'], 10))).toEqual([])
      expect(await store.searchKeywords([], 10)).toEqual([])
      const hit = (await store.searchKeywords(['首都'], 10))[0]
      expect(hit?.entity).toEqual(entity('c', '北京', { description: '首都' }))
    })

    it('strings with quotes, backslashes, braces and Cypher or Lucene syntax are stored and searched as data', async () => {
      const hostile = [
        `x"}) DETACH DELETE n //`,
        "a'b\\c",
        '{name: $id} MATCH (n) RETURN n',
        'AND OR NOT * ? ~ ^ [ ] : / ( )',
        '`KgEntity`'
      ]
      await store.upsert({
        entities: hostile.map((name, i) => entity(`h${i}:${name}`, name, { description: name, aliases: [name] })),
        relations: [relation(`r"'\\`, `h0:${hostile[0]}`, `h1:${hostile[1]}`, `T"}]->(x) DELETE x`, { description: '\\"' })]
      })
      expect(await store.count()).toEqual({ entities: hostile.length, relations: 1 })
      const names = await store.names()
      expect(names.map((n) => n.name).sort()).toEqual([...hostile].sort())
      const hood = await store.neighbourhood([`h0:${hostile[0]}`])
      expect(hood.relations).toEqual([
        relation(`r"'\\`, `h0:${hostile[0]}`, `h1:${hostile[1]}`, `T"}]->(x) DELETE x`, { description: '\\"' })
      ])
      for (const tokens of [['"}) match (n) detach delete n //'], ['and', 'or', '*', '\\', '"'], ['match'], ['kgentity']]) {
        await store.searchKeywords(tokens, 10)
      }
      expect((await store.searchKeywords(['match'], 10)).map((h) => h.entity.id)).toEqual([`h2:${hostile[2]}`])
      expect(await store.deleteEntity(`h3:${hostile[3]}`)).toBe(true)
      expect(await store.count()).toEqual({ entities: hostile.length - 1, relations: 1 })
    })

    it('writes are durable: another store object over the same data sees them', async () => {
      if (!subject.reopen) return
      await store.upsert({ entities: [entity('a', 'A', { aliases: ['α'] }), entity('b', 'B')], relations: [relation('r1', 'a', 'b', 'x')] })
      await store.deleteEntity('b')
      const again = await subject.reopen()
      try {
        expect(await again.getEntities(['a', 'b'])).toEqual([entity('a', 'A', { aliases: ['α'] })])
        expect(await again.count()).toEqual({ entities: 1, relations: 0 })
      } finally {
        await again.close()
      }
    })

    it('health reports ok with the backend name and a latency', async () => {
      const health = await store.health()
      expect(health.ok).toBe(true)
      expect(health.backend).toBe(`knowledge-graph:${store.backend}`)
      expect(health.latency_ms).toBeGreaterThanOrEqual(0)
    })
  })
}

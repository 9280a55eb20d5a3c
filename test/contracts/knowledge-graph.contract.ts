/**
 * The conformance suite of `KnowledgeGraphStore`: one `it` per promise of its TSDoc, run against every
 * implementation. `make` returns a fresh, empty store (its own namespace or directory) for each test.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { analyze } from '../../src/kernel/cjk-analyzer.js'
import { seededRandom } from '../../src/evaluation/statistics.js'
import { DEFAULT_NAMESPACE } from '../../src/providers/namespace.js'
import {
  UnknownEntitiesError,
  type KgContribution,
  type KgEntity,
  type KgRelation,
  type KnowledgeGraphStore
} from '../../src/providers/knowledge-graph/port.js'

/** The namespace of the single-namespace promises. */
const NS = DEFAULT_NAMESPACE

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
      expect(await store.count(NS)).toEqual({ entities: 0, relations: 0 })
      expect(await store.names(NS)).toEqual([])
      expect(await store.neighbourhood(NS, ['x'])).toEqual({ entities: [], relations: [] })
      expect(await store.searchKeywords(NS, ['北京'], 10)).toEqual([])
    })

    it('upsert stores entities and relations with every field, and getEntities returns them in id order', async () => {
      const full = entity('b', '北京大学', {
        aliases: ['北大', 'PKU'],
        type: 'organization',
        description: '位于北京的大学',
        source: 'docs/pku.md',
        source_chunk_ids: ['pku#0', 'pku#2']
      })
      await store.upsert(NS, {
        entities: [full, entity('a', '北京')],
        relations: [relation('r1', 'b', 'a', 'located_in', { description: '校址', weight: 0.5 })]
      })
      expect(await store.getEntities(NS, ['b', 'a', 'zz'])).toEqual([entity('a', '北京'), full])
      expect(await store.count(NS)).toEqual({ entities: 2, relations: 1 })
      const hood = await store.neighbourhood(NS, ['a'])
      expect(hood.relations).toEqual([relation('r1', 'b', 'a', 'located_in', { description: '校址', weight: 0.5 })])
    })

    it('re-upserting an id replaces the entity (absent fields removed) and keeps its relations', async () => {
      await store.upsert(NS, {
        entities: [entity('a', 'Alpha', { description: 'old', aliases: ['A1'] }), entity('b', 'Beta')],
        relations: [relation('r1', 'a', 'b', 'knows')]
      })
      await store.upsert(NS, { entities: [entity('a', 'Alpha 2')] })
      expect(await store.getEntities(NS, ['a'])).toEqual([entity('a', 'Alpha 2')])
      expect((await store.neighbourhood(NS, ['a'])).relations.map((r) => r.id)).toEqual(['r1'])
      expect(await store.count(NS)).toEqual({ entities: 2, relations: 1 })
    })

    it('re-upserting a relation id replaces it, endpoints included', async () => {
      await store.upsert(NS, {
        entities: [entity('a', 'A'), entity('b', 'B'), entity('c', 'C')],
        relations: [relation('r1', 'a', 'b', 'knows', { weight: 0.2 })]
      })
      await store.upsert(NS, { relations: [relation('r1', 'a', 'c', 'likes', { weight: 0.9 })] })
      expect(await store.count(NS)).toEqual({ entities: 3, relations: 1 })
      expect((await store.neighbourhood(NS, ['b'])).relations).toEqual([])
      expect((await store.neighbourhood(NS, ['c'])).relations).toEqual([relation('r1', 'a', 'c', 'likes', { weight: 0.9 })])
    })

    it('a relation to an unknown entity throws UnknownEntitiesError listing the ids, and nothing is written', async () => {
      await store.upsert(NS, { entities: [entity('a', 'A')] })
      const before = await store.version(NS)
      const write = {
        entities: [entity('n', 'New')],
        relations: [
          relation('r1', 'a', 'n', 'ok'),
          relation('r2', 'a', 'ghost', 'bad'),
          relation('r3', 'phantom', 'ghost', 'bad')
        ]
      }
      const error = await store.upsert(NS, write).then(() => null, (e: unknown) => e)
      expect(error).toBeInstanceOf(UnknownEntitiesError)
      expect((error as UnknownEntitiesError).missing).toEqual(['ghost', 'phantom'])
      expect((error as UnknownEntitiesError).references).toEqual([
        { index: 1, field: 'target', id: 'ghost' },
        { index: 2, field: 'source', id: 'phantom' },
        { index: 2, field: 'target', id: 'ghost' }
      ])
      expect(await store.count(NS)).toEqual({ entities: 1, relations: 0 })
      expect(await store.version(NS)).toBe(before)
    })

    it('deleteEntity removes the entity and its relations and answers true; an unknown id answers false', async () => {
      await store.upsert(NS, {
        entities: [entity('a', 'A'), entity('b', 'B'), entity('c', 'C')],
        relations: [relation('r1', 'a', 'b', 'x'), relation('r2', 'c', 'a', 'y'), relation('r3', 'b', 'c', 'z')]
      })
      const before = await store.version(NS)
      expect(await store.deleteEntity(NS, 'nope')).toBe(false)
      expect(await store.version(NS)).toBe(before)
      expect(await store.deleteEntity(NS, 'a')).toBe(true)
      expect(await store.version(NS)).not.toBe(before)
      expect(await store.count(NS)).toEqual({ entities: 2, relations: 1 })
      expect(await store.getEntities(NS, ['a'])).toEqual([])
      expect((await store.neighbourhood(NS, ['b'])).relations.map((r) => r.id)).toEqual(['r3'])
    })

    it('version changes on every write and stays put without one', async () => {
      const v0 = await store.version(NS)
      expect(await store.version(NS)).toBe(v0)
      await store.upsert(NS, { entities: [entity('a', 'A')] })
      const v1 = await store.version(NS)
      expect(v1).not.toBe(v0)
      await store.upsert(NS, { entities: [entity('a', 'A')] })
      const v2 = await store.version(NS)
      expect(v2).not.toBe(v1)
      await store.getEntities(NS, ['a'])
      await store.names(NS)
      expect(await store.version(NS)).toBe(v2)
    })

    it('names lists every id, name and aliases in id order', async () => {
      await store.upsert(NS, {
        entities: [entity('b2', '北京大学', { aliases: ['北大'] }), entity('a1', 'Alpha'), entity('B1', 'Zed', { aliases: ['z', 'zz'] })]
      })
      // UTF-16 order: 'B' (0x42) sorts before 'a' (0x61).
      expect(await store.names(NS)).toEqual([
        { id: 'B1', name: 'Zed', aliases: ['z', 'zz'] },
        { id: 'a1', name: 'Alpha', aliases: [] },
        { id: 'b2', name: '北京大学', aliases: ['北大'] }
      ])
    })

    it('namesOf gives names() of the ids asked alone, in id order, each once; unknown ids are left out', async () => {
      await store.upsert(NS, {
        entities: [entity('b2', '北京大学', { aliases: ['北大'] }), entity('a1', 'Alpha'), entity('B1', 'Zed', { aliases: ['z', 'zz'] })]
      })
      expect(await store.namesOf(NS, ['b2', 'nope', 'B1', 'b2'])).toEqual([
        { id: 'B1', name: 'Zed', aliases: ['z', 'zz'] },
        { id: 'b2', name: '北京大学', aliases: ['北大'] }
      ])
      expect(await store.namesOf(NS, [])).toEqual([])
      expect(await store.namesOf('tenant-b', ['b2'])).toEqual([])
    })

    it('neighbourhood gives the entities, every touching relation and the entities one hop away, each once', async () => {
      await store.upsert(NS, {
        entities: ['a', 'b', 'c', 'd', 'e'].map((id) => entity(id, id.toUpperCase())),
        relations: [
          relation('r1', 'a', 'b', 'x'),
          relation('r2', 'c', 'a', 'y'),
          relation('r3', 'b', 'c', 'z'),
          relation('r4', 'c', 'd', 'w'),
          relation('r5', 'a', 'a', 'self')
        ]
      })
      const hood = await store.neighbourhood(NS, ['a', 'b', 'a', 'unknown'])
      expect(hood.entities.map((e) => e.id)).toEqual(['a', 'b', 'c'])
      expect(hood.relations.map((r) => r.id)).toEqual(['r1', 'r2', 'r3', 'r5'])
      expect(hood.relations.find((r) => r.id === 'r2')).toMatchObject({ source: 'c', target: 'a' })
      expect(await store.neighbourhood(NS, [])).toEqual({ entities: [], relations: [] })
    })

    it('neighbourhood with maxNeighbours cuts each requested entity\'s neighbours in the store: joined to more requested ones, then heaviest, then id', async () => {
      // hub H has 60 neighbours h00..h59 (weight 1, h10 weight 5); G is joined to H, to h57..h59 and to g0. H's order:
      // h57 h58 h59 (joined to both requested), h10 (heaviest), then by id h00..h09 h11..: its first 50 end at h46, so
      // h47..h56 go; G's 4 neighbours all stay.
      const h = (i: number) => `h${String(i).padStart(2, '0')}`
      const hub = Array.from({ length: 60 }, (_, i) => h(i))
      await store.upsert(NS, {
        entities: [entity('H', 'Hub'), entity('G', 'G'), entity('g0', 'g0'), ...hub.map((id) => entity(id, id))],
        relations: [
          relation('rHG', 'H', 'G', 'x'),
          ...hub.map((id) => relation(`rH-${id}`, id === 'h30' ? id : 'H', id === 'h30' ? 'H' : id, 'x', { weight: id === 'h10' ? 5 : 1 })),
          ...['h57', 'h58', 'h59', 'g0'].map((id) => relation(`rG-${id}`, 'G', id, 'y'))
        ]
      })
      const kept = [...hub.slice(0, 47), 'h57', 'h58', 'h59', 'g0']
      const cut = await store.neighbourhood(NS, ['H', 'G', 'unknown'], undefined, { maxNeighbours: 50 })
      expect(cut.entities.map((e) => e.id)).toEqual(['G', 'H', ...kept].sort())
      expect(cut.relations.map((r) => r.id)).toEqual(['rHG', ...kept.map((id) => (id === 'g0' || id > 'h56' ? `rG-${id}` : `rH-${id}`)), 'rH-h57', 'rH-h58', 'rH-h59'].sort())
      // the relation stored the other way round (h30 -> H) is kept as stored
      expect(cut.relations.find((r) => r.id === 'rH-h30')).toMatchObject({ source: 'h30', target: 'H' })
      // the whole neighbourhood holds the ten the cut left out; a bound above every count cuts nothing
      const whole = await store.neighbourhood(NS, ['H', 'G'])
      expect(whole.entities).toHaveLength(2 + 61)
      expect(await store.neighbourhood(NS, ['H', 'G'], undefined, { maxNeighbours: 100 })).toEqual(whole)
      // alone, G's cut of 2 takes its neighbours joined to one requested entity each by id (all weigh 1)
      expect((await store.neighbourhood(NS, ['G'], undefined, { maxNeighbours: 2 })).entities.map((e) => e.id)).toEqual(['G', 'H', 'g0'])
    })

    it('what neighbourhood and searchKeywords give is read-only: changing it, where the store lets one, changes nothing stored', async () => {
      const a = entity('a', '北京大学', { aliases: ['北大'], description: '一所大学', source_chunk_ids: ['c#0'] })
      const r = relation('r1', 'a', 'b', 'x', { weight: 2 })
      await store.upsert(NS, { entities: [a, entity('b', 'B')], relations: [r] })
      // a store may hand out frozen objects (a change throws) or copies (a change stays with the caller)
      const tamper = (change: () => void) => {
        try {
          change()
        } catch (error) {
          expect(error).toBeInstanceOf(TypeError)
        }
      }
      const hood = await store.neighbourhood(NS, ['a'])
      const got = hood.entities.find((e) => e.id === 'a')!
      tamper(() => { got.name = '清华大学' })
      tamper(() => { got.aliases.push('清华') })
      tamper(() => { got.source_chunk_ids.push('c#9') })
      tamper(() => { hood.relations[0]!.weight = 9 })
      const [hit] = await store.searchKeywords(NS, ['北京'], 5)
      tamper(() => { hit!.entity.description = '改了' })
      expect(await store.getEntities(NS, ['a'])).toEqual([a])
      expect((await store.neighbourhood(NS, ['a'])).relations).toEqual([r])
      expect((await store.searchKeywords(NS, ['北京'], 5)).map((h) => h.entity)).toEqual([a])
    })

    it('searchKeywords scores 2 per name token and 1 per other description token, ties by id, at most limit', async () => {
      await store.upsert(NS, {
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
      expect((await store.searchKeywords(NS, ['北京', '大学', '北京'], 10)).map((h) => [h.entity.id, h.score])).toEqual([
        ['u', 4],
        ['c', 2],
        ['t', 2]
      ])
      expect((await store.searchKeywords(NS, ['北京', '大学'], 2)).map((h) => h.entity.id)).toEqual(['u', 'c'])
      // Name token counts 2 even when the description has it too; the description adds 1 only for others.
      expect((await store.searchKeywords(NS, ['kafka', 'processing'], 10)).map((h) => [h.entity.id, h.score])).toEqual([['k', 3]])
      expect((await store.searchKeywords(NS, ['k', 'streamz'], 10))).toEqual([])
      expect(await store.searchKeywords(NS, [], 10)).toEqual([])
      const hit = (await store.searchKeywords(NS, ['首都'], 10))[0]
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
      await store.upsert(NS, {
        entities: hostile.map((name, i) => entity(`h${i}:${name}`, name, { description: name, aliases: [name] })),
        relations: [relation(`r"'\\`, `h0:${hostile[0]}`, `h1:${hostile[1]}`, `T"}]->(x) DELETE x`, { description: '\\"' })]
      })
      expect(await store.count(NS)).toEqual({ entities: hostile.length, relations: 1 })
      const names = await store.names(NS)
      expect(names.map((n) => n.name).sort()).toEqual([...hostile].sort())
      const hood = await store.neighbourhood(NS, [`h0:${hostile[0]}`])
      expect(hood.relations).toEqual([
        relation(`r"'\\`, `h0:${hostile[0]}`, `h1:${hostile[1]}`, `T"}]->(x) DELETE x`, { description: '\\"' })
      ])
      for (const tokens of [['"}) match (n) detach delete n //'], ['and', 'or', '*', '\\', '"'], ['match'], ['kgentity']]) {
        await store.searchKeywords(NS, tokens, 10)
      }
      expect((await store.searchKeywords(NS, ['match'], 10)).map((h) => h.entity.id)).toEqual([`h2:${hostile[2]}`])
      expect(await store.deleteEntity(NS, `h3:${hostile[3]}`)).toBe(true)
      expect(await store.count(NS)).toEqual({ entities: hostile.length - 1, relations: 1 })
    })

    it('writes are durable: another store object over the same data sees them', async () => {
      if (!subject.reopen) return
      await store.upsert(NS, { entities: [entity('a', 'A', { aliases: ['α'] }), entity('b', 'B')], relations: [relation('r1', 'a', 'b', 'x')] })
      await store.deleteEntity(NS, 'b')
      const again = await subject.reopen()
      try {
        expect(await again.getEntities(NS, ['a', 'b'])).toEqual([entity('a', 'A', { aliases: ['α'] })])
        expect(await again.count(NS)).toEqual({ entities: 1, relations: 0 })
      } finally {
        await again.close()
      }
    })

    it('keeps namespaces apart: the same ids in two, a delete in one, every read in the other', async () => {
      await store.upsert('tenant-a', {
        entities: [entity('pku', '北京大学', { type: 'org', description: '大学' }), entity('bj', '北京', { type: 'city' })],
        relations: [relation('r1', 'pku', 'bj', '位于')]
      })
      await store.upsert('tenant-b', { entities: [entity('pku', 'Peking University', { type: 'org' })] })
      const versionB = await store.version('tenant-b')
      expect(await store.deleteEntity('tenant-a', 'pku')).toBe(true)
      expect(await store.version('tenant-b')).toBe(versionB)
      expect(await store.getEntities('tenant-b', ['pku', 'bj'])).toEqual([entity('pku', 'Peking University', { type: 'org' })])
      expect(await store.count('tenant-b')).toEqual({ entities: 1, relations: 0 })
      expect(await store.count('tenant-a')).toEqual({ entities: 1, relations: 0 })
      expect(await store.names('tenant-b')).toEqual([{ id: 'pku', name: 'Peking University', aliases: [] }])
      expect(await store.neighbourhood('tenant-b', ['pku', 'bj'])).toEqual({ entities: [entity('pku', 'Peking University', { type: 'org' })], relations: [] })
      expect(await store.searchKeywords('tenant-b', ['北京'], 10)).toEqual([])
      expect((await store.searchKeywords('tenant-a', ['北京'], 10)).map((h) => h.entity.id)).toEqual(['bj'])
      expect(await store.count(NS)).toEqual({ entities: 0, relations: 0 })
      expect(await store.deleteEntity('tenant-b', 'bj')).toBe(false)
    })

    it('a relation joins entities of its own namespace only', async () => {
      await store.upsert('tenant-a', { entities: [entity('a', 'A')] })
      await store.upsert('tenant-b', { entities: [entity('b', 'B')] })
      const error = await store.upsert('tenant-b', { relations: [relation('r', 'a', 'b', 'x')] }).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(UnknownEntitiesError)
      expect((error as UnknownEntitiesError).missing).toEqual(['a'])
      expect(await store.count('tenant-b')).toEqual({ entities: 1, relations: 0 })
    })

    it('namespaces lists those holding entities; dropNamespace removes one wholly, its version moves on and never comes back', async () => {
      expect(await store.namespaces()).toEqual([])
      await store.upsert('tenant-b', { entities: [entity('x', 'X'), entity('y', 'Y')], relations: [relation('r', 'x', 'y', 't')] })
      await store.upsert(NS, { entities: [entity('x', 'X')] })
      expect(await store.namespaces()).toEqual(['default', 'tenant-b'])
      const seen = new Set([await store.version('tenant-b')])
      await store.dropNamespace('tenant-b')
      expect(await store.namespaces()).toEqual(['default'])
      expect(await store.count('tenant-b')).toEqual({ entities: 0, relations: 0 })
      expect(await store.names('tenant-b')).toEqual([])
      expect(await store.count(NS)).toEqual({ entities: 1, relations: 0 })
      const dropped = await store.version('tenant-b')
      expect(seen.has(dropped)).toBe(false)
      seen.add(dropped)
      // written again as before: every version it takes is new
      await store.upsert('tenant-b', { entities: [entity('x', 'X'), entity('y', 'Y')], relations: [relation('r', 'x', 'y', 't')] })
      expect(seen.has(await store.version('tenant-b'))).toBe(false)
      await expect(store.dropNamespace('never-written')).resolves.toBeUndefined()
    })

    it('searchKeywords keeps only the given types, before the limit', async () => {
      await store.upsert('tenant-a', {
        entities: [
          entity('c1', '北京', { type: 'city' }), entity('o1', '北京大学', { type: 'org' }), entity('o2', '北京银行', { type: 'org' }),
          entity('u', '北京烤鸭')
        ]
      })
      // every entity's name holds 北京 (score 2): by id, c1 first; typed org only, the two orgs
      expect((await store.searchKeywords('tenant-a', ['北京'], 2)).map((h) => h.entity.id)).toEqual(['c1', 'o1'])
      expect((await store.searchKeywords('tenant-a', ['北京'], 2, { types: ['org'] })).map((h) => h.entity.id)).toEqual(['o1', 'o2'])
      expect((await store.searchKeywords('tenant-a', ['北京'], 10, { types: ['city', 'nothing'] })).map((h) => h.entity.id)).toEqual(['c1'])
      expect(await store.searchKeywords('tenant-a', ['北京'], 10, { types: ['nothing'] })).toEqual([])
    })

    it('each namespace is durable on its own: another store object over the same data sees each', async () => {
      if (!subject.reopen) return
      await store.upsert('tenant-a', { entities: [entity('a', 'A')] })
      await store.upsert(NS, { entities: [entity('a', 'Default A')] })
      const again = await subject.reopen()
      try {
        expect(await again.getEntities('tenant-a', ['a'])).toEqual([entity('a', 'A')])
        expect(await again.getEntities(NS, ['a'])).toEqual([entity('a', 'Default A')])
        expect(await again.namespaces()).toEqual(['default', 'tenant-a'])
      } finally {
        await again.close()
      }
    })

    describe('the derived graph (replaceDerived, derivedOf)', () => {
      // doc-a: 鉴权中间件 (2 mentions, chunks a#0 a#1), 平台组 (a#0), 平台组 -负责-> 鉴权中间件 twice in a#0
      const docA: KgContribution = {
        entities: [
          { key: '鉴权中间件', name: '鉴权中间件', description: '鉴权中间件是身份校验组件。', chunk_ids: ['a#0', 'a#1'], mentions: 2 },
          { key: '平台组', name: '平台组', type: '机构', chunk_ids: ['a#0'], mentions: 1 }
        ],
        relations: [{ source: '平台组', target: '鉴权中间件', type: '负责', chunk_ids: ['a#0'], count: 2 }]
      }
      // doc-b: 鉴权中间件 as "鉴权中间件" with another description, Redis, the same relation once, and 鉴权中间件 -使用-> redis
      const docB: KgContribution = {
        entities: [
          { key: 'redis', name: 'Redis', type: '术语', chunk_ids: ['b#1'], mentions: 1 },
          { key: '平台组', name: '平台组', chunk_ids: ['b#0'], mentions: 1 },
          { key: '鉴权中间件', name: '鉴权中间件', description: '另一种说法。', chunk_ids: ['b#0', 'b#1'], mentions: 3 }
        ],
        relations: [
          { source: '平台组', target: '鉴权中间件', type: '负责', chunk_ids: ['b#0'], count: 1 },
          { source: '鉴权中间件', target: 'redis', type: '使用', chunk_ids: ['b#1'], count: 1 }
        ]
      }
      const RESPONSIBLE = 'd:平台组-[负责]->d:鉴权中间件'
      const USES = 'd:鉴权中间件-[使用]->d:redis'
      const ids = (items: Array<{ id: string }>) => items.map((i) => i.id)

      it('writes derived entities and relations with d: ids, each document\'s part and fields read from the parts', async () => {
        const result = await store.replaceDerived(NS, new Map([['doc-a', docA]]))
        expect(result).toEqual({ written: { entities: 2, relations: 1 }, removed: { entities: 0, relations: 0 }, blocked: [], entityIds: ['d:平台组', 'd:鉴权中间件'] })
        expect(await store.getEntities(NS, ['d:鉴权中间件'])).toEqual([{
          id: 'd:鉴权中间件', name: '鉴权中间件', aliases: [], description: '鉴权中间件是身份校验组件。', source_chunk_ids: ['a#0', 'a#1'],
          derived_from: [{ doc_id: 'doc-a', chunk_ids: ['a#0', 'a#1'], count: 2, name: '鉴权中间件', description: '鉴权中间件是身份校验组件。' }]
        }])
        const hood = await store.neighbourhood(NS, ['d:平台组'])
        expect(hood.relations).toEqual([{
          id: RESPONSIBLE, source: 'd:平台组', target: 'd:鉴权中间件', type: '负责', weight: 2,
          derived_from: [{ doc_id: 'doc-a', chunk_ids: ['a#0'], count: 2 }]
        }])
        expect(await store.names(NS)).toEqual([
          { id: 'd:平台组', name: '平台组', aliases: [], derived: true },
          { id: 'd:鉴权中间件', name: '鉴权中间件', aliases: [], derived: true }
        ])
        expect(await store.namesOf(NS, ['d:鉴权中间件'])).toEqual([{ id: 'd:鉴权中间件', name: '鉴权中间件', aliases: [], derived: true }])
      })

      it('merges two documents\' parts: chunks and fields in document order, a relation weighs the sum of its counts', async () => {
        await store.replaceDerived(NS, new Map([['doc-b', docB]]))
        await store.replaceDerived(NS, new Map([['doc-a', docA]]))
        const [auth] = await store.getEntities(NS, ['d:鉴权中间件'])
        expect(auth!.source_chunk_ids).toEqual(['a#0', 'a#1', 'b#0', 'b#1'])
        expect(auth!.description).toBe('鉴权中间件是身份校验组件。')
        expect(auth!.derived_from!.map((p) => [p.doc_id, p.count])).toEqual([['doc-a', 2], ['doc-b', 3]])
        const [group] = await store.getEntities(NS, ['d:平台组'])
        expect(group!.type).toBe('机构')
        const relations = (await store.neighbourhood(NS, ['d:鉴权中间件'])).relations
        expect(relations.map((r) => [r.id, r.weight])).toEqual([[RESPONSIBLE, 3], [USES, 1]].sort(([a], [b]) => (String(a) < String(b) ? -1 : 1)))
        expect(await store.count(NS)).toEqual({ entities: 3, relations: 2 })
        expect(ids((await store.derivedOf(NS, ['doc-a'])).entities)).toEqual(['d:平台组', 'd:鉴权中间件'])
        expect(ids((await store.derivedOf(NS, ['doc-b'])).relations)).toEqual([USES, RESPONSIBLE].sort())
        // doc-a: 2 entities + 1 relation; doc-b: 3 entities + 2 relations; doc-c: none
        expect(await store.derivedPartCounts(NS, ['doc-a', 'doc-b', 'doc-c'])).toEqual(new Map([['doc-a', 3], ['doc-b', 5], ['doc-c', 0]]))
      })

      it('replacing or removing one document changes only its parts; an entity whose last document goes is removed', async () => {
        await store.replaceDerived(NS, new Map([['doc-a', docA], ['doc-b', docB]]))
        // doc-b no longer names Redis nor uses it
        const docB2: KgContribution = { entities: docB.entities.filter((e) => e.key !== 'redis'), relations: docB.relations.filter((r) => r.type !== '使用') }
        expect(await store.replaceDerived(NS, new Map([['doc-b', docB2]])))
          .toEqual({ written: { entities: 0, relations: 0 }, removed: { entities: 1, relations: 1 }, blocked: [], entityIds: ['d:redis'] })
        expect(await store.count(NS)).toEqual({ entities: 2, relations: 1 })
        // doc-a's parts go from both entities, which doc-b still holds
        expect(await store.replaceDerived(NS, new Map([['doc-a', { entities: [], relations: [] }]])))
          .toEqual({ written: { entities: 2, relations: 1 }, removed: { entities: 0, relations: 0 }, blocked: [], entityIds: ['d:平台组', 'd:鉴权中间件'] })
        const [auth] = await store.getEntities(NS, ['d:鉴权中间件'])
        expect([auth!.source_chunk_ids, auth!.description]).toEqual([['b#0', 'b#1'], '另一种说法。'])
        expect((await store.neighbourhood(NS, ['d:平台组'])).relations.map((r) => r.weight)).toEqual([1])
        expect(await store.derivedOf(NS, ['doc-a'])).toEqual({ entities: [], relations: [] })
        await store.replaceDerived(NS, new Map([['doc-b', { entities: [], relations: [] }]]))
        expect(await store.count(NS)).toEqual({ entities: 0, relations: 0 })
      })

      it('writes nothing, and keeps the version, when a document derives what it derived before', async () => {
        await store.replaceDerived(NS, new Map([['doc-a', docA]]))
        const version = await store.version(NS)
        expect(await store.replaceDerived(NS, new Map([['doc-a', docA]])))
          .toEqual({ written: { entities: 0, relations: 0 }, removed: { entities: 0, relations: 0 }, blocked: [], entityIds: [] })
        expect(await store.version(NS)).toBe(version)
      })

      it('keeps the llm mark of a document\'s part (docs/llm-extraction.md), and drops it when the document\'s part no longer has it', async () => {
        const byLlm: KgContribution = {
          entities: docA.entities.map((e) => (e.key === '平台组' ? { ...e, llm: true as const } : e)),
          relations: docA.relations.map((r) => ({ ...r, llm: true as const }))
        }
        await store.replaceDerived(NS, new Map([['doc-a', byLlm], ['doc-b', docB]]))
        const [group] = await store.getEntities(NS, ['d:平台组'])
        expect(group!.derived_from!.map((p) => [p.doc_id, p.llm])).toEqual([['doc-a', true], ['doc-b', undefined]])
        const [auth] = await store.getEntities(NS, ['d:鉴权中间件'])
        expect(auth!.derived_from!.every((p) => p.llm === undefined)).toBe(true)
        const responsible = (await store.neighbourhood(NS, ['d:平台组'])).relations.find((r) => r.id === RESPONSIBLE)
        expect(responsible!.derived_from).toEqual([{ doc_id: 'doc-a', chunk_ids: ['a#0'], count: 2, llm: true }, { doc_id: 'doc-b', chunk_ids: ['b#0'], count: 1 }])
        expect(await store.replaceDerived(NS, new Map([['doc-a', docA]])))
          .toEqual({ written: { entities: 1, relations: 1 }, removed: { entities: 0, relations: 0 }, blocked: [], entityIds: ['d:平台组'] })
        expect((await store.derivedOf(NS, ['doc-a'])).entities.flatMap((e) => e.derived_from!).some((p) => p.llm)).toBe(false)
      })

      it('never writes over an imported entity: its id is blocked, with the relations that touch it', async () => {
        const imported = entity('d:平台组', '平台组（导入）', { type: 'org', source_chunk_ids: ['x#0'] })
        await store.upsert(NS, { entities: [imported, entity('e1', '别的')], relations: [relation('r1', 'd:平台组', 'e1', '管理')] })
        const result = await store.replaceDerived(NS, new Map([['doc-a', docA]]))
        expect(result).toEqual({ written: { entities: 1, relations: 0 }, removed: { entities: 0, relations: 0 }, blocked: ['d:平台组'], entityIds: ['d:鉴权中间件'] })
        expect(await store.getEntities(NS, ['d:平台组'])).toEqual([imported])
        expect(ids((await store.neighbourhood(NS, ['d:平台组'])).relations)).toEqual(['r1'])
        await store.replaceDerived(NS, new Map([['doc-a', { entities: [], relations: [] }]]))
        expect(await store.getEntities(NS, ['d:平台组', 'e1'])).toEqual([imported, entity('e1', '别的')])
        expect(await store.names(NS)).toEqual([{ id: 'd:平台组', name: '平台组（导入）', aliases: [] }, { id: 'e1', name: '别的', aliases: [] }])
      })

      it('keeps derived parts apart per namespace', async () => {
        await store.replaceDerived('tenant-a', new Map([['doc-a', docA]]))
        expect(await store.count(NS)).toEqual({ entities: 0, relations: 0 })
        expect(await store.derivedOf(NS, ['doc-a'])).toEqual({ entities: [], relations: [] })
        expect(ids((await store.derivedOf('tenant-a', ['doc-a'])).entities)).toEqual(['d:平台组', 'd:鉴权中间件'])
      })

      /**
       * Random writes of `docs` against a reference built from the port's promise alone: every document's latest
       * contribution, parts in document order, fields from the first part that has one, chunks in that order once each,
       * a relation's weight the sum of its counts; and the keyword search for each of `keywordTokens` (two-character
       * tokens of names, found in no description but the name's own): every entity whose name holds it, score 2, in id order.
       */
      async function checkRandomWrites(seed: number, names: readonly string[], docs: readonly string[], options: {
        rounds: number; chunkIdsOf: (doc: string, pick: <T>(xs: readonly T[]) => T) => string[]; hub?: boolean; keywordTokens?: string[]
      }): Promise<void> {
        const random = seededRandom(seed)
        const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)]!
        const contributionOf = (doc: string): KgContribution => {
          const chosen = names.filter(() => random() < 0.5)
          const pairs = options.hub ? chosen.slice(1).map((name) => [chosen[0]!, name] as const) : chosen.length < 2 ? [] : [[chosen[0]!, chosen[1]!] as const]
          return {
            entities: chosen.map((name) => ({
              key: name.toLowerCase(), name, chunk_ids: options.chunkIdsOf(doc, pick), mentions: 1 + Math.floor(random() * 3),
              ...(random() < 0.4 ? { type: pick(['机构', '术语']) } : {}), ...(random() < 0.4 ? { description: `${name}，${doc} 的说法。` } : {})
            })),
            relations: pairs.map(([source, target]) => ({
              source: source.toLowerCase(), target: target.toLowerCase(), type: pick(['负责', '使用']), chunk_ids: options.chunkIdsOf(doc, pick), count: 1 + Math.floor(random() * 2)
            }))
          }
        }
        const current = new Map<string, KgContribution>()
        const expected = () => {
          const entities = new Map<string, { parts: Array<Record<string, unknown>> }>()
          const relations = new Map<string, { source: string; target: string; type: string; parts: Array<{ doc_id: string; chunk_ids: string[]; count: number }> }>()
          for (const doc of [...current.keys()].sort()) {
            for (const e of current.get(doc)!.entities) {
              const part = { doc_id: doc, chunk_ids: e.chunk_ids, count: e.mentions, name: e.name, ...(e.type ? { type: e.type } : {}), ...(e.description ? { description: e.description } : {}) }
              const slot = entities.get(`d:${e.key}`) ?? { parts: [] }
              slot.parts.push(part)
              entities.set(`d:${e.key}`, slot)
            }
            for (const r of current.get(doc)!.relations) {
              const id = `d:${r.source}-[${r.type}]->d:${r.target}`
              const slot = relations.get(id) ?? { source: `d:${r.source}`, target: `d:${r.target}`, type: r.type, parts: [] }
              slot.parts.push({ doc_id: doc, chunk_ids: r.chunk_ids, count: r.count })
              relations.set(id, slot)
            }
          }
          const first = (parts: Array<Record<string, unknown>>, key: string) => parts.find((p) => p[key] !== undefined)?.[key] as string | undefined
          return {
            entities: [...entities].sort(([a], [b]) => (a < b ? -1 : 1)).map(([id, { parts }]) => ({
              id, name: first(parts, 'name')!, aliases: [],
              ...(first(parts, 'type') ? { type: first(parts, 'type') } : {}), ...(first(parts, 'description') ? { description: first(parts, 'description') } : {}),
              source_chunk_ids: [...new Set(parts.flatMap((p) => p['chunk_ids'] as string[]))], derived_from: parts
            })),
            relations: [...relations].sort(([a], [b]) => (a < b ? -1 : 1)).map(([id, r]) => ({
              id, source: r.source, target: r.target, type: r.type, weight: r.parts.reduce((sum, p) => sum + p.count, 0), derived_from: r.parts
            }))
          }
        }
        const check = async (graph: KnowledgeGraphStore, label: string) => {
          const want = expected()
          expect(await graph.derivedOf(NS, docs), label).toEqual(want)
          const parts = new Map(docs.map((doc) => [doc, 0]))
          for (const item of [...want.entities, ...want.relations]) for (const part of item.derived_from) parts.set(String(part['doc_id']), parts.get(String(part['doc_id']))! + 1)
          expect(await graph.derivedPartCounts(NS, docs), `${label}, part counts`).toEqual(parts)
          for (const token of options.keywordTokens ?? []) {
            expect(await graph.searchKeywords(NS, [token], 1000), `${label}, ${token}`)
              .toEqual(want.entities.filter((e) => e.name.includes(token)).map((e) => ({ entity: e, score: 2 })))
          }
        }
        for (let round = 0; round < options.rounds; round++) {
          const written = docs.filter(() => random() < 0.3)
          const write = new Map(written.map((doc) => [doc, random() < 0.25 ? { entities: [], relations: [] } : contributionOf(doc)] as const))
          for (const [doc, contribution] of write) {
            if (contribution.entities.length === 0) current.delete(doc)
            else current.set(doc, contribution)
          }
          await store.replaceDerived(NS, write)
          await check(store, `after round ${round}`)
          // the fields a store keeps beside the parts (names, the keyword search's tokens and type), by the port's scoring
          const want = expected().entities
          expect(await store.names(NS), `names after round ${round}`).toEqual(want.map((e) => ({ id: e.id, name: e.name, aliases: [], derived: true })))
          const query = [...new Set(analyze([...names, ...docs].join(' ')))]
          for (const types of [undefined, ['机构']]) {
            const hits = want
              .filter((e) => !types || (e.type !== undefined && types.includes(e.type)))
              .map((e) => {
                const name = new Set(analyze(e.name))
                const description = new Set(analyze(e.description ?? ''))
                return { id: e.id, score: query.reduce((sum, t) => sum + (name.has(t) ? 2 : description.has(t) ? 1 : 0), 0) }
              })
              .filter((h) => h.score > 0)
              .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1))
            const found = await store.searchKeywords(NS, query, 100, types ? { types } : {})
            expect(found.map((h) => ({ id: h.entity.id, score: h.score })), `keywords ${String(types)} after round ${round}`).toEqual(hits)
          }
        }
        if (subject.reopen) {
          const again = await subject.reopen()
          try {
            await check(again, 'reopened')
          } finally {
            await again.close()
          }
        }
      }

      it('after any sequence of writes, each item is what its documents\' current parts give, in document order', async () => {
        await checkRandomWrites(31, ['鉴权中间件', '平台组', 'Redis', '网关', '令牌', '审计日志'], ['doc-0', 'doc-1', 'doc-10', 'doc-2', 'doc-3', 'doc-4', 'doc-5', 'doc-6', 'doc-7'], {
          rounds: 24, chunkIdsOf: (doc, pick) => [pick([`${doc}#0`, `${doc}#1`])]
        })
      })

      it('the same with many documents an item, many relations an entity, many entities a token, and chunk ids of any form', async () => {
        // items cited by up to 40 documents, a hub entity related to up to 79 others, 80 names sharing the token 网关 and 20
        // each 甲乙, 丙丁, 戊己 or 庚辛; chunk ids that are not `<document>#<index>` (leading zero, another document's, no
        // index, letters) kept as written
        const groups = ['甲乙', '丙丁', '戊己', '庚辛']
        const names = Array.from({ length: 80 }, (_, i) => `${groups[i % 4]}网关${String(i).padStart(2, '0')}`)
        const docs = Array.from({ length: 40 }, (_, i) => `doc-${i}`).sort()
        await checkRandomWrites(47, names, docs, {
          rounds: 12, hub: true, keywordTokens: ['网关', ...groups],
          chunkIdsOf: (doc, pick) => {
            const ids = [`${doc}#0`, `${doc}#7`, `${doc}#01`, `other#3`, `${doc}#`, `${doc}#2a`, `${doc}#123456789012`, `${doc}-x#1`]
            return [...new Set([pick(ids), pick(ids), pick(ids)])]
          }
        })
      })

      it('a derived entity\'s name, type and description come from the first document (by id) that gives each, read again after a reopen', async () => {
        const part = (doc: string, fields: { name: string; type?: string; description?: string }): KgContribution => ({
          entities: [{ key: '网关', chunk_ids: [`${doc}#0`], mentions: 1, ...fields }], relations: []
        })
        // written in another order than their ids, and the first part (doc-a) gives no type nor description
        await store.replaceDerived(NS, new Map([
          ['doc-c', part('doc-c', { name: '网关丙', type: '组件丙', description: '丙的说法' })],
          ['doc-a', part('doc-a', { name: '网关甲' })],
          ['doc-b', part('doc-b', { name: '网关乙', type: '组件乙' })]
        ]))
        const read = async (s: KnowledgeGraphStore) => {
          const [gateway] = await s.getEntities(NS, ['d:网关'])
          return {
            fields: [gateway?.name, gateway?.type, gateway?.description],
            names: await s.names(NS),
            typed: (await s.searchKeywords(NS, ['网关'], 10, { types: ['组件乙'] })).map((h) => h.entity.id),
            otherType: (await s.searchKeywords(NS, ['网关'], 10, { types: ['组件丙'] })).map((h) => h.entity.id)
          }
        }
        const expected = {
          fields: ['网关甲', '组件乙', '丙的说法'],
          names: [{ id: 'd:网关', name: '网关甲', aliases: [], derived: true }],
          typed: ['d:网关'],
          otherType: []
        }
        expect(await read(store)).toEqual(expected)
        if (!subject.reopen) return
        const again = await subject.reopen()
        try {
          expect(await read(again)).toEqual(expected)
        } finally {
          await again.close()
        }
      })

      it('a derived graph is durable: another store object over the same data reads the same parts', async () => {
        if (!subject.reopen) return
        await store.replaceDerived(NS, new Map([['doc-a', docA], ['doc-b', docB]]))
        const before = await store.derivedOf(NS, ['doc-a', 'doc-b'])
        const again = await subject.reopen()
        try {
          expect(await again.derivedOf(NS, ['doc-a', 'doc-b'])).toEqual(before)
          await again.replaceDerived(NS, new Map([['doc-b', { entities: [], relations: [] }]]))
          expect(await again.count(NS)).toEqual({ entities: 2, relations: 1 })
        } finally {
          await again.close()
        }
      })

      it('every read is a function of what is stored, not of the order it was written in (ties by id, parts by document)', async () => {
        // the same graph written into two namespaces in two histories: imported items in other orders and other writes,
        // derived documents one a write ascending against all in one write descending after a detour of doc-b. The hub
        // H's six neighbours all weigh 1 (a cut of 3 keeps them by id), H and x are joined twice with equal weights, and
        // 网关甲 and 网关乙 tie in the keyword search.
        const imported = [
          entity('H', 'Hub'), entity('n1', 'N1'), entity('n2', 'N2'), entity('n3', 'N3'), entity('x', 'X'), entity('y', 'Y'), entity('z', 'Z'),
          entity('kw-b', '网关乙'), entity('kw-a', '网关甲')
        ]
        const links = [
          ...['z', 'n3', 'y', 'n1', 'x', 'n2'].map((id) => relation(`rH-${id}`, id === 'n2' ? id : 'H', id === 'n2' ? 'H' : id, 'x')),
          relation('rHx-b', 'x', 'H', 'y'), relation('rHx-a', 'H', 'x', 'y'), relation('rkw', 'kw-b', 'kw-a', 'x')
        ]
        const docC: KgContribution = {
          entities: [
            { key: '平台组', name: '平台组', description: '第三种说法。', chunk_ids: ['c#0'], mentions: 1 }, { key: '网关', name: '网关', chunk_ids: ['c#0'], mentions: 1 },
            { key: '鉴权中间件', name: '鉴权中间件', chunk_ids: ['c#0'], mentions: 1 }
          ],
          relations: [{ source: '平台组', target: '网关', type: '负责', chunk_ids: ['c#0'], count: 1 }, { source: '平台组', target: '鉴权中间件', type: '负责', chunk_ids: ['c#0'], count: 1 }]
        }
        const [A, B] = ['order-a', 'order-b']
        await store.upsert(A, { entities: imported.slice(0, 5) })
        await store.upsert(A, { entities: imported.slice(5), relations: links.slice(4) })
        await store.upsert(A, { relations: links.slice(0, 4) })
        for (const [doc, contribution] of [['doc-a', docA], ['doc-b', docB], ['doc-c', docC]] as const) await store.replaceDerived(A, new Map([[doc, contribution]]))
        await store.upsert(B, { entities: [...imported].reverse(), relations: [...links].reverse() })
        await store.replaceDerived(B, new Map([['doc-b', docC]]))
        await store.replaceDerived(B, new Map([['doc-c', docC], ['doc-b', docB], ['doc-a', docA]]))

        const reads = async (ns: string) => ({
          names: await store.names(ns),
          entities: await store.getEntities(ns, ['z', 'd:平台组', 'H', 'kw-a', 'd:网关']),
          hood: await store.neighbourhood(ns, ['x', 'H', 'd:鉴权中间件', 'd:平台组']),
          cut: await store.neighbourhood(ns, ['H'], undefined, { maxNeighbours: 3 }),
          keywords: await store.searchKeywords(ns, ['网关'], 10),
          firstKeyword: await store.searchKeywords(ns, ['网关'], 1),
          derived: await store.derivedOf(ns, ['doc-c', 'doc-a', 'doc-b'])
        })
        const [a, b] = [await reads(A), await reads(B)]
        expect(b).toEqual(a)
        // and that order is the port's: ids ascending, the cut's ties by id, each item's parts by document
        const ascending = (ids: string[]) => expect(ids).toEqual([...ids].sort())
        for (const list of [a.names, a.entities, a.hood.entities, a.hood.relations, a.cut.entities, a.cut.relations, a.derived.entities, a.derived.relations]) ascending(list.map((i) => i.id))
        expect(a.cut.entities.map((e) => e.id)).toEqual(['H', 'n1', 'n2', 'n3'])
        expect(a.hood.relations.map((r) => r.id)).toEqual([
          'd:平台组-[负责]->d:网关', 'd:平台组-[负责]->d:鉴权中间件', 'd:鉴权中间件-[使用]->d:redis',
          'rH-n1', 'rH-n2', 'rH-n3', 'rH-x', 'rH-y', 'rH-z', 'rHx-a', 'rHx-b'
        ])
        expect(a.keywords.map((h) => [h.entity.id, h.score])).toEqual([['d:网关', 2], ['kw-a', 2], ['kw-b', 2]])
        expect(a.firstKeyword.map((h) => h.entity.id)).toEqual(['d:网关'])
        for (const item of [...a.derived.entities, ...a.derived.relations]) ascending(item.derived_from!.map((p) => p.doc_id))
        expect(a.derived.entities.find((e) => e.id === 'd:平台组')).toMatchObject({ type: '机构', source_chunk_ids: ['a#0', 'b#0', 'c#0'] })
        expect(a.derived.relations.find((r) => r.id === 'd:平台组-[负责]->d:鉴权中间件')!.weight).toBe(4)
      }, 180_000) // about twenty round trips: 50 s against Neo4j on a loaded machine (load 12)
    })

    it('health reports ok with the backend name and a latency', async () => {
      const health = await store.health()
      expect(health.ok).toBe(true)
      expect(health.backend).toBe(`knowledge-graph:${store.backend}`)
      expect(health.latency_ms).toBeGreaterThanOrEqual(0)
    })
  })
}

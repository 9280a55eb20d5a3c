import { randomBytes } from 'node:crypto'
import { afterAll, describe, expect, inject, it } from 'vitest'
import type { ManagedTransaction, ProfiledPlan } from 'neo4j-driver'
import { createNeo4jConnection, type Neo4jConnection } from '../../src/providers/neo4j/connection.js'
import { Neo4jKnowledgeGraphStore } from '../../src/providers/knowledge-graph/neo4j.js'
import type { KgContribution } from '../../src/providers/knowledge-graph/port.js'
import { describeKnowledgeGraphStoreContract } from '../contracts/knowledge-graph.contract.js'

const uri = inject('neo4jUri')

/** A label prefix no other test file or run uses, so files run in parallel against one server. */
const freshNamespace = () => `T${randomBytes(6).toString('hex')}`

const makeStore = (namespace: string) =>
  new Neo4jKnowledgeGraphStore({ connection: createNeo4jConnection({ uri, timeoutMs: 10_000 }), labelPrefix: namespace })

/** Removes the namespace's data, its change counter included; the schema stays. */
async function wipeNamespace(namespace: string): Promise<void> {
  const connection = createNeo4jConnection({ uri, timeoutMs: 30_000 })
  try {
    await connection.run(`MATCH (n:${namespace}_KgEntity) DETACH DELETE n`)
    await connection.run(`MATCH (n:${namespace}_KgMeta) DELETE n`)
    await connection.run(`MATCH (n:${namespace}_KgDoc) DELETE n`)
    await connection.run(`MATCH (n:${namespace}_KgEntityPart) DELETE n`)
    await connection.run(`MATCH (n:${namespace}_KgRelationPart) DELETE n`)
  } finally {
    await connection.close()
  }
}

/** Removes the namespace's data and schema, so runs leave the shared database as they found it. */
async function dropNamespace(namespace: string): Promise<void> {
  const connection = createNeo4jConnection({ uri, timeoutMs: 30_000 })
  try {
    await connection.run(`MATCH (n:${namespace}_KgEntity) DETACH DELETE n`)
    await connection.run(`MATCH (n:${namespace}_KgMeta) DELETE n`)
    await connection.run(`MATCH (n:${namespace}_KgDoc) DELETE n`)
    await connection.run(`MATCH (n:${namespace}_KgEntityPart) DELETE n`)
    await connection.run(`MATCH (n:${namespace}_KgRelationPart) DELETE n`)
    const prefix = `${namespace.toLowerCase()}_kg_`
    const constraints = await connection.run('SHOW CONSTRAINTS YIELD name RETURN name', {}, 'READ')
    for (const name of constraints.records.map((r) => String(r.get('name'))).filter((n) => n.startsWith(prefix))) {
      await connection.run(`DROP CONSTRAINT ${name} IF EXISTS`)
    }
    const indexes = await connection.run('SHOW INDEXES YIELD name RETURN name', {}, 'READ')
    for (const name of indexes.records.map((r) => String(r.get('name'))).filter((n) => n.startsWith(prefix))) {
      await connection.run(`DROP INDEX ${name} IF EXISTS`)
    }
  } finally {
    await connection.close()
  }
}

// One namespace for the whole file: a new namespace means new schema and new query plans, which cost
// seconds on a cold server. Each test starts from an empty graph in it.
const contractNamespace = freshNamespace()
afterAll(() => dropNamespace(contractNamespace))

describeKnowledgeGraphStoreContract('neo4j', async () => {
  await wipeNamespace(contractNamespace)
  return { store: makeStore(contractNamespace), reopen: async () => makeStore(contractNamespace) }
})

describe('Neo4jKnowledgeGraphStore', () => {
  it('creates its composite constraints and full-text index idempotently, under its label prefix', async () => {
    const namespace = freshNamespace()
    const a = makeStore(namespace)
    const b = makeStore(namespace)
    try {
      await Promise.all([a.init(), b.init(), a.init()])
      const connection = createNeo4jConnection({ uri })
      try {
        const shown = await connection.run(
          'SHOW INDEXES YIELD name, type, labelsOrTypes, properties, options RETURN name, type, labelsOrTypes, properties, options',
          {},
          'READ'
        )
        const ours = shown.records
          .map((r) => ({ name: String(r.get('name')), type: String(r.get('type')), on: r.get('labelsOrTypes'), props: r.get('properties') }))
          .filter((r) => r.name.startsWith(`${namespace.toLowerCase()}_kg_`))
          .sort((x, y) => (x.name < y.name ? -1 : 1))
        const p = namespace.toLowerCase()
        expect(ours).toEqual([
          { name: `${p}_kg_doc_ns_doc`, type: 'RANGE', on: [`${namespace}_KgDoc`], props: ['ns', 'doc'] },
          { name: `${p}_kg_entity_ns`, type: 'RANGE', on: [`${namespace}_KgEntity`], props: ['ns'] },
          { name: `${p}_kg_entity_ns_id`, type: 'RANGE', on: [`${namespace}_KgEntity`], props: ['ns', 'id'] },
          { name: `${p}_kg_entity_ns_keywords`, type: 'FULLTEXT', on: [`${namespace}_KgEntity`], props: ['kw', 'ns', 'type'] },
          { name: `${p}_kg_entity_part_ns_doc`, type: 'RANGE', on: [`${namespace}_KgEntityPart`], props: ['ns', 'doc'] },
          { name: `${p}_kg_entity_part_ns_item`, type: 'RANGE', on: [`${namespace}_KgEntityPart`], props: ['ns', 'item'] },
          { name: `${p}_kg_meta_ns_key`, type: 'RANGE', on: [`${namespace}_KgMeta`], props: ['ns', 'key'] },
          { name: `${p}_kg_relation_ns`, type: 'RANGE', on: [`${namespace}_KG_REL`], props: ['ns'] },
          { name: `${p}_kg_relation_ns_id`, type: 'RANGE', on: [`${namespace}_KG_REL`], props: ['ns', 'id'] },
          { name: `${p}_kg_relation_part_ns_doc`, type: 'RANGE', on: [`${namespace}_KgRelationPart`], props: ['ns', 'doc'] },
          { name: `${p}_kg_relation_part_ns_item`, type: 'RANGE', on: [`${namespace}_KgRelationPart`], props: ['ns', 'item'] }
        ])
      } finally {
        await connection.close()
      }
    } finally {
      await a.close()
      await b.close()
      await dropNamespace(namespace)
    }
  })

  it('refuses a label prefix that is not an identifier', () => {
    const connection = createNeo4jConnection({ uri })
    for (const bad of ['1abc', 'a-b', 'x`) MATCH (n) DETACH DELETE n //', 'a'.repeat(33)]) {
      expect(() => new Neo4jKnowledgeGraphStore({ connection, labelPrefix: bad })).toThrow(/labelPrefix/)
    }
    void connection.close()
  })

  it('upgrades a graph written without namespaces: its nodes join default, single-id constraints become (ns, id) ones', async () => {
    const prefix = freshNamespace()
    const p = prefix.toLowerCase()
    const connection = createNeo4jConnection({ uri, timeoutMs: 30_000 })
    try {
      // the schema and data as the version without namespaces wrote them (its statements, copied here as data)
      await connection.run(`CREATE CONSTRAINT ${p}_kg_entity_id IF NOT EXISTS FOR (e:${prefix}_KgEntity) REQUIRE e.id IS UNIQUE`)
      await connection.run(`CREATE CONSTRAINT ${p}_kg_relation_id IF NOT EXISTS FOR ()-[r:${prefix}_KG_REL]-() REQUIRE r.id IS UNIQUE`)
      await connection.run(`CREATE CONSTRAINT ${p}_kg_meta_key IF NOT EXISTS FOR (m:${prefix}_KgMeta) REQUIRE m.key IS UNIQUE`)
      await connection.run(`CREATE FULLTEXT INDEX ${p}_kg_entity_keywords IF NOT EXISTS FOR (e:${prefix}_KgEntity) ON EACH [e.kw]
        OPTIONS {indexConfig: {\`fulltext.analyzer\`: 'whitespace'}}`)
      await connection.run(
        `CREATE (a:${prefix}_KgEntity {id: 'pku', name: '北京大学', aliases: ['北大'], type: 'org', description: null, source: null,
                  source_chunk_ids: [], name_tokens: ['北京', '京大', '大学'], description_tokens: [], kw: '北京 京大 大学'}),
                (b:${prefix}_KgEntity {id: 'bj', name: '北京', aliases: [], type: 'city', description: null, source: null,
                  source_chunk_ids: [], name_tokens: ['北京'], description_tokens: [], kw: '北京'}),
                (a)-[:${prefix}_KG_REL {id: 'r1', type: '位于', description: null, weight: 1}]->(b),
                (:${prefix}_KgMeta {key: 'kg', version: 7, epoch: 'old-epoch'})`
      )
      const store = new Neo4jKnowledgeGraphStore({ connection: createNeo4jConnection({ uri, timeoutMs: 30_000 }), labelPrefix: prefix })
      try {
        expect(await store.namespaces()).toEqual(['default'])
        expect(await store.count('default')).toEqual({ entities: 2, relations: 1 })
        expect(await store.names('default')).toEqual([{ id: 'bj', name: '北京', aliases: [] }, { id: 'pku', name: '北京大学', aliases: ['北大'] }])
        expect((await store.neighbourhood('default', ['pku'])).relations.map((r) => r.id)).toEqual(['r1'])
        expect((await store.searchKeywords('default', ['大学'], 5)).map((h) => h.entity.id)).toEqual(['pku'])
        expect(await store.version('default')).toBe('old-epoch:7')
        // the same ids in another namespace, which the old single-id constraints would have refused
        await store.upsert('tenant-a', {
          entities: [{ id: 'pku', name: 'PKU', aliases: [], source_chunk_ids: [] }, { id: 'bj', name: 'BJ', aliases: [], source_chunk_ids: [] }],
          relations: [{ id: 'r1', source: 'pku', target: 'bj', type: 'in', weight: 1 }]
        })
        expect(await store.count('default')).toEqual({ entities: 2, relations: 1 })
        expect(await store.count('tenant-a')).toEqual({ entities: 2, relations: 1 })
        const names = (await connection.run('SHOW CONSTRAINTS YIELD name, properties RETURN name, properties', {}, 'READ')).records
          .map((r) => `${String(r.get('name'))}(${(r.get('properties') as string[]).join(',')})`).filter((n) => n.startsWith(`${p}_`)).sort()
        expect(names).toEqual([`${p}_kg_doc_ns_doc(ns,doc)`, `${p}_kg_entity_ns_id(ns,id)`, `${p}_kg_meta_ns_key(ns,key)`, `${p}_kg_relation_ns_id(ns,id)`])
        const indexes = (await connection.run('SHOW INDEXES YIELD name, type RETURN name, type', {}, 'READ')).records
          .filter((r) => r.get('type') === 'FULLTEXT').map((r) => String(r.get('name'))).filter((n) => n.startsWith(`${p}_`))
        expect(indexes).toEqual([`${p}_kg_entity_ns_keywords`])
      } finally {
        await store.close()
      }
    } finally {
      await connection.close()
      await dropNamespace(prefix)
    }
  })
})

/**
 * The same connection, whose write transactions run each statement under PROFILE while `on` is set and note the
 * most rows any operator of it produced: what a write read, seen from the server.
 */
function profiling(connection: Neo4jConnection, seen: { on: boolean; rows: Array<{ cypher: string; rows: number }> }): Neo4jConnection {
  const most = (plan: ProfiledPlan): number => Math.max(plan.rows, ...plan.children.map(most))
  return {
    get driver() { return connection.driver },
    get database() { return connection.database },
    get timeoutMs() { return connection.timeoutMs },
    run: (...args) => connection.run(...args),
    health: () => connection.health(),
    close: () => connection.close(),
    named: (backend) => profiling(connection.named(backend), seen),
    write: (work) => connection.write((tx) => work(new Proxy(tx, {
      get(target, key) {
        if (key !== 'run' || !seen.on) return Reflect.get(target, key, target) as unknown
        return async (cypher: string, params?: Record<string, unknown>) => {
          const result = await target.run(`PROFILE ${cypher}`, params)
          if (result.summary.profile) seen.rows.push({ cypher, rows: most(result.summary.profile) })
          return result
        }
      }
    }) as ManagedTransaction))
  }
}

describe('Neo4jKnowledgeGraphStore: the derived graph\'s document index', () => {
  const part = (doc: string, chunk: string, count: number, extra: Record<string, string> = {}) =>
    JSON.stringify({ doc_id: doc, chunk_ids: [chunk], count, ...extra })

  it('derives a namespace written before the index (items with derived_docs, no KgDoc records) correctly, and builds the index once', async () => {
    const prefix = freshNamespace()
    const store = makeStore(prefix)
    const connection = createNeo4jConnection({ uri, timeoutMs: 30_000 })
    try {
      await store.init()
      // the derived graph as the version before the index wrote it (its properties, copied here as data): doc-a and
      // doc-b share 鉴权中间件; 平台组 and 负责 are doc-a's alone, redis and 使用 doc-b's
      await connection.run(
        `CREATE (x:${prefix}_KgEntity {ns: 'ns1', id: 'd:鉴权中间件', name: '鉴权中间件', aliases: [], source_chunk_ids: ['a#0', 'b#0'],
                  name_tokens: [], description_tokens: [], kw: '', derived_docs: ['doc-a', 'doc-b'],
                  derived_json: '[' + $ax + ',' + $bx + ']'}),
                (p:${prefix}_KgEntity {ns: 'ns1', id: 'd:平台组', name: '平台组', aliases: [], source_chunk_ids: ['a#0'],
                  name_tokens: [], description_tokens: [], kw: '', derived_docs: ['doc-a'], derived_json: '[' + $ap + ']'}),
                (r:${prefix}_KgEntity {ns: 'ns1', id: 'd:redis', name: 'Redis', type: '术语', aliases: [], source_chunk_ids: ['b#1'],
                  name_tokens: [], description_tokens: [], kw: '', derived_docs: ['doc-b'], derived_json: '[' + $br + ']'}),
                (p)-[:${prefix}_KG_REL {ns: 'ns1', id: 'd:平台组-[负责]->d:鉴权中间件', type: '负责', weight: 2,
                  derived_docs: ['doc-a'], derived_json: '[' + $arel + ']'}]->(x),
                (x)-[:${prefix}_KG_REL {ns: 'ns1', id: 'd:鉴权中间件-[使用]->d:redis', type: '使用', weight: 1,
                  derived_docs: ['doc-b'], derived_json: '[' + $brel + ']'}]->(r),
                (:${prefix}_KgMeta {ns: 'ns1', key: 'kg', version: 3, epoch: 'old'})`,
        {
          ax: part('doc-a', 'a#0', 2, { name: '鉴权中间件' }), bx: part('doc-b', 'b#0', 1, { name: '鉴权中间件' }),
          ap: part('doc-a', 'a#0', 1, { name: '平台组' }), br: part('doc-b', 'b#1', 1, { name: 'Redis', type: '术语' }),
          arel: part('doc-a', 'a#0', 2), brel: part('doc-b', 'b#1', 1)
        }
      )
      const docs = async () => (await connection.run(
        `MATCH (d:${prefix}_KgDoc {ns: 'ns1'}) RETURN d.doc AS doc, d.entities AS entities, d.relations AS relations ORDER BY doc`, {}, 'READ'
      )).records.map((r) => ({ doc: r.get('doc') as string, entities: (r.get('entities') as string[]).sort(), relations: (r.get('relations') as string[]).sort() }))
      // before any derived write, derivedOf reads the old format as it is
      expect((await store.derivedOf('ns1', ['doc-b'])).entities.map((e) => e.id)).toEqual(['d:redis', 'd:鉴权中间件'])
      expect(await docs()).toEqual([])

      // doc-a goes: 平台组 and 负责 with it, 鉴权中间件 keeps doc-b's part
      expect(await store.replaceDerived('ns1', new Map([['doc-a', { entities: [], relations: [] }]])))
        .toEqual({ written: { entities: 1, relations: 0 }, removed: { entities: 1, relations: 1 }, blocked: [], entityIds: ['d:平台组', 'd:鉴权中间件'] })
      expect(await store.count('ns1')).toEqual({ entities: 2, relations: 1 })
      const left = await store.derivedOf('ns1', ['doc-b'])
      expect(left.entities.map((e) => [e.id, e.derived_from?.map((p) => p.doc_id)])).toEqual([['d:redis', ['doc-b']], ['d:鉴权中间件', ['doc-b']]])
      expect(left.relations.map((r) => r.id)).toEqual(['d:鉴权中间件-[使用]->d:redis'])
      // the index was built from the items, doc-b's record only
      expect(await docs()).toEqual([{ doc: 'doc-b', entities: ['d:redis', 'd:鉴权中间件'], relations: ['d:鉴权中间件-[使用]->d:redis'] }])

      // doc-b now names Redis only, as before: 鉴权中间件 and 使用 go, found through doc-b's record
      const redisOnly: KgContribution = { entities: [{ key: 'redis', name: 'Redis', type: '术语', chunk_ids: ['b#1'], mentions: 1 }], relations: [] }
      expect(await store.replaceDerived('ns1', new Map([['doc-b', redisOnly]])))
        .toEqual({ written: { entities: 0, relations: 0 }, removed: { entities: 1, relations: 1 }, blocked: [], entityIds: ['d:鉴权中间件'] })
      expect(await store.count('ns1')).toEqual({ entities: 1, relations: 0 })
      expect(await docs()).toEqual([{ doc: 'doc-b', entities: ['d:redis'], relations: [] }])
      expect(await store.version('ns1')).toBe('old:5')
    } finally {
      await store.close()
      await connection.close()
      await dropNamespace(prefix)
    }
  })

  it('a derived write finds its documents\' items through their KgDoc records, not by a scan of every derived item\'s documents', async () => {
    const prefix = freshNamespace()
    const seen = { on: false, rows: [] as Array<{ cypher: string; rows: number }> }
    const store = new Neo4jKnowledgeGraphStore({
      connection: profiling(createNeo4jConnection({ uri, timeoutMs: 30_000 }), seen), labelPrefix: prefix
    })
    try {
      // 300 other documents, each with an entity of its own and one shared with all, and a relation between them, stored
      // before the first derived write, so that the store's statements are planned over a populated graph (planned over
      // empty labels, Neo4j may pick scans and keep them until it plans again)
      const part = (i: number, name?: string) => ({ doc_id: `other-${i}`, chunk_ids: [`o${i}#0`], count: 1, ...(name ? { name } : {}) })
      const others = Array.from({ length: 300 }, (_, i) => i)
      const entity = (id: string, name: string, parts: object[], docs: string[]) =>
        ({ ns: 'ns1', id, name, aliases: [], source_chunk_ids: docs.map((d) => d.replace('other-', 'o') + '#0'), name_tokens: [], description_tokens: [], kw: '',
           derived_docs: docs, derived_json: JSON.stringify(parts) })
      const connection = createNeo4jConnection({ uri, timeoutMs: 30_000 })
      try {
        await store.init()
        await connection.run(`UNWIND $rows AS row CREATE (e:${prefix}_KgEntity) SET e = row`, {
          rows: [
            ...others.map((i) => entity(`d:e${i}`, `e${i}`, [part(i, `e${i}`)], [`other-${i}`])),
            entity('d:shared', 'shared', others.map((i) => part(i, 'shared')), others.map((i) => `other-${i}`))
          ]
        })
        await connection.run(
          `UNWIND $rows AS row MATCH (a:${prefix}_KgEntity {ns: 'ns1', id: row.source}), (b:${prefix}_KgEntity {ns: 'ns1', id: 'd:shared'})
           CREATE (a)-[r:${prefix}_KG_REL]->(b) SET r = row.props`,
          { rows: others.map((i) => ({ source: `d:e${i}`, props: {
            ns: 'ns1', id: `d:e${i}-[in]->d:shared`, type: 'in', weight: 1, derived_docs: [`other-${i}`], derived_json: JSON.stringify([part(i)])
          } })) }
        )
      } finally {
        await connection.close()
      }
      const docA = (chunk: string): KgContribution => ({
        entities: [{ key: 'a', name: 'a', chunk_ids: [chunk], mentions: 1 }, { key: 'b', name: 'b', chunk_ids: [chunk], mentions: 1 }],
        relations: [{ source: 'a', target: 'b', type: 'to', chunk_ids: [chunk], count: 1 }]
      })
      await store.replaceDerived('ns1', new Map([['doc-a', docA('a#0')]]))
      expect(await store.count('ns1')).toEqual({ entities: 303, relations: 301 })

      seen.on = true
      expect(await store.replaceDerived('ns1', new Map([['doc-a', docA('a#1')]])))
        .toEqual({ written: { entities: 2, relations: 1 }, removed: { entities: 0, relations: 0 }, blocked: [], entityIds: ['d:a', 'd:b'] })
      seen.on = false
      // The statements profiled are those of the document index (KgDoc), and none of them the old scan of every derived
      // item's `derived_docs`. How many rows each passes is the planner's choice and is not asserted: in a whole-suite
      // run on a shared server the (ns, id) lookups were planned as index scans (606 and 301 rows for 303 entities and
      // 301 relations) although they are seeks when the file runs alone (docs/derivation.md, "Not done yet").
      expect(seen.rows.length).toBeGreaterThan(0)
      expect(seen.rows.some((s) => s.cypher.includes('_KgDoc'))).toBe(true)
      expect(seen.rows.filter((s) => s.cypher.includes('any(d IN e.derived_docs') && !s.cypher.includes('_KgDoc'))).toEqual([])
      const again = await store.derivedOf('ns1', ['doc-a'])
      expect(again.entities.map((e) => [e.id, e.source_chunk_ids])).toEqual([['d:a', ['a#1']], ['d:b', ['a#1']]])
      expect(again.relations.map((r) => [r.id, r.source, r.target, r.weight])).toEqual([['d:a-[to]->d:b', 'd:a', 'd:b', 1]])
    } finally {
      await store.close()
      await dropNamespace(prefix)
    }
  })
})

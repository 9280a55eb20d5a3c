import { randomBytes } from 'node:crypto'
import { afterAll, describe, expect, inject, it } from 'vitest'
import { createNeo4jConnection } from '../../src/providers/neo4j/connection.js'
import { Neo4jKnowledgeGraphStore } from '../../src/providers/knowledge-graph/neo4j.js'
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
          { name: `${p}_kg_entity_ns`, type: 'RANGE', on: [`${namespace}_KgEntity`], props: ['ns'] },
          { name: `${p}_kg_entity_ns_id`, type: 'RANGE', on: [`${namespace}_KgEntity`], props: ['ns', 'id'] },
          { name: `${p}_kg_entity_ns_keywords`, type: 'FULLTEXT', on: [`${namespace}_KgEntity`], props: ['kw', 'ns', 'type'] },
          { name: `${p}_kg_meta_ns_key`, type: 'RANGE', on: [`${namespace}_KgMeta`], props: ['ns', 'key'] },
          { name: `${p}_kg_relation_ns`, type: 'RANGE', on: [`${namespace}_KG_REL`], props: ['ns'] },
          { name: `${p}_kg_relation_ns_id`, type: 'RANGE', on: [`${namespace}_KG_REL`], props: ['ns', 'id'] }
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
        expect(names).toEqual([`${p}_kg_entity_ns_id(ns,id)`, `${p}_kg_meta_ns_key(ns,key)`, `${p}_kg_relation_ns_id(ns,id)`])
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

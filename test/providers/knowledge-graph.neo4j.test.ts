import { randomBytes } from 'node:crypto'
import { afterAll, describe, expect, inject, it } from 'vitest'
import { createNeo4jConnection } from '../../src/providers/neo4j/connection.js'
import { Neo4jKnowledgeGraphStore } from '../../src/providers/knowledge-graph/neo4j.js'
import { describeKnowledgeGraphStoreContract } from '../contracts/knowledge-graph.contract.js'

const uri = inject('neo4jUri')

/** A namespace no other test file or run uses, so files run in parallel against one server. */
const freshNamespace = () => `T${randomBytes(6).toString('hex')}`

const makeStore = (namespace: string) =>
  new Neo4jKnowledgeGraphStore({ connection: createNeo4jConnection({ uri, timeoutMs: 10_000 }), namespace })

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
  it('creates its constraints and full-text index idempotently, under its namespace', async () => {
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
          { name: `${p}_kg_entity_id`, type: 'RANGE', on: [`${namespace}_KgEntity`], props: ['id'] },
          { name: `${p}_kg_entity_keywords`, type: 'FULLTEXT', on: [`${namespace}_KgEntity`], props: ['kw'] },
          { name: `${p}_kg_meta_key`, type: 'RANGE', on: [`${namespace}_KgMeta`], props: ['key'] },
          { name: `${p}_kg_relation_id`, type: 'RANGE', on: [`${namespace}_KG_REL`], props: ['id'] }
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

  it('refuses a namespace that is not an identifier', () => {
    const connection = createNeo4jConnection({ uri })
    for (const bad of ['', '1abc', 'a-b', 'x`) MATCH (n) DETACH DELETE n //', 'a'.repeat(33)]) {
      if (bad === '') continue
      expect(() => new Neo4jKnowledgeGraphStore({ connection, namespace: bad })).toThrow(/namespace/)
    }
    void connection.close()
  })
})

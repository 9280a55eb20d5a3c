/** A small knowledge graph whose expected lookups are worked out by hand in the tests. */
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll } from 'vitest'
import { createNeo4jConnection } from '../../../src/providers/neo4j/connection.js'
import { EmbeddedKnowledgeGraphStore } from '../../../src/providers/knowledge-graph/embedded.js'
import { Neo4jKnowledgeGraphStore } from '../../../src/providers/knowledge-graph/neo4j.js'
import type { KnowledgeGraphStore } from '../../../src/providers/knowledge-graph/port.js'
import type { GraphIngestBody } from '../../../src/corpus/graph.js'
import { ingestGraph } from '../../helpers/turns.js'

export const UNIVERSITIES: GraphIngestBody = {
  entities: [
    { id: 'pku', name: '北京大学', aliases: ['北大'], type: 'organization', description: '位于北京的综合性大学', source: 'docs/pku.md', source_chunk_ids: ['pku#0', 'pku#3'] },
    { id: 'bj', name: '北京', type: 'city', description: '中国首都' },
    { id: 'thu', name: '清华大学', aliases: ['清华'], description: '位于北京的理工科大学' },
    { id: 'hd', name: '海淀区', description: '北京市的一个区' },
    { id: 'sh', name: '上海', description: '直辖市' },
    { id: 'fd', name: '复旦大学', description: '位于上海的大学' }
  ],
  relations: [
    { id: 'r1', source: 'pku', target: 'bj', type: 'located_in', description: '校址', weight: 1 },
    { id: 'r2', source: 'pku', target: 'hd', type: 'located_in', weight: 0.8 },
    { id: 'r3', source: 'thu', target: 'hd', type: 'located_in', weight: 0.8 },
    { id: 'r4', source: 'pku', target: 'thu', type: 'rival_of', description: '竞争', weight: 0.5 },
    { id: 'r5', source: 'fd', target: 'sh', type: 'located_in', weight: 1 },
    { id: 'r6', source: 'hd', target: 'bj', type: 'part_of', weight: 1 }
  ]
}

export interface StoreMaker {
  name: string
  make(): Promise<{ store: KnowledgeGraphStore; drop(): Promise<void> }>
}

/** The two implementations; Neo4j stores get a fresh namespace each and drop it afterwards. */
export function storeMakers(neo4jUri: string): StoreMaker[] {
  return [
    { name: 'embedded', make: async () => ({ store: new EmbeddedKnowledgeGraphStore(), drop: async () => {} }) },
    {
      name: 'neo4j',
      make: async () => {
        const namespace = `G${randomBytes(6).toString('hex')}`
        const store = new Neo4jKnowledgeGraphStore({ connection: createNeo4jConnection({ uri: neo4jUri, timeoutMs: 10_000 }), labelPrefix: namespace })
        return {
          store,
          drop: async () => {
            const c = createNeo4jConnection({ uri: neo4jUri, timeoutMs: 30_000 })
            try {
              await c.run(`MATCH (n:${namespace}_KgEntity) DETACH DELETE n`)
              await c.run(`MATCH (n:${namespace}_KgMeta) DELETE n`)
              for (const label of ['KgDoc', 'KgEntityPart', 'KgRelationPart']) await c.run(`MATCH (n:${namespace}_${label}) DELETE n`)
              const p = `${namespace.toLowerCase()}_kg_`
              for (const kind of ['CONSTRAINTS', 'INDEXES']) {
                const shown = await c.run(`SHOW ${kind} YIELD name RETURN name`, {}, 'READ')
                for (const name of shown.records.map((r) => String(r.get('name'))).filter((n) => n.startsWith(p))) {
                  await c.run(`DROP ${kind === 'CONSTRAINTS' ? 'CONSTRAINT' : 'INDEX'} ${name} IF EXISTS`)
                }
              }
            } finally {
              await c.close()
            }
          }
        }
      }
    }
  ]
}

/**
 * The store `maker` makes, holding `graph` in `default`, for the tests of the enclosing describe: made and filled
 * before them, closed and dropped after them. The function answers it once made.
 */
export function storeHolding(maker: StoreMaker, graph: GraphIngestBody): () => KnowledgeGraphStore {
  let made: { store: KnowledgeGraphStore; drop(): Promise<void> } | undefined
  beforeAll(async () => {
    made = await maker.make()
    await ingestGraph(made.store, 'default', graph)
  })
  afterAll(async () => {
    await made?.store.close()
    await made?.drop()
  })
  return () => made!.store
}

import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, inject, it } from 'vitest'
import { createKnowledgeGraphStore, type KnowledgeGraphStoreOptions } from '../../src/providers/knowledge-graph/index.js'

describe('createKnowledgeGraphStore', () => {
  it('memory: the embedded store, persisted under the given directory', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'recall-kg-factory-'))
    try {
      const store = createKnowledgeGraphStore({ backend: 'memory', dir })
      expect(store.backend).toBe('memory')
      await store.upsert('default', { entities: [{ id: 'a', name: 'A', aliases: [], source_chunk_ids: [] }] })
      expect((await readdir(dir)).sort()).toEqual(['knowledge-graph.log', 'knowledge-graph.snap'])
      await store.close()
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('neo4j: the Neo4j store over the given URI', async () => {
    const store = createKnowledgeGraphStore({ backend: 'neo4j', neo4j: { uri: inject('neo4jUri'), timeoutMs: 10_000 }, labelPrefix: 'FactoryCheck' })
    try {
      expect(store.backend).toBe('neo4j')
      expect(await store.health()).toMatchObject({ backend: 'knowledge-graph:neo4j', ok: true })
    } finally {
      await store.close()
    }
  })

  it('an unknown backend is refused', () => {
    expect(() => createKnowledgeGraphStore({ backend: 'sqlite' } as unknown as KnowledgeGraphStoreOptions)).toThrow(/unknown graph backend: "sqlite"/)
  })
})

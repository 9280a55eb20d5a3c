import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { EmbeddedKnowledgeGraphStore } from '../../src/providers/knowledge-graph/embedded.js'
import { describeKnowledgeGraphStoreContract } from '../contracts/knowledge-graph.contract.js'

describeKnowledgeGraphStoreContract('embedded, persisted', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'recall-kg-'))
  return {
    store: new EmbeddedKnowledgeGraphStore({ dir }),
    reopen: async () => new EmbeddedKnowledgeGraphStore({ dir }),
    cleanup: () => rm(dir, { recursive: true, force: true })
  }
})

describeKnowledgeGraphStoreContract('embedded, in memory only', async () => ({ store: new EmbeddedKnowledgeGraphStore() }))

describe('EmbeddedKnowledgeGraphStore persistence', () => {
  it('leaves exactly one file and no temporary files behind', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'recall-kg-'))
    try {
      const store = new EmbeddedKnowledgeGraphStore({ dir })
      await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          store.upsert('default', { entities: [{ id: `e${i}`, name: `n${i}`, aliases: [], source_chunk_ids: [] }] })
        )
      )
      expect(await readdir(dir)).toEqual(['knowledge-graph.json'])
      const again = new EmbeddedKnowledgeGraphStore({ dir })
      expect(await again.count('default')).toEqual({ entities: 20, relations: 0 })
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})

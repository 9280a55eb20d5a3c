import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { EmbeddedKnowledgeGraphStore } from '../../src/providers/knowledge-graph/embedded.js'
import { ThreadedKnowledgeGraphStore } from '../../src/providers/knowledge-graph/threaded.js'
import { describeKnowledgeGraphStoreContract } from '../contracts/knowledge-graph.contract.js'

describeKnowledgeGraphStoreContract('embedded in a thread, persisted', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'recall-kg-thread-'))
  return {
    store: new ThreadedKnowledgeGraphStore({ dir }),
    reopen: async () => new ThreadedKnowledgeGraphStore({ dir }),
    cleanup: () => rm(dir, { recursive: true, force: true })
  }
})

describeKnowledgeGraphStoreContract('embedded in a thread, persisted, folding as it goes', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'recall-kg-thread-'))
  const store = new ThreadedKnowledgeGraphStore({ dir, compactionFloorBytes: 0 })
  return {
    store,
    reopen: async () => {
      await store.close()
      return new ThreadedKnowledgeGraphStore({ dir })
    },
    cleanup: () => rm(dir, { recursive: true, force: true })
  }
})

describeKnowledgeGraphStoreContract('embedded in a thread, in memory only', async () => ({ store: new ThreadedKnowledgeGraphStore() }))

describe('ThreadedKnowledgeGraphStore', () => {
  it('reads the files the store in the event loop wrote, and its writes are read back there', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'recall-kg-thread-'))
    try {
      const plain = new EmbeddedKnowledgeGraphStore({ dir })
      await plain.upsert('default', { entities: [{ id: 'zhang', name: '张三', aliases: ['老张'], source_chunk_ids: ['d#0'] }] })
      await plain.close()
      const threaded = new ThreadedKnowledgeGraphStore({ dir })
      expect(await threaded.getEntities('default', ['zhang'])).toEqual([{ id: 'zhang', name: '张三', aliases: ['老张'], source_chunk_ids: ['d#0'] }])
      await threaded.upsert('default', {
        entities: [{ id: 'li', name: '李四', aliases: [], source_chunk_ids: [] }],
        relations: [{ id: 'zhang-[knows]->li', source: 'zhang', target: 'li', type: 'knows', weight: 1 }]
      })
      await threaded.close()
      const again = new EmbeddedKnowledgeGraphStore({ dir })
      expect((await again.neighbourhood('default', ['zhang'])).relations.map((r) => r.id)).toEqual(['zhang-[knows]->li'])
      await again.close()
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})

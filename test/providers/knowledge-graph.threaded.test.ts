import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { foldRuns, type FoldRun } from '../../src/providers/embedded/fold-client.js'
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

  it('its folds run in its thread: their counters are read through threadCounters, not this thread\'s', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'recall-kg-thread-'))
    try {
      const here = foldRuns.length
      const store = new ThreadedKnowledgeGraphStore({ dir, compactionFloorBytes: 0 })
      for (let i = 0; i < 3; i++) await store.upsert('default', { entities: [{ id: `e${i}`, name: `实体${i}`, aliases: [], source_chunk_ids: [] }] })
      await store.close()
      const again = new ThreadedKnowledgeGraphStore({ dir, compactionFloorBytes: 0 })
      await again.upsert('default', { entities: [{ id: 'e3', name: '实体3', aliases: [], source_chunk_ids: [] }] })
      // the write's fold runs in the background: its run is counted once it is done
      const runs: FoldRun[] = []
      let counters = await again.threadCounters(true)
      for (let i = 0; i < 200 && counters.foldRuns.length === 0; i++) {
        await new Promise((resolve) => setTimeout(resolve, 25))
        counters = await again.threadCounters(true)
      }
      runs.push(...counters.foldRuns)
      expect(runs.map((run) => run.kind)).toEqual(['knowledge-graph'])
      expect(counters.compactionWaits).toMatchObject({ totalMs: expect.any(Number), maxMs: expect.any(Number), tasks: expect.any(Number) })
      // taken: the next call answers only the folds run since
      expect((await again.threadCounters(true)).foldRuns).toEqual([])
      expect(foldRuns.length).toBe(here)
      await again.close()
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})

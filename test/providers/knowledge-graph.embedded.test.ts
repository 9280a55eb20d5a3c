import { mkdir, mkdtemp, readdir, rename, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { EmbeddedKnowledgeGraphStore } from '../../src/providers/knowledge-graph/embedded.js'
import { BackendUnavailableError } from '../../src/providers/errors.js'
import { describeKnowledgeGraphStoreContract } from '../contracts/knowledge-graph.contract.js'

describeKnowledgeGraphStoreContract('embedded, persisted', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'recall-kg-'))
  return {
    store: new EmbeddedKnowledgeGraphStore({ dir }),
    reopen: async () => new EmbeddedKnowledgeGraphStore({ dir }),
    cleanup: () => rm(dir, { recursive: true, force: true })
  }
})

// every write that outgrows the snapshot folds it: a reopened store reads compact snapshots (format 2) and the records after
// them; the first store is closed first, so that its last fold is in place
describeKnowledgeGraphStoreContract('embedded, persisted, folding as it goes', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'recall-kg-'))
  const store = new EmbeddedKnowledgeGraphStore({ dir, compactionFloorBytes: 0 })
  return {
    store,
    reopen: async () => {
      await store.close()
      return new EmbeddedKnowledgeGraphStore({ dir })
    },
    cleanup: () => rm(dir, { recursive: true, force: true })
  }
})

describeKnowledgeGraphStoreContract('embedded, in memory only', async () => ({ store: new EmbeddedKnowledgeGraphStore() }))

describe('EmbeddedKnowledgeGraphStore persistence', () => {
  it('leaves exactly its snapshot and log and no temporary files behind', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'recall-kg-'))
    try {
      const store = new EmbeddedKnowledgeGraphStore({ dir })
      await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          store.upsert('default', { entities: [{ id: `e${i}`, name: `n${i}`, aliases: [], source_chunk_ids: [] }] })
        )
      )
      expect((await readdir(dir)).sort()).toEqual(['knowledge-graph.log', 'knowledge-graph.snap'])
      const again = new EmbeddedKnowledgeGraphStore({ dir })
      expect(await again.count('default')).toEqual({ entities: 20, relations: 0 })
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('upgrades the one-JSON-file format in place at open, in default and in another namespace', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'recall-kg-'))
    try {
      // the files a version before the store kernel wrote (format 1, sorted by id)
      const legacy = {
        format: 1,
        entities: [
          { id: 'li', name: '李四', aliases: ['小李'], type: 'person', source_chunk_ids: ['d#0'] },
          { id: 'zhang', name: '张三', aliases: [], source_chunk_ids: [] }
        ],
        relations: [{ id: 'zhang-[knows]->li', source: 'zhang', target: 'li', type: 'knows', weight: 1 }]
      }
      await writeFile(join(dir, 'knowledge-graph.json'), JSON.stringify(legacy))
      await mkdir(join(dir, 'namespaces', 'tenant'), { recursive: true })
      await writeFile(join(dir, 'namespaces', 'tenant', 'knowledge-graph.json'), JSON.stringify({ format: 1, entities: [legacy.entities[1]], relations: [] }))

      const store = new EmbeddedKnowledgeGraphStore({ dir })
      expect(await store.count('default')).toEqual({ entities: 2, relations: 1 })
      expect(await store.getEntities('default', ['li'])).toEqual([legacy.entities[0]])
      expect(await store.count('tenant')).toEqual({ entities: 1, relations: 0 })
      expect((await readdir(dir)).sort()).toEqual(['knowledge-graph.log', 'knowledge-graph.snap', 'namespaces'])
      expect((await readdir(join(dir, 'namespaces', 'tenant'))).sort()).toEqual(['knowledge-graph.log', 'knowledge-graph.snap'])
      await store.upsert('default', { entities: [{ id: 'wang', name: '王五', aliases: [], source_chunk_ids: [] }] })
      await store.close()

      const again = new EmbeddedKnowledgeGraphStore({ dir })
      expect(await again.count('default')).toEqual({ entities: 3, relations: 1 })
      expect((await again.neighbourhood('default', ['li'])).relations.map((r) => r.id)).toEqual(['zhang-[knows]->li'])
      expect(await again.namespaces()).toEqual(['default', 'tenant'])
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('replays deletes and compacts: the state after 300 writes survives reopening, with the log folded into the snapshot', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'recall-kg-'))
    try {
      const store = new EmbeddedKnowledgeGraphStore({ dir, compactionFloorBytes: 0 })
      for (let i = 0; i < 300; i++) {
        await store.upsert('default', {
          entities: [{ id: `e${i}`, name: `n${i}`, aliases: [], source_chunk_ids: [] }],
          ...(i > 0 ? { relations: [{ id: `r${i}`, source: `e${i}`, target: 'e0', type: 'hub', weight: 1 }] } : {})
        })
        // every third entity goes again, with the relations that touch it
        if (i % 3 === 2) expect(await store.deleteEntity('default', `e${i}`)).toBe(true)
      }
      await store.close()
      // compaction runs off the write queue, so the last fold may have covered only the first writes; one more write
      // (e0 again, unchanged) after a reopen folds the whole log, and close waits for that fold
      const reopened = new EmbeddedKnowledgeGraphStore({ dir, compactionFloorBytes: 0 })
      await reopened.upsert('default', { entities: [{ id: 'e0', name: 'n0', aliases: [], source_chunk_ids: [] }] })
      await reopened.close()
      // the snapshot holds the entities (an empty one is its header and 16 bytes)
      expect((await stat(join(dir, 'knowledge-graph.snap'))).size).toBeGreaterThan(1000)
      const again = new EmbeddedKnowledgeGraphStore({ dir })
      // 300 entities, the 100 with i % 3 = 2 deleted; r_i (i = 1..299) joins e_i to e0 and goes with e_i: 299 - 100
      expect(await again.count('default')).toEqual({ entities: 200, relations: 199 })
      expect((await again.getEntities('default', ['e2', 'e3', 'e4'])).map((e) => e.id)).toEqual(['e3', 'e4'])
      expect((await again.neighbourhood('default', ['e4'])).relations.map((r) => r.id)).toEqual(['r4'])
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('a write that cannot be logged answers BackendUnavailableError (503) and changes nothing', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'recall-kg-'))
    try {
      const store = new EmbeddedKnowledgeGraphStore({ dir })
      await store.upsert('default', { entities: [{ id: 'a', name: 'A', aliases: [], source_chunk_ids: [] }] })
      const log = join(dir, 'knowledge-graph.log')
      await rename(log, `${log}.aside`)
      await mkdir(log)
      await expect(store.upsert('default', { entities: [{ id: 'b', name: 'B', aliases: [], source_chunk_ids: [] }] })).rejects.toBeInstanceOf(BackendUnavailableError)
      await expect(store.deleteEntity('default', 'a')).rejects.toBeInstanceOf(BackendUnavailableError)
      expect(await store.count('default')).toEqual({ entities: 1, relations: 0 })
      await rm(log, { recursive: true })
      await rename(`${log}.aside`, log)
      await store.upsert('default', { entities: [{ id: 'b', name: 'B', aliases: [], source_chunk_ids: [] }] })
      expect((await new EmbeddedKnowledgeGraphStore({ dir }).names('default')).map((e) => e.id)).toEqual(['a', 'b'])
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})

describe('EmbeddedKnowledgeGraphStore derived writes', () => {
  const cites = (doc: string, extra: string[] = []) => ({
    entities: ['中国', ...extra].map((key) => ({ key, name: key, chunk_ids: [`${doc}#0`], mentions: 1 })),
    relations: extra.map((key) => ({ source: '中国', target: key, type: 'co_occurs', chunk_ids: [`${doc}#0`], count: 1 }))
  })

  it('logs a write as its own documents\' parts, not every document citing the entities it touches, and replays them', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'recall-kg-'))
    try {
      const store = new EmbeddedKnowledgeGraphStore({ dir, compactionFloorBytes: 1e12 })
      // 300 documents cite 中国: stored whole, its parts alone are over 15 kB
      for (let batch = 0; batch < 6; batch++) {
        await store.replaceDerived('default', new Map(Array.from({ length: 50 }, (_, i) => [`doc-${batch * 50 + i}`, cites(`doc-${batch * 50 + i}`)] as const)))
      }
      const [china] = await store.getEntities('default', ['d:中国'])
      expect(china!.derived_from).toHaveLength(300)
      expect(JSON.stringify(china).length).toBeGreaterThan(15_000)
      const log = join(dir, 'knowledge-graph.log')
      const before = (await stat(log)).size
      await store.replaceDerived('default', new Map([['doc-new', cites('doc-new', ['长城'])]]))
      // one document's parts of two entities and one relation, with the record's framing
      expect((await stat(log)).size - before).toBeLessThan(1_500)

      // a replaced and a removed document, then the state read back from the log alone
      await store.replaceDerived('default', new Map([['doc-7', cites('doc-7', ['黄河'])], ['doc-8', { entities: [], relations: [] }]]))
      const ids = ['d:中国', 'd:长城', 'd:黄河']
      const state = { entities: await store.getEntities('default', ids), around: await store.derivedOf('default', ['doc-7', 'doc-new', 'doc-8']) }
      expect(state.entities.find((e) => e.id === 'd:中国')!.derived_from!.map((p) => p.doc_id)).toHaveLength(300)
      expect(state.entities.find((e) => e.id === 'd:中国')!.derived_from!.some((p) => p.doc_id === 'doc-8')).toBe(false)
      await store.close()
      const again = new EmbeddedKnowledgeGraphStore({ dir })
      expect({ entities: await again.getEntities('default', ids), around: await again.derivedOf('default', ['doc-7', 'doc-new', 'doc-8']) }).toEqual(state)
      await again.close()
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})

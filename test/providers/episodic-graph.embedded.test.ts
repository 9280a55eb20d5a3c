import { mkdir, mkdtemp, readdir, rename, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { EmbeddedEpisodicGraphStore } from '../../src/providers/episodic-graph/embedded.js'
import { BackendUnavailableError, UnexpectedResponseError } from '../../src/providers/errors.js'
import { describeEpisodicGraphStoreContract } from '../contracts/episodic-graph.contract.js'

const dirs: string[] = []
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true })
})

describeEpisodicGraphStoreContract('embedded, in memory', async () => new EmbeddedEpisodicGraphStore())
describeEpisodicGraphStoreContract('embedded, persisted', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'episodic-graph-'))
  dirs.push(dir)
  return new EmbeddedEpisodicGraphStore({ file: join(dir, 'graph.json') })
})

describe('EmbeddedEpisodicGraphStore persistence', () => {
  it('a new store on the same file sees the earlier writes', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'episodic-graph-'))
    dirs.push(dir)
    const file = join(dir, 'graph.json')
    const a = new EmbeddedEpisodicGraphStore({ file })
    await a.apply('default', {
      entities: [{ id: 'N1', type: 'Entity', name: 'API' }],
      episodes: [{ episode: { id: 'E1', type: 'Episode', name: 'e', summary: 's' }, nodes: [],
        edges: [{ from: 'E1', to: 'N1', relationship_name: 'involves_entity', edge_text: 'API' }] }]
    })
    await a.close()
    const b = new EmbeddedEpisodicGraphStore({ file })
    expect([...(await b.describe('default', ['N1'])).nodes.keys()].sort()).toEqual(['E1', 'N1'])
  })

  it('a change that cannot be written leaves memory as it was, in a namespace that existed or not', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'episodic-graph-'))
    dirs.push(dir)
    const file = join(dir, 'graph.json')
    const store = new EmbeddedEpisodicGraphStore({ file })
    const entity = { id: 'N1', type: 'Entity' as const, name: 'API' }
    const episode = (id: string, summary: string) => ({
      episode: { id, type: 'Episode' as const, name: 'e', summary }, nodes: [],
      edges: [{ from: id, to: 'N1', relationship_name: 'involves_entity', edge_text: 'API' }]
    })
    await store.apply('default', { entities: [entity], episodes: [episode('E1', 'first')] })
    // A directory where the log is makes the write fail; the log itself is kept aside meanwhile.
    const log = join(dir, 'graph.log')
    await rename(log, `${log}.aside`)
    await mkdir(log)
    const failed = store.apply('default', { episodes: [episode('E1', 'second'), episode('E2', 'new')] })
    await expect(failed).rejects.toBeInstanceOf(BackendUnavailableError)
    await expect(failed).rejects.toThrow(/cannot append to graph/)
    await expect(store.apply('default', { deleteEpisodeIds: ['E1'] })).rejects.toThrow(/cannot append to graph/)
    expect(await store.countByType('default')).toEqual({ Episode: 1, Entity: 1 })
    expect((await store.describe('default', ['E1'])).nodes.get('E1')).toMatchObject({ summary: 'first' })
    expect([...(await store.describe('default', ['N1'])).nodes.keys()].sort()).toEqual(['E1', 'N1'])

    // A directory where a new namespace's log is created makes its first write fail.
    await mkdir(join(dir, 'namespaces', 'other', 'graph.log.tmp'), { recursive: true })
    await expect(store.apply('other', { entities: [entity], episodes: [episode('E1', 'first')] })).rejects.toThrow(/cannot append to graph/)
    expect(await store.namespaces()).toEqual(['default'])
    expect(await store.countByType('other')).toEqual({})

    await rm(log, { recursive: true })
    await rename(`${log}.aside`, log)
    await store.apply('default', { episodes: [episode('E1', 'second')] })
    expect((await store.describe('default', ['E1'])).nodes.get('E1')).toMatchObject({ summary: 'second' })
    await store.close()
    const reopened = new EmbeddedEpisodicGraphStore({ file })
    expect(await reopened.countByType('default')).toEqual({ Episode: 1, Entity: 1 })
    expect((await reopened.describe('default', ['E1'])).nodes.get('E1')).toMatchObject({ summary: 'second' })
    expect(await reopened.namespaces()).toEqual(['default'])
  })

  it('upgrades the JSON snapshot format in place at first use, in default and in another namespace', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'episodic-graph-'))
    dirs.push(dir)
    const file = join(dir, 'graph.json')
    // what the store wrote before the kernel: one JSON document per namespace, rewritten on every change
    const legacy = {
      version: 1,
      entities: [{ id: 'N1', type: 'Entity', name: 'API' }],
      episodes: [{
        episode: { id: 'E1', type: 'Episode', name: 'e', summary: 'old summary' },
        nodes: [{ id: 'F1', type: 'Facet', search_text: 'deploy', anchor_text: 'a deploy' }],
        edges: [
          { from: 'E1', to: 'F1', relationship_name: 'has_facet', edge_text: 'deploy' },
          { from: 'E1', to: 'N1', relationship_name: 'involves_entity', edge_text: 'API' }
        ]
      }]
    }
    await writeFile(file, JSON.stringify(legacy))
    await mkdir(join(dir, 'namespaces', 'tenant'), { recursive: true })
    await writeFile(join(dir, 'namespaces', 'tenant', 'graph.json'), JSON.stringify({ version: 1, entities: legacy.entities, episodes: [] }))

    const store = new EmbeddedEpisodicGraphStore({ file })
    expect(await store.countByType('default')).toEqual({ Episode: 1, Facet: 1, Entity: 1 })
    expect(await store.facetLabelEpisodes('default', ['deploy'])).toEqual(new Map([['deploy', ['E1']]]))
    expect(await store.countByType('tenant')).toEqual({ Entity: 1 })
    expect((await readdir(dir)).sort()).toEqual(['graph.log', 'graph.snap', 'namespaces'])
    expect((await readdir(join(dir, 'namespaces', 'tenant'))).sort()).toEqual(['graph.log', 'graph.snap'])
    await store.apply('default', { deleteEpisodeIds: ['E1'], entities: [{ id: 'N2', type: 'Entity', name: 'DB' }] })
    await store.close()

    const again = new EmbeddedEpisodicGraphStore({ file })
    // E1 went with its facet; N1 lost its last edge and went with it; N2 was written
    expect(await again.countByType('default')).toEqual({ Entity: 1 })
    expect(await again.nodeTypes('default', ['N1', 'N2'])).toEqual(new Map([['N2', 'Entity']]))
    expect(await again.namespaces()).toEqual(['default', 'tenant'])
  })

  it('one write is one log record: the state after 400 writes and deletes survives reopening, compacted on the way', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'episodic-graph-'))
    dirs.push(dir)
    const file = join(dir, 'graph.json')
    const store = new EmbeddedEpisodicGraphStore({ file, compactionFloorBytes: 0 })
    await store.apply('default', { entities: [{ id: 'N', type: 'Entity', name: 'hub' }] })
    for (let i = 0; i < 400; i++) {
      await store.apply('default', {
        episodes: [{ episode: { id: `E${i}`, type: 'Episode', name: `e${i}`, summary: `s${i}` }, nodes: [],
          edges: [{ from: `E${i}`, to: 'N', relationship_name: 'involves_entity', edge_text: 'hub' }] }]
      })
      if (i % 4 === 3) await store.apply('default', { deleteEpisodeIds: [`E${i}`] })
    }
    await store.close()
    // compaction runs off the write queue, so the last fold may have covered only the first writes; one more write
    // (the hub again, unchanged) after a reopen folds the whole log, and close waits for that fold
    const reopened = new EmbeddedEpisodicGraphStore({ file, compactionFloorBytes: 0 })
    await reopened.apply('default', { entities: [{ id: 'N', type: 'Entity', name: 'hub' }] })
    await reopened.close()
    expect((await stat(join(dir, 'graph.snap'))).size).toBeGreaterThan(1000)
    const again = new EmbeddedEpisodicGraphStore({ file })
    // 400 Episodes, every fourth deleted, and the hub entity they share
    expect(await again.countByType('default')).toEqual({ Episode: 300, Entity: 1 })
    expect(await again.nodeTypes('default', ['E2', 'E3', 'E4'])).toEqual(new Map([['E2', 'Episode'], ['E4', 'Episode']]))
  })

  it('gives back every text as written, whatever its characters (evidence is held as UTF-8 when that is smaller)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'episodic-graph-'))
    dirs.push(dir)
    const file = join(dir, 'graph.json')
    const texts = ['[{"chunk_id":"d#0","heading_path":["资料"],"nodes":["d:ep:d/f1"]}]', '资料资料', 'plain ascii', 'lone \ud800 surrogate 资料', '😀 astral 资料', '']
    const episodes = texts.map((text, i) => ({
      episode: { id: `d:ep:t${i}`, type: 'Episode', name: text, summary: text, evidence: text }, nodes: [{ id: `d:ep:t${i}/f1`, type: 'Facet', search_text: text, evidence: text }],
      edges: [{ from: `d:ep:t${i}`, to: `d:ep:t${i}/f1`, relationship_name: 'has_facet' }]
    }))
    const store = new EmbeddedEpisodicGraphStore({ file })
    await store.apply('default', { episodes })
    const read = async (s: EmbeddedEpisodicGraphStore) => {
      for (const [i, text] of texts.entries()) {
        const f = await s.describe('default', [`d:ep:t${i}`])
        expect(f.nodes.get(`d:ep:t${i}`)).toEqual({ id: `d:ep:t${i}`, type: 'Episode', name: text, summary: text, evidence: text })
        expect(f.nodes.get(`d:ep:t${i}/f1`)?.evidence).toBe(text)
      }
    }
    await read(store)
    await store.close()
    await read(new EmbeddedEpisodicGraphStore({ file }))
  })

  it('gives back points\' texts held as parts of their facet\'s anchor exactly, at the anchor\'s start, middle and end', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'episodic-graph-'))
    dirs.push(dir)
    const file = join(dir, 'graph.json')
    const sentences = ['乍都节公园位于泰国的首都曼谷的乍都节县。', '1975年由泰国国家铁路局捐献土地建筑成公园。', '它的面积约为0.304平方公里，公园开放。']
    const anchor = `# 资料\n\n${sentences.join('')}`
    // the first sentence also in the second facet's anchor at another place; a short one (kept whole); one not in it
    const texts = [...sentences, '资料', 'not a sentence of the anchor at all']
    const other = `前言。${sentences[0]}`
    const graph = {
      episode: { id: 'd:ep:a', type: 'Episode', name: 'a', summary: sentences[1] },
      nodes: [
        { id: 'd:ep:a/f1', type: 'Facet', name: '资料 > 一', search_text: '资料 > 一', anchor_text: anchor },
        ...texts.map((t, i) => ({ id: `d:ep:a/f1/p${i}`, type: 'FacetPoint', name: t, search_text: t })),
        { id: 'd:ep:a/f2', type: 'Facet', name: '资料 > 二', search_text: '资料 > 二', anchor_text: other },
        { id: 'd:ep:a/f2/p1', type: 'FacetPoint', name: sentences[0]!, search_text: sentences[0]! }
      ],
      edges: [
        { from: 'd:ep:a', to: 'd:ep:a/f1', relationship_name: 'has_facet' }, { from: 'd:ep:a', to: 'd:ep:a/f2', relationship_name: 'has_facet' },
        ...texts.map((_, i) => ({ from: 'd:ep:a/f1', to: `d:ep:a/f1/p${i}`, relationship_name: 'has_point' })),
        { from: 'd:ep:a/f2', to: 'd:ep:a/f2/p1', relationship_name: 'has_point' }
      ]
    }
    const store = new EmbeddedEpisodicGraphStore({ file })
    await store.apply('default', { episodes: [graph] })
    const read = async (s: EmbeddedEpisodicGraphStore) => {
      const f = await s.describe('default', ['d:ep:a/f1', 'd:ep:a/f2'])
      for (const [i, t] of texts.entries()) expect(f.nodes.get(`d:ep:a/f1/p${i}`)).toEqual({ id: `d:ep:a/f1/p${i}`, type: 'FacetPoint', name: t, search_text: t })
      expect(f.nodes.get('d:ep:a/f2/p1')).toEqual({ id: 'd:ep:a/f2/p1', type: 'FacetPoint', name: sentences[0], search_text: sentences[0] })
      expect(f.nodes.get('d:ep:a/f1')?.anchor_text).toBe(anchor)
      expect(f.nodes.get('d:ep:a')?.summary).toBe(sentences[1])
    }
    await read(store)
    await store.close()
    await read(new EmbeddedEpisodicGraphStore({ file }))
  })

  it('a snapshot of an unknown format is refused with UnexpectedResponseError, never misread', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'episodic-graph-'))
    dirs.push(dir)
    await writeFile(join(dir, 'graph.snap'), '{"version":2}')
    const store = new EmbeddedEpisodicGraphStore({ file: join(dir, 'graph.json') })
    await expect(store.countByType('default')).rejects.toBeInstanceOf(UnexpectedResponseError)
    await expect(store.countByType('default')).rejects.toThrow(/graph\.snap is refused: not a recall store file/)
  })
})

import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { EmbeddedEpisodicGraphStore } from '../../src/providers/episodic-graph/embedded.js'
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
    // A directory where the snapshot's temporary file goes makes the write fail.
    await mkdir(`${file}.tmp`)
    await expect(store.apply('default', { episodes: [episode('E1', 'second'), episode('E2', 'new')] })).rejects.toThrow(/cannot write/)
    await expect(store.apply('default', { deleteEpisodeIds: ['E1'] })).rejects.toThrow(/cannot write/)
    expect(await store.countByType('default')).toEqual({ Episode: 1, Entity: 1 })
    expect((await store.describe('default', ['E1'])).nodes.get('E1')).toMatchObject({ summary: 'first' })
    expect([...(await store.describe('default', ['N1'])).nodes.keys()].sort()).toEqual(['E1', 'N1'])

    await mkdir(join(dir, 'namespaces', 'other', 'graph.json.tmp'), { recursive: true })
    await expect(store.apply('other', { entities: [entity], episodes: [episode('E1', 'first')] })).rejects.toThrow(/cannot write/)
    expect(await store.namespaces()).toEqual(['default'])
    expect(await store.countByType('other')).toEqual({})

    await rm(`${file}.tmp`, { recursive: true })
    await store.apply('default', { episodes: [episode('E1', 'second')] })
    expect((await store.describe('default', ['E1'])).nodes.get('E1')).toMatchObject({ summary: 'second' })
  })
})

import { mkdtemp, rm } from 'node:fs/promises'
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
})

import { mkdir, mkdtemp, rename, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { foldRuns, type FoldRun } from '../../src/providers/embedded/fold-client.js'
import { EmbeddedEpisodicGraphStore } from '../../src/providers/episodic-graph/embedded.js'
import type { EpisodeGraph } from '../../src/providers/episodic-graph/port.js'
import { ThreadedEpisodicGraphStore } from '../../src/providers/episodic-graph/threaded.js'
import { BackendUnavailableError } from '../../src/providers/errors.js'
import { describeEpisodicGraphStoreContract } from '../contracts/episodic-graph.contract.js'

const dirs: string[] = []
const newDir = async () => {
  const dir = await mkdtemp(join(tmpdir(), 'recall-episodic-thread-'))
  dirs.push(dir)
  return dir
}
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true })
})

describeEpisodicGraphStoreContract('embedded in a thread, persisted', async () => new ThreadedEpisodicGraphStore({ file: join(await newDir(), 'graph.json') }))
describeEpisodicGraphStoreContract('embedded in a thread, persisted, folding as it goes', async () =>
  new ThreadedEpisodicGraphStore({ file: join(await newDir(), 'graph.json'), compactionFloorBytes: 0 }))
describeEpisodicGraphStoreContract('embedded in a thread, in memory only', async () => new ThreadedEpisodicGraphStore())

const episode = (id: string, entity: string, summary = `summary of ${id}`): EpisodeGraph => ({
  episode: { id, type: 'Episode', name: `episode ${id}`, summary },
  nodes: [],
  edges: [{ from: id, to: entity, relationship_name: 'involves_entity', edge_text: entity }]
})

describe('ThreadedEpisodicGraphStore', () => {
  it('reads the files the store in the event loop wrote, and its writes are read back there', async () => {
    const file = join(await newDir(), 'graph.json')
    const plain = new EmbeddedEpisodicGraphStore({ file })
    await plain.apply('default', { entities: [{ id: 'N1', type: 'Entity', name: '张三' }], episodes: [episode('E1', 'N1')] })
    await plain.close()
    const threaded = new ThreadedEpisodicGraphStore({ file })
    const described = await threaded.describe('default', ['N1'])
    expect([...described.nodes.keys()].sort()).toEqual(['E1', 'N1'])
    expect(described.nodes.get('E1')).toMatchObject({ type: 'Episode', summary: 'summary of E1' })
    expect(await threaded.apply('default', { episodes: [episode('E2', 'N1')], deleteEpisodeIds: ['E1'] })).toMatchObject({ deletedEpisodeIds: ['E1'] })
    await threaded.close()
    const again = new EmbeddedEpisodicGraphStore({ file })
    expect(await again.countByType('default')).toEqual({ Episode: 1, Entity: 1 })
    expect((await again.nodeTypes('default', ['E1', 'E2'])).get('E2')).toBe('Episode')
    await again.close()
  })

  it('a write that fails in the thread fails here as its class, and memory there is as it was', async () => {
    const dir = await newDir()
    const store = new ThreadedEpisodicGraphStore({ file: join(dir, 'graph.json') })
    await store.apply('default', { entities: [{ id: 'N1', type: 'Entity', name: 'API' }], episodes: [episode('E1', 'N1', 'first')] })
    // a directory where the log is makes the append fail (as the store's own persistence test does)
    const log = join(dir, 'graph.log')
    await rename(log, `${log}.aside`)
    await mkdir(log)
    const failed = store.apply('default', { episodes: [episode('E1', 'N1', 'second')] })
    await expect(failed).rejects.toBeInstanceOf(BackendUnavailableError)
    await expect(failed).rejects.toThrow(/cannot append to graph/)
    expect((await store.describe('default', ['E1'])).nodes.get('E1')).toMatchObject({ summary: 'first' })
    // an edge to a node nowhere: the partition's own error, by its message
    await expect(store.apply('default', { episodes: [episode('E3', 'N404')] })).rejects.toThrow(/unknown node N404/)
    await rm(log, { recursive: true })
    await rename(`${log}.aside`, log)
    await store.close()
  })

  it('its folds run in its thread: their counters are read through threadCounters, not this thread\'s', async () => {
    const file = join(await newDir(), 'graph.json')
    const here = foldRuns.length
    const store = new ThreadedEpisodicGraphStore({ file, compactionFloorBytes: 0 })
    await store.apply('default', { entities: [{ id: 'N1', type: 'Entity', name: 'API' }] })
    for (let i = 0; i < 3; i++) await store.apply('default', { episodes: [episode(`E${i}`, 'N1')] })
    const runs: FoldRun[] = []
    let counters = await store.threadCounters(true)
    runs.push(...counters.foldRuns)
    for (let i = 0; i < 200 && runs.length === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 25))
      counters = await store.threadCounters(true)
      runs.push(...counters.foldRuns)
    }
    expect(new Set(runs.map((run) => run.kind))).toEqual(new Set(['episodic-graph']))
    expect(counters.compactionWaits).toMatchObject({ totalMs: expect.any(Number), maxMs: expect.any(Number), tasks: expect.any(Number) })
    expect(foldRuns.length).toBe(here)
    await store.close()
    expect(await new EmbeddedEpisodicGraphStore({ file }).countByType('default')).toEqual({ Episode: 3, Entity: 1 })
  })

  it('a closed store ends its thread; health answers without one started', async () => {
    const store = new ThreadedEpisodicGraphStore()
    await store.close()
    const health = await store.health()
    expect(health).toMatchObject({ backend: 'episodic-graph:memory', ok: true })
    await store.close()
  })
})

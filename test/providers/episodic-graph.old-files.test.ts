/**
 * The episodic graph's files as the store wrote them before it kept its graph in columns (0bee96b,
 * test/fixtures/episodic-graph-0bee96b: snapshots and logs of two namespaces, written by that checkout from
 * `changes.json`): this build opens them and gives back every node and edge as written, and folds the same changes
 * into the same snapshot bytes as that checkout did.
 */
import { cp, mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { EmbeddedEpisodicGraphStore, foldEpisodicGraph } from '../../src/providers/episodic-graph/embedded.js'
import type { EpisodeGraph, EpisodicGraphChange, EpisodicNode } from '../../src/providers/episodic-graph/port.js'

const FIXTURE = join(import.meta.dirname, '../fixtures/episodic-graph-0bee96b')
const dirs: string[] = []
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true })
})

const changes = JSON.parse(await readFile(join(FIXTURE, 'changes.json'), 'utf8')) as Array<[string, EpisodicGraphChange]>

/** The Episodes each namespace holds after the changes: the last write of each id, less the deleted ones. */
function episodesAfter(namespace: string): Map<string, EpisodeGraph> {
  const held = new Map<string, EpisodeGraph>()
  for (const [ns, change] of changes) {
    if (ns !== namespace) continue
    for (const id of change.deleteEpisodeIds ?? []) held.delete(id)
    for (const graph of change.episodes ?? []) {
      held.delete(graph.episode.id)
      held.set(graph.episode.id, graph)
    }
  }
  return held
}

const edgeKey = (e: { from: string; to: string; relationship_name: string; edge_text?: string | null; description?: string | null }) =>
  JSON.stringify([e.from, e.to, e.relationship_name, e.edge_text ?? null, e.description ?? null])

describe('episodic graph files written by 0bee96b', () => {
  it('open with every node and edge as written, in both namespaces', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'episodic-old-'))
    dirs.push(dir)
    await cp(join(FIXTURE, 'store'), dir, { recursive: true })
    const store = new EmbeddedEpisodicGraphStore({ file: join(dir, 'graph.json') })
    expect(await store.namespaces()).toEqual(['default', 'tenant'])
    // by hand from changes.json: doc-a rewritten with two facets and one point, doc-b#2 deleted, doc-b#3 added
    expect(await store.countByType('default')).toEqual({ Entity: 2, Episode: 6, Facet: 6, FacetPoint: 3 })
    expect(await store.countByType('tenant')).toEqual({ Entity: 1, Episode: 1, Facet: 1 })
    for (const namespace of ['default', 'tenant']) {
      const episodes = episodesAfter(namespace)
      expect(episodes.size).toBe(namespace === 'default' ? 6 : 1)
      for (const graph of episodes.values()) {
        const ids = [graph.episode.id, ...graph.nodes.map((n) => n.id)]
        const fragment = await store.describe(namespace, ids)
        for (const node of [graph.episode, ...graph.nodes]) expect(fragment.nodes.get(node.id)).toEqual(node)
        const described = new Set(fragment.edges.map(edgeKey))
        for (const edge of graph.edges) expect(described).toContain(edgeKey(edge))
      }
    }
    expect(await store.nodeTypes('default', ['d:ep:doc-b#2', 'd:ep:doc-b#2/f1', 'd:ep:doc-a/f1/p2'])).toEqual(new Map())
    expect(Object.fromEntries(await store.facetLabelEpisodes('default', ['部署手册 > 回滚', '部署手册 > 发布', '长文 > 第1部分', '变更边界', '长文 > 第2部分'])))
      .toEqual({ '部署手册 > 回滚': ['d:ep:doc-a'], '部署手册 > 发布': ['d:ep:doc-a'], '长文 > 第1部分': ['d:ep:doc-b#1'], 变更边界: ['E1'] })
    expect(await store.episodesInTimeRange('default', { start_ms: 0 })).toEqual(['E1', 'd:ep:conversation/chat/s1'])
    // the imported facet's edge to doc-a's point, which the rewrite wrote again
    const point = await store.describe('default', ['d:ep:doc-a/f1/p1'])
    expect([...point.nodes.keys()].sort()).toEqual(['F1', 'd:ep:doc-a/f1', 'd:ep:doc-a/f1/p1'])
    expect((await store.describe('tenant', ['d:kafka'])).nodes.get('d:kafka')).toEqual({ id: 'd:kafka', type: 'Entity', name: 'kafka in tenant' })

    // a write on top, folded and opened again
    await store.apply('default', { deleteEpisodeIds: ['E1'] })
    await store.close()
    const again = new EmbeddedEpisodicGraphStore({ file: join(dir, 'graph.json') })
    expect(await again.countByType('default')).toEqual({ Entity: 2, Episode: 5, Facet: 5, FacetPoint: 2 })
    await again.close()
  })

  it('folds the same changes into the snapshot bytes 0bee96b wrote', async () => {
    const records = changes.filter(([namespace]) => namespace === 'default').map(([, change]) => Buffer.from(JSON.stringify(change), 'utf8'))
    const expected = await readFile(join(FIXTURE, 'folded-default.json'))
    expect(Buffer.from(foldEpisodicGraph(undefined, records)).equals(expected)).toBe(true)
    const folded = JSON.parse(expected.toString('utf8')) as { episodes: Array<{ episode: EpisodicNode }> }
    expect(folded.episodes.map((e) => e.episode.id)).toEqual([...episodesAfter('default').keys()])
  })
})

import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { EpisodeGraph, EpisodicGraphStore, EpisodicNode, GraphFragment, ProjectionRequest } from '../../src/providers/episodic-graph/port.js'

/**
 * The conformance suite of `EpisodicGraphStore` (src/providers/episodic-graph/port.ts): one `it` per
 * promise of the port. `make` returns a store; the suite works in namespaces of its own (the database may
 * be shared with other test files) and drops them at the end.
 */
export function describeEpisodicGraphStoreContract(name: string, make: () => Promise<EpisodicGraphStore>): void {
  describe(`EpisodicGraphStore contract: ${name}`, () => {
    const NS = `c-${randomUUID().slice(0, 8)}`
    const OTHER = `${NS}-b`
    let store: EpisodicGraphStore
    beforeAll(async () => {
      store = await make()
    })
    afterAll(async () => {
      await store?.dropNamespace(NS)
      await store?.dropNamespace(OTHER)
      await store?.close()
    })

    const entity = (id: string, name: string): EpisodicNode => ({ id, type: 'Entity', name })
    const episode = (id: string, facets: string[], entities: string[], extra: Partial<EpisodicNode> = {}): EpisodeGraph => ({
      episode: { id, type: 'Episode', name: `episode ${id}`, summary: `summary of ${id}`, ...extra },
      nodes: facets.flatMap((f) => [
        { id: f, type: 'Facet', name: f, search_text: f },
        { id: `${f}.p`, type: 'FacetPoint', name: `${f} point`, search_text: `${f} point` }
      ]),
      edges: [
        ...facets.flatMap((f) => [
          { from: id, to: f, relationship_name: 'has_facet', edge_text: `${f}` },
          { from: f, to: `${f}.p`, relationship_name: 'has_point', edge_text: `${f} -> ${f} point` }
        ]),
        ...entities.map((n) => ({ from: id, to: n, relationship_name: 'involves_entity', edge_text: `${n} | shared` }))
      ]
    })

    const times = { mentioned_time_start_ms: 1_683_417_600_000, mentioned_time_end_ms: 1_683_504_000_000, mentioned_time_confidence: 0.9, created_at: 1_683_540_000_000 }

    /** A scoring projection request: `best` gives best_by_id, relevant ids in its order. */
    const request = (best: Record<string, number>, maxIds: number, extra: Partial<ProjectionRequest> = {}): ProjectionRequest => ({
      relevant_ids: Object.keys(best).filter((id) => !(extra.episode_hit_ids ?? []).includes(id)),
      best_by_id: new Map(Object.entries(best)), max_ids: maxIds, episode_hit_ids: [], ...extra
    })
    const rels = (f: GraphFragment) => f.edges.map((e) => `${e.from}|${e.relationship_name}|${e.relationship_type}|${e.to}`).sort()

    it('writes episodes, facets, points, entities and edges that describe returns with every property', async () => {
      await store.apply(NS, {
        entities: [entity('c.N1', 'API'), entity('c.N2', 'Kafka')],
        episodes: [episode('c.E1', ['c.F1'], ['c.N1'], times), episode('c.E2', ['c.F2'], ['c.N1', 'c.N2'])]
      })
      const f = await store.describe(NS, ['c.E1'])
      expect([...f.nodes.keys()].sort()).toEqual(['c.E1', 'c.F1', 'c.N1'])
      expect(f.nodes.get('c.E1')).toMatchObject({ type: 'Episode', name: 'episode c.E1', summary: 'summary of c.E1', ...times })
      expect(f.nodes.get('c.F1')).toMatchObject({ type: 'Facet', name: 'c.F1', search_text: 'c.F1' })
      expect(f.nodes.get('c.N1')).toMatchObject({ type: 'Entity', name: 'API' })
      expect(f.edges.map((e) => `${e.from}|${e.relationship_name}|${e.relationship_type}|${e.to}|${e.edge_text}`).sort())
        .toEqual(['c.E1|has_facet|has_facet|c.F1|c.F1', 'c.E1|involves_entity|involves_entity|c.N1|c.N1 | shared'])
    })

    it('describes edges in either direction, each once, and skips unknown ids', async () => {
      const f = await store.describe(NS, ['c.F1.p', 'c.F1', 'nope'])
      expect([...f.nodes.keys()].sort()).toEqual(['c.E1', 'c.F1', 'c.F1.p'])
      expect(f.edges.map((e) => e.relationship_name).sort()).toEqual(['has_facet', 'has_point'])
      expect([...(await store.describe(NS, ['c.N1'])).nodes.keys()].sort()).toEqual(['c.E1', 'c.E2', 'c.N1'])
      expect((await store.describe(NS, [])).nodes.size).toBe(0)
    })

    it('projects two phases: a point reaches its Episode through its facet, with what the scorer reads', async () => {
      const f = await store.project(NS, request({ 'c.F1.p': 0 }, 2))
      expect([...f.nodes.keys()].sort()).toEqual(['c.E1', 'c.F1', 'c.F1.p'])
      expect(rels(f)).toEqual(['c.E1|has_facet|has_facet|c.F1', 'c.F1|has_point|has_point|c.F1.p'])
      expect(f.nodes.get('c.E1')).toMatchObject({ id: 'c.E1', type: 'Episode', ...times })
      expect(f.nodes.get('c.F1')).toMatchObject({ id: 'c.F1', type: 'Facet' })
      // A cap of one target leaves no room for phase 2.
      expect([...(await store.project(NS, request({ 'c.F1.p': 0 }, 1))).nodes.keys()].sort()).toEqual(['c.F1', 'c.F1.p'])
    })

    it('takes phase-2 neighbours by type priority, then best score, then id, up to the cap', async () => {
      // N1's neighbours are the Episodes c.E1 (unhit) and c.E2 (0.5): room for one, c.E2 goes first.
      const f = await store.project(NS, request({ 'c.N1': 0, 'c.E2': 0.5 }, 3, { relevant_ids: ['c.N1', 'c.E9x'] }))
      expect([...f.nodes.keys()].sort()).toEqual(['c.E1', 'c.E2', 'c.F2', 'c.N1', 'c.N2'])
      expect(rels(f)).toEqual(['c.E1|involves_entity|involves_entity|c.N1', 'c.E2|has_facet|has_facet|c.F2',
        'c.E2|involves_entity|involves_entity|c.N1', 'c.E2|involves_entity|involves_entity|c.N2'])
    })

    it('keeps an Episode hit that neither phase reaches as a bare node (difference 5)', async () => {
      const f = await store.project(NS, request({ 'c.F1': 0, 'c.E2': 0.3 }, 1, { episode_hit_ids: ['c.E2', 'c.E1'] }))
      expect([...f.nodes.keys()].sort()).toEqual(['c.E1', 'c.E2', 'c.F1', 'c.F1.p'])
      expect(rels(f)).toEqual(['c.E1|has_facet|has_facet|c.F1', 'c.F1|has_point|has_point|c.F1.p'])
    })

    it('given the retrieved labels, sends the text of those edges; any other edge keeps its text or is marked withheld', async () => {
      const f = await store.project(NS, request({ 'c.E1': 0 }, 1, { retrieved_labels: new Set(['c.F1', 'not an edge']) }))
      const byRel = new Map(f.edges.map((e) => [e.relationship_name, e]))
      expect(byRel.get('has_facet')).toMatchObject({ edge_text: 'c.F1' })
      expect(byRel.get('has_facet')?.label_withheld ?? false).toBe(false)
      const other = byRel.get('involves_entity')!
      expect(other.label_withheld ? other.edge_text ?? null : other.edge_text).toBe(other.label_withheld ? null : 'c.N1 | shared')
    })

    it('stores an entity link\'s own description (difference 7) and replaces it when the Episode is re-written', async () => {
      const linked = (description?: string): EpisodeGraph => ({
        episode: { id: 'c.D1', type: 'Episode', name: 'd', summary: 'd' }, nodes: [],
        edges: [{ from: 'c.D1', to: 'c.N2', relationship_name: 'involves_entity', edge_text: `Kafka | ${description ?? ''}`, ...(description ? { description } : {}) }]
      })
      const link = async () => (await store.describe(NS, ['c.D1'])).edges.find((e) => e.to === 'c.N2')
      await store.apply(NS, { episodes: [linked('双写期间的消费来源')] })
      expect(await link()).toMatchObject({ relationship_name: 'involves_entity', description: '双写期间的消费来源', edge_text: 'Kafka | 双写期间的消费来源' })
      await store.apply(NS, { episodes: [linked('迁移后的唯一消息总线')] })
      expect((await link())?.description).toBe('迁移后的唯一消息总线')
      await store.apply(NS, { episodes: [linked()] })
      expect((await link())?.description ?? null).toBeNull()
      await store.apply(NS, { deleteEpisodeIds: ['c.D1'] })
    })

    it('lists the Episodes that own a facet label', async () => {
      await store.apply(NS, { episodes: [episode('c.L1', ['c.LF1'], []), episode('c.L2', ['c.LF2'], [])].map((ep) => ({
        ...ep, nodes: ep.nodes.map((n) => (n.type === 'Facet' ? { ...n, search_text: '结果' } : n))
      })) })
      const owners = await store.facetLabelEpisodes(NS, ['结果', 'c.F1', 'nobody has this'])
      expect(Object.fromEntries(owners)).toEqual({ 结果: ['c.L1', 'c.L2'], 'c.F1': ['c.E1'] })
      await store.apply(NS, { deleteEpisodeIds: ['c.L1', 'c.L2'] })
      expect(await store.facetLabelEpisodes(NS, ['结果'])).toEqual(new Map())
      expect(await store.facetLabelEpisodes(NS, [])).toEqual(new Map())
    })

    it('returns a known node without edges, and nothing for no relevant id', async () => {
      await store.apply(NS, { episodes: [{ episode: { id: 'c.E9', type: 'Episode', name: 'lonely', summary: 'alone' }, nodes: [], edges: [] }] })
      const f = await store.project(NS, request({ 'c.E9': 0 }, 2))
      expect([...f.nodes.keys()]).toEqual(['c.E9'])
      expect(f.edges).toEqual([])
      expect([...(await store.describe(NS, ['c.E9'])).nodes.keys()]).toEqual(['c.E9'])
      expect((await store.project(NS, request({}, 2))).nodes.size).toBe(0)
    })

    it('reports the type of known ids only', async () => {
      const types = await store.nodeTypes(NS, ['c.E1', 'c.F1', 'c.F1.p', 'c.N2', 'missing'])
      expect(Object.fromEntries(types)).toEqual({ 'c.E1': 'Episode', 'c.F1': 'Facet', 'c.F1.p': 'FacetPoint', 'c.N2': 'Entity' })
    })

    it('re-writing an episode replaces its facets, points and edges', async () => {
      const result = await store.apply(NS, { episodes: [episode('c.E1', ['c.F3'], ['c.N2'])] })
      expect(result.deletedEpisodeIds).toEqual([])
      expect(result.removedNodeIds).toEqual(['c.F1', 'c.F1.p'])
      expect(result.unusedLabels).toEqual(['c.F1', 'c.F1 -> c.F1 point'])
      // c.N1 is still used by c.E2, so it stays.
      expect(result.removedEntityIds).toEqual([])
      const f = await store.describe(NS, ['c.E1'])
      expect([...f.nodes.keys()].sort()).toEqual(['c.E1', 'c.F3', 'c.N2'])
      expect((await store.nodeTypes(NS, ['c.F1', 'c.N1'])).has('c.F1')).toBe(false)
    })

    it('deleting an episode removes its own nodes and keeps entities another episode uses', async () => {
      const result = await store.apply(NS, { deleteEpisodeIds: ['c.E2'] })
      expect(result.deletedEpisodeIds).toEqual(['c.E2'])
      expect(result.removedNodeIds).toEqual(['c.F2', 'c.F2.p'])
      // c.N1 lost its last edge (c.E1 now links c.N2 only); c.N2 is still used by c.E1.
      expect(result.removedEntityIds).toEqual(['c.N1'])
      expect(result.unusedLabels).toEqual(['c.F2', 'c.F2 -> c.F2 point', 'c.N1 | shared'])
      const types = await store.nodeTypes(NS, ['c.E2', 'c.F2', 'c.N1', 'c.N2'])
      expect([...types.keys()]).toEqual(['c.N2'])
      expect([...(await store.describe(NS, ['c.N2'])).nodes.keys()].sort()).toEqual(['c.E1', 'c.N2'])
    })

    it('deleting an unknown episode is not an error and changes nothing', async () => {
      const before = await store.countByType(NS)
      const result = await store.apply(NS, { deleteEpisodeIds: ['never-there'] })
      expect(result).toEqual({ deletedEpisodeIds: [], removedNodeIds: [], removedEntityIds: [], unusedLabels: [] })
      expect(await store.countByType(NS)).toEqual(before)
    })

    it('a change with an edge to an unknown node fails and writes nothing', async () => {
      const before = await store.countByType(NS)
      await expect(store.apply(NS, { episodes: [episode('c.E5', ['c.F5'], ['c.N404'])] })).rejects.toThrow()
      expect(await store.countByType(NS)).toEqual(before)
      expect((await store.nodeTypes(NS, ['c.E5'])).size).toBe(0)
    })

    it('counts nodes by type', async () => {
      expect(await store.countByType(NS)).toEqual({ Episode: 2, Facet: 1, FacetPoint: 1, Entity: 1 })
    })

    it('keeps namespaces apart: the same ids in two, a change in one, every read in the other', async () => {
      const graphIn = (summary: string): EpisodeGraph => ({
        ...episode('c.E1', ['c.F1'], ['c.N1'], times), episode: { id: 'c.E1', type: 'Episode', name: 'e', summary, ...times }
      })
      await store.apply(OTHER, { entities: [entity('c.N1', 'API in b')], episodes: [graphIn('summary in b')] })
      // this suite's namespace holds c.E1 (re-written above with c.F3), c.N1 is gone from it (deleted with c.E2)
      expect((await store.describe(OTHER, ['c.N1'])).nodes.get('c.N1')).toMatchObject({ name: 'API in b' })
      expect((await store.describe(OTHER, ['c.E1'])).nodes.get('c.E1')).toMatchObject({ summary: 'summary in b' })
      expect((await store.describe(NS, ['c.E1'])).nodes.get('c.E1')).toMatchObject({ summary: 'summary of c.E1' })
      expect(Object.fromEntries(await store.nodeTypes(NS, ['c.N1', 'c.F1', 'c.F3']))).toEqual({ 'c.F3': 'Facet' })
      expect(Object.fromEntries(await store.nodeTypes(OTHER, ['c.N1', 'c.F1', 'c.F3']))).toEqual({ 'c.N1': 'Entity', 'c.F1': 'Facet' })
      // a projection starts from the namespace's nodes and stays in it
      const projected = await store.project(OTHER, request({ 'c.F1.p': 0 }, 4))
      expect([...projected.nodes.keys()].sort()).toEqual(['c.E1', 'c.F1', 'c.F1.p'])
      expect((await store.project(NS, request({ 'c.F1.p': 0 }, 4))).nodes.size).toBe(0)
      expect(Object.fromEntries(await store.facetLabelEpisodes(OTHER, ['c.F1', 'c.F3']))).toEqual({ 'c.F1': ['c.E1'] })
      const before = await store.countByType(NS)
      await store.apply(OTHER, { deleteEpisodeIds: ['c.E1'] })
      expect(await store.countByType(NS)).toEqual(before)
      expect((await store.describe(NS, ['c.E1'])).nodes.has('c.E1')).toBe(true)
      expect(await store.countByType(OTHER)).toEqual({})
    })

    it('an edge joins nodes of its own namespace only', async () => {
      await store.apply(OTHER, { entities: [entity('c.only-in-b', 'B')] })
      await expect(store.apply(NS, { episodes: [episode('c.E7', [], ['c.only-in-b'])] })).rejects.toThrow()
      expect((await store.nodeTypes(NS, ['c.E7', 'c.only-in-b'])).size).toBe(0)
    })

    it('lists the Episodes whose mentioned time overlaps a range, closed at both ends', async () => {
      const day = 86_400_000
      const at = (id: string, start?: number, end?: number): EpisodeGraph => ({
        episode: { id, type: 'Episode', name: id, summary: id, ...(start !== undefined ? { mentioned_time_start_ms: start } : {}), ...(end !== undefined ? { mentioned_time_end_ms: end } : {}) },
        nodes: [], edges: []
      })
      await store.apply(OTHER, { episodes: [at('t.a', 10 * day, 12 * day), at('t.b', 20 * day), at('t.c', undefined, 30 * day), at('t.none')] })
      // t.a spans days 10-12; t.b is the instant day 20; t.c the instant day 30; t.none has no time
      expect(await store.episodesInTimeRange(OTHER, { start_ms: 12 * day, end_ms: 20 * day })).toEqual(['t.a', 't.b'])
      expect(await store.episodesInTimeRange(OTHER, { start_ms: 12 * day + 1, end_ms: 20 * day - 1 })).toEqual([])
      expect(await store.episodesInTimeRange(OTHER, { start_ms: 11 * day })).toEqual(['t.a', 't.b', 't.c'])
      expect(await store.episodesInTimeRange(OTHER, { end_ms: 10 * day })).toEqual(['t.a'])
      expect(await store.episodesInTimeRange(NS, { end_ms: 10 * day })).toEqual([])
      await store.apply(OTHER, { deleteEpisodeIds: ['t.a', 't.b', 't.c', 't.none'] })
    })

    it('lists namespaces that hold nodes; dropNamespace removes one wholly and nothing of another', async () => {
      await store.apply(OTHER, { entities: [entity('c.N1', 'API in b')], episodes: [episode('c.E1', ['c.F1'], ['c.N1'])] })
      const listed = await store.namespaces()
      expect(listed).toContain(NS)
      expect(listed).toContain(OTHER)
      const before = await store.countByType(NS)
      await store.dropNamespace(OTHER)
      expect(await store.namespaces()).not.toContain(OTHER)
      expect(await store.countByType(OTHER)).toEqual({})
      expect((await store.describe(OTHER, ['c.E1', 'c.N1'])).nodes.size).toBe(0)
      expect(await store.countByType(NS)).toEqual(before)
      await expect(store.dropNamespace('never-written')).resolves.toBeUndefined()
    })

    it('reads of a namespace that holds nothing give nothing', async () => {
      expect(await store.countByType('ghost-ns')).toEqual({})
      expect((await store.describe('ghost-ns', ['c.E1'])).nodes.size).toBe(0)
      expect((await store.project('ghost-ns', request({ 'c.E1': 0 }, 2))).nodes.size).toBe(0)
      expect(await store.namespaces()).not.toContain('ghost-ns')
    })

    it('keeps Episodes whose ids nest, nodes named under their Episode or not, and an edge across Episodes apart through rewrites', async () => {
      const ns = `${NS}-nest`
      const facet = (id: string, text: string): EpisodicNode => ({ id, type: 'Facet', name: text, search_text: text, anchor_text: `anchor of ${id}` })
      const point = (id: string): EpisodicNode => ({ id, type: 'FacetPoint', name: `point ${id}`, search_text: `point ${id}` })
      const p = (facets: EpisodicNode[], edges: EpisodeGraph['edges']): EpisodeGraph => ({ episode: { id: 'p', type: 'Episode', name: 'p', summary: 'outer' }, nodes: facets, edges })
      try {
        await store.apply(ns, {
          entities: [entity('n/1', 'N')],
          episodes: [
            p([facet('p/f1', '标签'), point('p/f1/p1')], [
              { from: 'p', to: 'p/f1', relationship_name: 'has_facet' },
              { from: 'p/f1', to: 'p/f1/p1', relationship_name: 'has_point' },
              { from: 'p', to: 'n/1', relationship_name: 'involves_entity', edge_text: 'N | outer', description: 'outer' }
            ]),
            { episode: { id: 'q', type: 'Episode', name: 'q', summary: 'loose' }, nodes: [facet('loose-1', 'other')], edges: [{ from: 'q', to: 'loose-1', relationship_name: 'has_facet' }] }
          ]
        })
        // written after p, under p's id: its facet shares p's label and links p's point
        await store.apply(ns, {
          episodes: [{
            episode: { id: 'p/s1', type: 'Episode', name: 'p/s1', summary: 'inner' }, nodes: [facet('p/s1/f1', '标签')],
            edges: [
              { from: 'p/s1', to: 'p/s1/f1', relationship_name: 'has_facet' },
              { from: 'p/s1/f1', to: 'p/f1/p1', relationship_name: 'has_point', edge_text: 'across' },
              { from: 'p/s1', to: 'n/1', relationship_name: 'involves_entity', edge_text: 'N' }
            ]
          }]
        })
        const edgesOf = (f: GraphFragment) => f.edges.map((e) => `${e.from}|${e.relationship_name}|${e.to}|${e.edge_text ?? ''}|${e.description ?? ''}`).sort()
        expect(Object.fromEntries(await store.nodeTypes(ns, ['p', 'p/s1', 'p/f1', 'p/f1/p1', 'p/s1/f1', 'loose-1', 'n/1', 'p/f2', 'p/s1/f1/x', 'q/loose-1'])))
          .toEqual({ p: 'Episode', 'p/s1': 'Episode', 'p/f1': 'Facet', 'p/f1/p1': 'FacetPoint', 'p/s1/f1': 'Facet', 'loose-1': 'Facet', 'n/1': 'Entity' })
        const atPoint = await store.describe(ns, ['p/f1/p1'])
        expect([...atPoint.nodes.keys()].sort()).toEqual(['p/f1', 'p/f1/p1', 'p/s1/f1'])
        expect(atPoint.nodes.get('p/s1/f1')).toMatchObject({ type: 'Facet', name: '标签', search_text: '标签', anchor_text: 'anchor of p/s1/f1' })
        expect(edgesOf(atPoint)).toEqual(['p/f1|has_point|p/f1/p1||', 'p/s1/f1|has_point|p/f1/p1|across|'])
        const atEntity = await store.describe(ns, ['n/1'])
        expect([...atEntity.nodes.keys()].sort()).toEqual(['n/1', 'p', 'p/s1'])
        expect(edgesOf(atEntity)).toEqual(['p/s1|involves_entity|n/1|N|', 'p|involves_entity|n/1|N | outer|outer'])
        expect([...(await store.describe(ns, ['loose-1'])).nodes.keys()].sort()).toEqual(['loose-1', 'q'])
        expect(Object.fromEntries(await store.facetLabelEpisodes(ns, ['标签', 'other']))).toEqual({ 标签: ['p', 'p/s1'], other: ['q'] })

        // p again, without its facet: the edge across now leads nowhere, p/s1 keeps its own
        const rewritten = await store.apply(ns, { episodes: [p([facet('p/f2', '另一个')], [
          { from: 'p', to: 'p/f2', relationship_name: 'has_facet' }, { from: 'p', to: 'n/1', relationship_name: 'involves_entity', edge_text: 'N' }
        ])] })
        expect(rewritten).toMatchObject({ deletedEpisodeIds: [], removedNodeIds: ['p/f1', 'p/f1/p1'], removedEntityIds: [] })
        const inner = await store.describe(ns, ['p/s1/f1'])
        expect([...inner.nodes.keys()].sort()).toEqual(['p/s1', 'p/s1/f1'])
        expect(edgesOf(inner)).toEqual(['p/s1|has_facet|p/s1/f1||'])
        expect(Object.fromEntries(await store.facetLabelEpisodes(ns, ['标签', '另一个']))).toEqual({ 标签: ['p/s1'], 另一个: ['p'] })
        expect(edgesOf(await store.describe(ns, ['n/1']))).toEqual(['p/s1|involves_entity|n/1|N|', 'p|involves_entity|n/1|N|'])

        expect(await store.apply(ns, { deleteEpisodeIds: ['p/s1'] })).toMatchObject({ deletedEpisodeIds: ['p/s1'], removedNodeIds: ['p/s1/f1'], removedEntityIds: [] })
        expect(await store.apply(ns, { deleteEpisodeIds: ['p', 'q'] })).toMatchObject({ deletedEpisodeIds: ['p', 'q'], removedNodeIds: ['loose-1', 'p/f2'], removedEntityIds: ['n/1'] })
        expect(await store.countByType(ns)).toEqual({})
      } finally {
        await store.dropNamespace(ns)
      }
    })

    it('an Episode written twice in one change is its last version alone, nothing of the earlier one left', async () => {
      const ns = `${NS}-twice`
      try {
        await store.apply(ns, { entities: [entity('t.N1', 'one'), entity('t.N2', 'two')], episodes: [episode('t.E', ['t.F1'], ['t.N1'])] })
        // the earlier version links t.N1 (which the stored one did too) and owns t.F2; the last links t.N2 and owns t.F3
        const result = await store.apply(ns, { episodes: [episode('t.E', ['t.F2'], ['t.N1']), episode('t.E', ['t.F3'], ['t.N2'])] })
        // what a change holding the last version alone leaves: the stored version's nodes and labels go, and t.N1 (its
        // last edge was the stored version's, and this change does not write it)
        expect(result).toEqual({
          deletedEpisodeIds: [], removedNodeIds: ['t.F1', 't.F1.p'], removedEntityIds: ['t.N1'],
          unusedLabels: ['t.F1', 't.F1 -> t.F1 point', 't.N1 | shared']
        })
        expect((await store.describe(ns, ['t.N1'])).nodes.size).toBe(0)
        const atN2 = await store.describe(ns, ['t.N2'])
        expect([...atN2.nodes.keys()].sort()).toEqual(['t.E', 't.N2'])
        expect(rels(atN2)).toEqual(['t.E|involves_entity|involves_entity|t.N2'])
        const atE = await store.describe(ns, ['t.E'])
        expect([...atE.nodes.keys()].sort()).toEqual(['t.E', 't.F3', 't.N2'])
        expect(rels(atE)).toEqual(['t.E|has_facet|has_facet|t.F3', 't.E|involves_entity|involves_entity|t.N2'])
        expect(Object.fromEntries(await store.nodeTypes(ns, ['t.F1', 't.F2', 't.F2.p', 't.F3', 't.N1']))).toEqual({ 't.F3': 'Facet' })
        expect(Object.fromEntries(await store.facetLabelEpisodes(ns, ['t.F1', 't.F2', 't.F3']))).toEqual({ 't.F3': ['t.E'] })
        expect(await store.countByType(ns)).toEqual({ Episode: 1, Facet: 1, FacetPoint: 1, Entity: 1 })
        // the earlier version's edge answers no projection either
        expect((await store.project(ns, request({ 't.F2.p': 0, 't.N1': 0 }, 4))).nodes.size).toBe(0)
        // and deleting the Episode leaves nothing behind it
        expect(await store.apply(ns, { deleteEpisodeIds: ['t.E'] })).toEqual({
          deletedEpisodeIds: ['t.E'], removedNodeIds: ['t.F3', 't.F3.p'], removedEntityIds: ['t.N2'],
          unusedLabels: ['t.F3', 't.F3 -> t.F3 point', 't.N2 | shared']
        })
        expect(await store.countByType(ns)).toEqual({})
      } finally {
        await store.dropNamespace(ns)
      }
    })

    it('reports health', async () => {
      const h = await store.health()
      expect(h.ok).toBe(true)
      expect(h.latency_ms).toBeGreaterThanOrEqual(0)
    })
  })
}

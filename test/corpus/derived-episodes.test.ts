/**
 * Derived Episodes as part of the document write (issue #31, items 2-4): per document an Episode, its sections as
 * Facets, its key sentences as FacetPoints; re-ingesting or deleting a document changes only its Episodes, on the
 * embedded stores, on Neo4j and on Qdrant + Neo4j; imported Episodes are never touched; episodic reads imported,
 * derived or both, and a derived Episode's evidence is chunks of the namespace. Expected structures are worked out by
 * hand from the texts and the rules of docs/derivation.md.
 */
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { createEpisodicAdapter } from '../../adapters/episodic/adapter.js'
import { createGraphragAdapter } from '../../adapters/graphrag/adapter.js'
import type { StructuresRead } from '../../adapters/types.js'
import { loadConfig } from '../../src/config.js'
import { loadDemoEpisodes } from '../../src/corpus/demo.js'
import { DEFAULT_EPISODE_OPTIONS, derivedEpisodeIds } from '../../src/derive/episodes.js'
import { EPISODIC_COLLECTIONS } from '../../src/providers/episodic-graph/collections.js'
import { openServices, type Services } from '../../src/services.js'
import { buildTestApp } from '../helpers/build.js'
import { QDRANT_SKIP_LINE } from '../helpers/qdrant-server.js'

// Three sections, one chunk each; each section has one sentence of 8 to 120 characters (the headings are shorter).
const GUIDE = {
  id: 'guide',
  text: '# 网关手册\n\n网关由平台组负责维护。\n\n## 限流\n\n网关对每个租户限流，每秒最多 100 次请求。\n\n## 回滚\n\n回滚时关闭 gateway.streaming.enabled 开关。'
}
// The same without its 限流 section.
const GUIDE2 = { id: 'guide', text: '# 网关手册\n\n网关由平台组负责维护。\n\n## 回滚\n\n回滚时关闭 gateway.streaming.enabled 开关。' }
// No heading: the document id names the Episode and its one Facet.
const NOTE = { id: 'note', text: '药房规定：左氧氟沙星禁用于18岁以下儿童。' }

const IMPORTED = {
  entities: [{ id: 'n-gw', name: '网关', description: '问诊网关' }],
  episodes: [{
    id: 'ep-imp', name: '网关故障复盘', summary: '网关在周五晚上超时，连接池耗尽。', entities: [{ id: 'n-gw', description: '超时的网关' }],
    facets: [{ id: 'f-imp', search_text: '网关周五超时故障的根因分析', points: [{ id: 'p-imp', search_text: '连接池耗尽导致超时' }] }]
  }]
}

/** Deadlines for the adapters' legs on a loaded test machine (the service's defaults are 2 s). */
const SLOW = { embedding: 60_000, vector: 60_000, graph: 60_000 }

const qdrantUrl = inject('qdrantUrl')
if (!qdrantUrl) console.warn(`derived-episodes (qdrant+neo4j): ${QDRANT_SKIP_LINE}`)

const backends = [
  { name: 'embedded', env: (): Record<string, string> => ({}) },
  { name: 'neo4j', env: (): Record<string, string> => ({ GRAPH_BACKEND: 'neo4j', NEO4J_URI: inject('neo4jUri'), GRAPH_TIMEOUT_MS: '30000' }) },
  {
    name: 'qdrant+neo4j', skip: !qdrantUrl,
    env: (): Record<string, string> => ({
      VECTOR_BACKEND: 'qdrant', QDRANT_URL: qdrantUrl, COLLECTION_PREFIX: `dep_${randomBytes(3).toString('hex')}_`,
      GRAPH_BACKEND: 'neo4j', NEO4J_URI: inject('neo4jUri'), GRAPH_TIMEOUT_MS: '30000', VECTOR_TIMEOUT_MS: '30000'
    })
  }
]

for (const backend of backends) {
  describe.skipIf(backend.skip === true)(`derived Episodes through the write path (${backend.name})`, () => {
    let services: Services
    let dir: string
    const ns = `dep-${randomBytes(4).toString('hex')}`
    const mixed = `${ns}-mixed`
    const clash = `${ns}-clash`

    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'recall-derived-episodes-'))
      services = await openServices(loadConfig({ DATA_DIR: dir, DEMO_DATA: 'false', DERIVED_EPISODES: 'true', MODEL_DIR: process.env.MODEL_DIR ?? './models', ...backend.env() }))
    })
    afterAll(async () => {
      for (const namespace of [ns, mixed, clash]) await services.writePath.write(namespace, { kind: 'namespace', op: 'drop' }).catch(() => undefined)
      await services.close()
      await rm(dir, { recursive: true, force: true })
    })

    const prefix = () => services.config.collectionPrefix
    /** A document's derived Episodes with their Facets and FacetPoints, read from the store. */
    const episodesOf = async (namespace: string, doc: string) => {
      const types = await services.episodes.nodeTypes(namespace, derivedEpisodeIds(doc, DEFAULT_EPISODE_OPTIONS))
      const episodes = [...types.keys()].sort()
      const hood = episodes.length > 0 ? await services.episodes.describe(namespace, episodes) : { nodes: new Map(), edges: [] }
      const facets = hood.edges.filter((e) => e.relationship_name === 'has_facet').map((e) => e.to).sort()
      const points = facets.length > 0
        ? (await services.episodes.describe(namespace, facets)).edges.filter((e) => e.relationship_name === 'has_point').map((e) => e.to).sort()
        : []
      const labels = facets.map((id) => hood.nodes.get(id)?.search_text)
      return { episodes, facets, points, labels }
    }
    /** The vector records of these Episodes in the given collections (`derived_` for derived ones). */
    const recordsOf = async (namespace: string, part: string, episodeIds: readonly string[]) => {
      const ids: string[] = []
      for (const c of ['Episode_summary', 'Facet_search_text', 'Facet_anchor_text', 'FacetPoint_search_text']) {
        for await (const r of services.vectors.scroll(`${prefix()}${part}${c}`, namespace, episodeIds)) ids.push(`${c}:${r.id}`)
      }
      return ids.sort()
    }

    it('an upsert derives an Episode per document, a Facet per section, its key sentences as FacetPoints', async () => {
      const written = await services.writePath.write(ns, { kind: 'documents', op: 'upsert', documents: [GUIDE, NOTE] })
      expect(written.derived).toMatchObject({ episodes: 2, facets: 4, points: 4, episodes_blocked: 0 })
      // borrowed, not embedded: guide's summary, 3 labels, 3 anchors, 3 points; note's summary, label, anchor, point
      expect(written.derived!.episode_vectors_reused).toBe(14)
      expect(await episodesOf(ns, 'guide')).toEqual({
        episodes: ['d:ep:guide'],
        facets: ['d:ep:guide/f1', 'd:ep:guide/f2', 'd:ep:guide/f3'],
        points: ['d:ep:guide/f1/p1', 'd:ep:guide/f2/p1', 'd:ep:guide/f3/p1'],
        labels: ['网关手册', '网关手册 > 限流', '网关手册 > 回滚']
      })
      expect(await episodesOf(ns, 'note')).toEqual({ episodes: ['d:ep:note'], facets: ['d:ep:note/f1'], points: ['d:ep:note/f1/p1'], labels: ['note'] })
      const points = await services.episodes.describe(ns, ['d:ep:guide/f3'])
      expect(points.nodes.get('d:ep:guide/f3/p1')?.search_text).toBe('回滚时关闭 gateway.streaming.enabled 开关。')
      // in their own collections: the imported ones hold nothing of them
      expect(await recordsOf(ns, '', ['d:ep:guide', 'd:ep:note'])).toEqual([])
      // summary 1, labels 3, anchors 3, points 3
      expect(await recordsOf(ns, 'derived_', ['d:ep:guide'])).toHaveLength(10)
    })

    it('a label, an anchor and a point are their chunk\'s stored vector; a summary its chunks\' normalised mean', async () => {
      const chunks = await services.vectors.vectorsOf(`${prefix()}chunks`, ns, ['guide#0', 'guide#1', 'guide#2'])
      const read = async (collection: string, id: string) =>
        (await services.vectors.vectorsOf(`${prefix()}derived_${collection}`, ns, [id])).get(id)!
      const cosine = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i]!, 0)
      for (const [collection, id, chunk] of [
        ['Facet_search_text', 'd:ep:guide/f3', 'guide#2'], ['Facet_anchor_text', 'd:ep:guide/f3', 'guide#2'],
        ['FacetPoint_search_text', 'd:ep:guide/f3/p1', 'guide#2'], ['FacetPoint_search_text', 'd:ep:guide/f1/p1', 'guide#0']
      ] as const) expect(cosine(await read(collection, id), chunks.get(chunk)!), `${collection} ${id}`).toBeGreaterThan(0.999999)
      const sum = [0, 1, 2].map((i) => chunks.get(`guide#${i}`)!).reduce((acc, v) => acc.map((x, i) => x + v[i]!), new Array<number>(512).fill(0))
      const norm = Math.hypot(...sum)
      const summary = await read('Episode_summary', 'd:ep:guide')
      expect(cosine(summary, Float32Array.from(sum, (x) => x / norm))).toBeGreaterThan(0.999999)
      // and not any one chunk's
      for (const v of chunks.values()) expect(cosine(summary, v)).toBeLessThan(0.9999)
    })

    it('re-ingesting one document changes only its Episodes; an unchanged one writes nothing', async () => {
      const note = await services.episodes.describe(ns, ['d:ep:note'])
      const noteRecords = await recordsOf(ns, 'derived_', ['d:ep:note'])
      const episodic = await services.generations.readState('episodic', ns)
      const same = await services.writePath.write(ns, { kind: 'documents', op: 'upsert', documents: [GUIDE, NOTE] })
      expect(same.derived).toMatchObject({ episodes: 2, facets: 4, points: 4, episode_texts_embedded: 0 })
      expect((await services.generations.readState('episodic', ns)).version).toBe(episodic.version)

      const changed = await services.writePath.write(ns, { kind: 'documents', op: 'upsert', documents: [GUIDE2] })
      expect(changed.derived).toMatchObject({ episodes: 1, facets: 2, points: 2 })
      expect(await episodesOf(ns, 'guide')).toEqual({
        episodes: ['d:ep:guide'], facets: ['d:ep:guide/f1', 'd:ep:guide/f2'], points: ['d:ep:guide/f1/p1', 'd:ep:guide/f2/p1'],
        labels: ['网关手册', '网关手册 > 回滚']
      })
      expect(await recordsOf(ns, 'derived_', ['d:ep:guide'])).toHaveLength(7)
      expect(await services.episodes.describe(ns, ['d:ep:note'])).toEqual(note)
      expect(await recordsOf(ns, 'derived_', ['d:ep:note'])).toEqual(noteRecords)
      expect((await services.generations.readState('episodic', ns)).version).not.toBe(episodic.version)
    })

    it('deleting one document removes its Episodes and the entities only it linked', async () => {
      const note = await services.episodes.describe(ns, ['d:ep:note'])
      const deleted = await services.writePath.write(ns, { kind: 'documents', op: 'delete', ids: ['guide'] })
      expect(deleted.derived).toMatchObject({ episodes: 0, facets: 0, points: 0 })
      expect(await episodesOf(ns, 'guide')).toEqual({ episodes: [], facets: [], points: [], labels: [] })
      expect(await recordsOf(ns, 'derived_', ['d:ep:guide'])).toEqual([])
      expect(await services.episodes.describe(ns, ['d:ep:note'])).toEqual(note)
      // every Entity left is one the note's Episode links to
      const linked = new Set(note.edges.filter((e) => e.relationship_name === 'involves_entity').map((e) => e.to))
      expect((await services.episodes.countByType(ns))['Entity'] ?? 0).toBe(linked.size)
    })

    it('never touches imported Episodes; episodic reads imported, derived or both', async () => {
      await services.writePath.write(mixed, { kind: 'episodes', op: 'upsert', body: IMPORTED })
      const ids = ['ep-imp', 'f-imp', 'p-imp', 'n-gw']
      const before = await services.episodes.describe(mixed, ids)
      const records = await recordsOf(mixed, '', ['ep-imp'])
      await services.writePath.write(mixed, { kind: 'documents', op: 'upsert', documents: [GUIDE, NOTE] })
      await services.writePath.write(mixed, { kind: 'documents', op: 'upsert', documents: [GUIDE2] })
      await services.writePath.write(mixed, { kind: 'documents', op: 'delete', ids: ['note'] })
      expect(await services.episodes.describe(mixed, ids)).toEqual(before)
      expect(await recordsOf(mixed, '', ['ep-imp'])).toEqual(records)

      const episodic = createEpisodicAdapter({ graph: services.episodes, vectors: services.vectors, embedder: services.embedder }, { collectionPrefix: prefix(), timeouts: SLOW })
      const read = async (structures?: StructuresRead) =>
        (await episodic.retrieve({ query: '网关回滚时关闭哪个开关？', top_k: 10, namespace: mixed, ...(structures ? { structures } : {}) })).items
      expect((await read()).map((i) => i.id)).toEqual(['ep-imp'])
      expect((await read('imported')).map((i) => i.id)).toEqual(['ep-imp'])
      expect((await read('derived')).map((i) => i.id)).toEqual(['d:ep:guide'])
      expect((await read('both')).map((i) => i.id).sort()).toEqual(['d:ep:guide', 'ep-imp'])
      for (const item of await read('both')) {
        const m = item.metadata as { derived: boolean; evidence: Array<{ chunk_id: string }> }
        expect(m.derived).toBe(item.id === 'd:ep:guide')
        expect(m.evidence.length > 0).toBe(m.derived)
      }
    })

    it('an Episode id an imported Episode holds is left alone', async () => {
      const body = { episodes: [{ id: 'd:ep:note', name: '导入的', summary: '一个导入的 Episode，恰好用了派生的 id。' }] }
      await services.writePath.write(clash, { kind: 'episodes', op: 'upsert', body })
      const before = await services.episodes.describe(clash, ['d:ep:note'])
      const written = await services.writePath.write(clash, { kind: 'documents', op: 'upsert', documents: [NOTE] })
      expect(written.derived).toMatchObject({ episodes: 0, episodes_blocked: 1 })
      expect(await services.episodes.describe(clash, ['d:ep:note'])).toEqual(before)
    })

    it('on a namespace of documents only, graphrag and episodic answer with evidence chunks of the namespace', async () => {
      const fresh = `${ns}-fresh`
      await services.writePath.write(fresh, { kind: 'documents', op: 'upsert', documents: [GUIDE, NOTE] })
      try {
        const library = services.documents.get(fresh)!
        const episodic = createEpisodicAdapter({ graph: services.episodes, vectors: services.vectors, embedder: services.embedder }, { collectionPrefix: prefix(), timeouts: SLOW })
        const e = await episodic.retrieve({ query: '回滚时要关闭哪个开关？', top_k: 5, namespace: fresh })
        expect(e.items[0]?.id).toBe('d:ep:guide')
        const evidence = (e.items[0]!.metadata as { evidence: Array<{ chunk_id: string; heading_path: string[] }> }).evidence
        // the 回滚 section is among the Episode's evidence, with its heading path
        expect(evidence).toContainEqual(expect.objectContaining({ chunk_id: 'guide#2', heading_path: ['网关手册', '回滚'] }))
        const g = await createGraphragAdapter({ graph: services.graph }, { timeoutMs: SLOW.graph }).retrieve({ query: '平台组负责维护什么？', top_k: 5, namespace: fresh })
        expect(g.items.length).toBeGreaterThan(0)
        for (const item of [...e.items, ...g.items]) {
          const chunks = (item.metadata as { evidence: Array<{ chunk_id: string }> }).evidence.map((x) => x.chunk_id)
          expect(chunks.length, item.id).toBeGreaterThan(0)
          for (const id of chunks) expect(library.chunk(id), id).toBeDefined()
        }
      } finally {
        await services.writePath.write(fresh, { kind: 'namespace', op: 'drop' })
      }
      for (const c of EPISODIC_COLLECTIONS) expect(await services.vectors.count(`${prefix()}derived_${c}`, fresh)).toBe(0)
    })
  })
}

describe('graphrag with structures: both', () => {
  it('an imported entity wins a name clash and takes the derived one\'s evidence', async () => {
    const t = await buildTestApp({ DERIVED_EPISODES: 'true' })
    try {
      const { services } = t.app
      const ns = 'clash-graph'
      const imported = { id: 'team-gw', name: '网关', aliases: [], type: '系统', source_chunk_ids: [] }
      await services.writePath.write(ns, { kind: 'graph', op: 'upsert', body: { entities: [imported], relations: [] } })
      await services.writePath.write(ns, { kind: 'documents', op: 'upsert', documents: [GUIDE] })
      const graphrag = createGraphragAdapter({ graph: services.graph }, { timeoutMs: SLOW.graph })
      const query = { query: '网关由谁负责维护？', top_k: 5, namespace: ns }
      const evidence = (item: { metadata: unknown }) => (item.metadata as { evidence: Array<{ chunk_id: string }> }).evidence.map((e) => e.chunk_id)
      const [alone] = (await graphrag.retrieve({ ...query, structures: 'imported' })).items
      expect([alone!.id, evidence(alone!)]).toEqual(['team-gw', []])
      const both = (await graphrag.retrieve({ ...query, structures: 'both' })).items
      // d:网关 (named by the sentences of guide#0 and guide#1) is not an item of its own: its chunks are the imported
      // entity's evidence
      expect(both.map((i) => i.id)).not.toContain('d:网关')
      expect([both[0]!.id, evidence(both[0]!)]).toEqual(['team-gw', ['guide#0', 'guide#1']])
    } finally {
      await t.close()
    }
  })
})

describe('the demo world', () => {
  it('loads the demo Episodes into a namespace whose documents derived Episodes already', async () => {
    const t = await buildTestApp({ DERIVED_EPISODES: 'true' })
    try {
      await t.app.services.writePath.write('default', { kind: 'documents', op: 'upsert', documents: [NOTE] })
      expect(await loadDemoEpisodes(t.app.services)).toMatch(/^\d+ episodes/)
      expect(await loadDemoEpisodes(t.app.services)).toBe('the episodic memory holds imported Episodes; left alone')
    } finally {
      await t.close()
    }
  })
})

describe('the structures setting over HTTP', () => {
  it('all three modes answer a namespace of documents only; the setting chooses what graphrag and episodic read', async () => {
    const t = await buildTestApp({ DERIVED_EPISODES: 'true' })
    try {
      const ns = `structures-${randomBytes(3).toString('hex')}`
      const ingest = await t.app.inject({ method: 'POST', url: '/ingest/documents', payload: { namespace: ns, documents: [GUIDE, NOTE] } })
      expect(ingest.statusCode, ingest.body).toBe(200)
      expect(ingest.json().derived).toMatchObject({ episodes: 2, facets: 4, points: 4 })
      const retrieve = async (mode: string) => {
        const r = await t.app.inject({ method: 'POST', url: '/retrieve', payload: { mode, query: '网关回滚时关闭哪个开关？', namespace: ns, top_k: 5 } })
        expect(r.statusCode, r.body).toBe(200)
        return r.json().recall_bundle as Array<{ id: string; metadata: Record<string, unknown> }>
      }
      for (const mode of ['hybrid', 'graphrag', 'episodic']) expect((await retrieve(mode)).length, mode).toBeGreaterThan(0)
      const ep = await t.app.inject({ method: 'POST', url: '/ingest/episodes', payload: { namespace: ns, ...IMPORTED } })
      expect(ep.statusCode, ep.body).toBe(200)
      // something imported now: without a setting, episodic reads the imported Episodes only
      expect((await retrieve('episodic')).map((i) => i.id)).toEqual(['ep-imp'])
      const put = await t.app.inject({ method: 'PUT', url: `/namespaces/${ns}/retrieval-defaults`, payload: { structures: 'both' } })
      expect(put.statusCode, put.body).toBe(200)
      expect(put.json().structures).toBe('both')
      expect((await retrieve('episodic')).map((i) => i.id).sort()).toEqual(['d:ep:guide', 'd:ep:note', 'ep-imp'])
      await t.app.inject({ method: 'PUT', url: `/namespaces/${ns}/retrieval-defaults`, payload: { structures: 'derived' } })
      expect((await retrieve('episodic')).every((i) => i.metadata['derived'] === true)).toBe(true)
    } finally {
      await t.close()
    }
  })
})

describe('DERIVED_EPISODE_ENTITY_LINKS', () => {
  it('links each derived Episode to derived entities when set (those its document mentions twice or more), to none by default', async () => {
    const linksOf = async (env: Record<string, string>) => {
      const t = await buildTestApp({ DERIVED_EPISODES: 'true', ...env })
      try {
        const ns = `links-${randomBytes(3).toString('hex')}`
        const ingest = await t.app.inject({ method: 'POST', url: '/ingest/documents', payload: { namespace: ns, documents: [GUIDE] } })
        expect(ingest.statusCode, ingest.body).toBe(200)
        const hood = await t.app.services.episodes.describe(ns, ['d:ep:guide'])
        return hood.edges.filter((e) => e.relationship_name === 'involves_entity').length
      } finally {
        await t.close()
      }
    }
    expect(await linksOf({})).toBe(0)
    // 网关 is named in two of the guide's sentences (网关由…, 网关对…); 平台组 only once (docs/derivation.md: entities of the document's chunks)
    const twice = await linksOf({ DERIVED_EPISODE_ENTITY_LINKS: '4,8' })
    expect(twice).toBeGreaterThan(0)
    expect(await linksOf({ DERIVED_EPISODE_ENTITY_LINKS: '4,8', DERIVED_EPISODE_ENTITY_MIN_MENTIONS: '1' })).toBeGreaterThan(twice)
  })
})

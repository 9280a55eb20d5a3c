/**
 * The derived graph as part of the document write (issue #31): each document's contributions replace its previous
 * ones, on the embedded graph and on Neo4j; imported entities are never touched; graphrag on a namespace that holds
 * only documents answers with evidence chunks of the namespace. Expected values are written by hand from the texts.
 */
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { createGraphragAdapter } from '../../adapters/graphrag/adapter.js'
import { loadConfig } from '../../src/config.js'
import { openServices, type Services } from '../../src/services.js'
import { buildTestApp } from '../helpers/build.js'

// The three names jieba's dictionary takes apart, kept whole by the dictionary file (DERIVATION_DICTIONARY).
const DICTIONARY = '# teams and drugs\n鉴权中间件\n平台组\n左氧氟沙星\n'
const AUTH = { id: 'auth', text: '# 鉴权中间件\n\n鉴权中间件由平台组负责维护。' }
const DRUG = { id: 'drug', text: '左氧氟沙星禁用于18岁以下儿童。' }
const BOTH = { id: 'both', text: '鉴权中间件由平台组负责维护，左氧氟沙星禁用于18岁以下儿童。' }

const E = (name: string) => `d:${name}`
const RESPONSIBLE = 'd:平台组-[负责]->d:鉴权中间件'
const FORBIDDEN = 'd:左氧氟沙星-[禁用]->d:儿童'
/** The co-occurrences across the comma of BOTH, each from the smaller name to the larger. */
const ACROSS = [['鉴权中间件', '左氧氟沙星'], ['鉴权中间件', '儿童'], ['平台组', '左氧氟沙星'], ['平台组', '儿童']]
  .map(([a, b]) => (a! < b! ? `d:${a}-[co_occurs]->d:${b}` : `d:${b}-[co_occurs]->d:${a}`))

const backends = [
  { name: 'embedded', env: (): Record<string, string> => ({}) },
  { name: 'neo4j', env: (): Record<string, string> => ({ GRAPH_BACKEND: 'neo4j', NEO4J_URI: inject('neo4jUri'), GRAPH_TIMEOUT_MS: '30000' }) }
]

for (const backend of backends) {
  describe(`the derived graph through the write path (${backend.name})`, () => {
    let services: Services
    let dir: string
    // fresh names, so runs against one Neo4j stay apart
    const ns = `derived-${randomBytes(4).toString('hex')}`
    const mixed = `${ns}-mixed`

    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'recall-derived-'))
      await writeFile(join(dir, 'dictionary.txt'), DICTIONARY)
      const config = loadConfig({
        DATA_DIR: dir, DEMO_DATA: 'false', MODEL_DIR: process.env.MODEL_DIR ?? './models',
        DERIVATION_DICTIONARY: join(dir, 'dictionary.txt'), ...backend.env()
      })
      services = await openServices(config)
    })
    afterAll(async () => {
      for (const namespace of [ns, mixed]) await services.writePath.write(namespace, { kind: 'namespace', op: 'drop' }).catch(() => undefined)
      await services.close()
      await rm(dir, { recursive: true, force: true })
    })

    const contributed = async (doc: string) => {
      const { entities, relations } = await services.graph.derivedOf(ns, [doc])
      return { entities: entities.map((e) => e.id), relations: relations.map((r) => r.id) }
    }
    const weight = async (id: string) => (await services.graph.neighbourhood(ns, [E('平台组'), E('左氧氟沙星')])).relations.find((r) => r.id === id)?.weight

    it('an upsert derives each document\'s entities and relations, each counted per document', async () => {
      const written = await services.writePath.write(ns, { kind: 'documents', op: 'upsert', documents: [AUTH, DRUG, BOTH] })
      // auth 2 entities and 1 relation, drug 2 and 1, both 4 and 6
      expect(written.derived).toMatchObject({ entities: 8, relations: 8, blocked: 0 })
      expect(await contributed('auth')).toEqual({ entities: [E('平台组'), E('鉴权中间件')], relations: [RESPONSIBLE] })
      expect(await contributed('drug')).toEqual({ entities: [E('儿童'), E('左氧氟沙星')], relations: [FORBIDDEN] })
      expect(await contributed('both')).toEqual({
        entities: [E('儿童'), E('左氧氟沙星'), E('平台组'), E('鉴权中间件')].sort(),
        relations: [RESPONSIBLE, FORBIDDEN, ...ACROSS].sort()
      })
      expect(await services.graph.count(ns)).toEqual({ entities: 4, relations: 6 })
      expect(await weight(RESPONSIBLE)).toBe(2)
      const [auth] = await services.graph.getEntities(ns, [E('鉴权中间件')])
      // the heading and the sentence of auth#0, then both#0
      expect(auth!.source_chunk_ids).toEqual(['auth#0', 'both#0'])
      expect(auth!.derived_from!.map((p) => [p.doc_id, p.count])).toEqual([['auth', 2], ['both', 1]])
    })

    it('moves graphrag\'s version only when the derived graph changed', async () => {
      const version = async (kind: 'hybrid' | 'graphrag') => (await services.generations.readState(kind, ns)).version
      const before = { hybrid: await version('hybrid'), graphrag: await version('graphrag') }
      // by hand: 三 is outline numbering, 第三/m 份/q are no nouns, 文档 is a stop word: nothing derived
      await services.writePath.write(ns, { kind: 'documents', op: 'upsert', documents: [{ id: 'plain', text: '# 三\n\n第三份文档。' }] })
      expect(await services.graph.derivedOf(ns, ['plain'])).toEqual({ entities: [], relations: [] })
      expect(await version('hybrid')).not.toBe(before.hybrid)
      expect(await version('graphrag')).toBe(before.graphrag)
      await services.writePath.write(ns, { kind: 'documents', op: 'delete', ids: ['plain'] })
      expect(await version('graphrag')).toBe(before.graphrag)
    })

    it('re-ingesting one document changes only its contributions', async () => {
      const before = { auth: await contributed('auth'), both: await contributed('both') }
      const graphrag = (await services.generations.readState('graphrag', ns)).version
      await services.writePath.write(ns, { kind: 'documents', op: 'upsert', documents: [{ id: 'drug', text: '左氧氟沙星慎用于孕妇。' }] })
      expect((await services.generations.readState('graphrag', ns)).version).not.toBe(graphrag)
      expect(await contributed('drug')).toEqual({ entities: [E('孕妇'), E('左氧氟沙星')], relations: ['d:左氧氟沙星-[慎用]->d:孕妇'] })
      expect({ auth: await contributed('auth'), both: await contributed('both') }).toEqual(before)
      // 儿童 stays (both names it); 禁用 is now stated by both alone
      expect(await services.graph.count(ns)).toEqual({ entities: 5, relations: 7 })
      expect(await weight(FORBIDDEN)).toBe(1)
    })

    it('deleting one document removes what only it contributed', async () => {
      await services.writePath.write(ns, { kind: 'documents', op: 'delete', ids: ['both'] })
      expect(await contributed('both')).toEqual({ entities: [], relations: [] })
      expect(await services.graph.count(ns)).toEqual({ entities: 4, relations: 2 })
      expect(await services.graph.getEntities(ns, [E('儿童')])).toEqual([])
      expect(await weight(RESPONSIBLE)).toBe(1)
    })

    it('graphrag on a namespace of documents only answers with grounded items', async () => {
      const { items } = await createGraphragAdapter({ graph: services.graph }).retrieve({ query: '平台组负责维护什么？', top_k: 5, namespace: ns })
      expect(items.map((i) => [i.id, i.score])).toEqual([[E('平台组'), 1], [E('鉴权中间件'), 0.6]])
      const library = services.documents.get(ns)!
      for (const item of items) {
        const evidence = (item.metadata as { evidence: Array<{ chunk_id: string; weight: number }> }).evidence
        expect(evidence.length).toBeGreaterThan(0)
        for (const { chunk_id } of evidence) expect(library.chunk(chunk_id)?.text, chunk_id).toContain((item.metadata as { entity_name: string }).entity_name)
      }
      // 鉴权中间件 is named by auth#0 only now: one chunk at the one-hop weight
      expect((items[1]!.metadata as { evidence: unknown }).evidence).toEqual([{ chunk_id: 'auth#0', weight: 0.6 }])
    })

    it('a namespace drop takes its derived graph too', async () => {
      const dropped = `${ns}-dropped`
      await services.writePath.write(dropped, { kind: 'documents', op: 'upsert', documents: [DRUG] })
      expect(await services.graph.count(dropped)).toEqual({ entities: 2, relations: 1 })
      await services.writePath.write(dropped, { kind: 'namespace', op: 'drop' })
      expect(await services.graph.count(dropped)).toEqual({ entities: 0, relations: 0 })
      expect(await services.graph.derivedOf(dropped, ['drug'])).toEqual({ entities: [], relations: [] })
    })

    it('never touches an imported graph; graphrag reads the imported part where there is one', async () => {
      const imported = { id: 'team-platform', name: '平台组', aliases: [], type: '团队', description: '平台研发团队', source_chunk_ids: [] }
      await services.writePath.write(mixed, { kind: 'graph', op: 'upsert', body: { entities: [imported], relations: [] } })
      await services.writePath.write(mixed, { kind: 'documents', op: 'upsert', documents: [AUTH] })
      await services.writePath.write(mixed, { kind: 'documents', op: 'delete', ids: ['auth'] })
      await services.writePath.write(mixed, { kind: 'documents', op: 'upsert', documents: [AUTH] })
      expect(await services.graph.getEntities(mixed, ['team-platform'])).toEqual([imported])
      expect(await services.graph.count(mixed)).toEqual({ entities: 3, relations: 1 })
      const { items } = await createGraphragAdapter({ graph: services.graph }).retrieve({ query: '平台组负责维护什么？', top_k: 5, namespace: mixed })
      expect(items.map((i) => i.id)).toEqual(['team-platform'])
    })
  })
}

describe('POST /ingest/documents', () => {
  it('reports what the documents contribute to the derived graph', async () => {
    const t = await buildTestApp({ DERIVED_EPISODES: 'true' })
    try {
      const r = await t.app.inject({ method: 'POST', url: '/ingest/documents', payload: { namespace: 'reported', documents: [DRUG] } })
      expect(r.statusCode, r.body).toBe(200)
      // without the dictionary jieba takes 左 off: 氧氟沙星 and 儿童 (18 and 岁 are no names), and 氧氟沙星 -[禁用]-> 儿童
      // and one Episode (one section, its one key sentence): its summary, label 'drug', anchor and key sentence take the
      // one chunk's vector (4 records); it links no entity (the default), so only the edge labels has_facet and has_point
      // are embedded
      expect(r.json().derived).toEqual({
        entities: 2, relations: 1, blocked: 0,
        episodes: 1, facets: 1, points: 1, episodes_blocked: 0, episode_texts_embedded: 2, episode_vectors_reused: 4
      })
    } finally {
      await t.close()
    }
  })
})

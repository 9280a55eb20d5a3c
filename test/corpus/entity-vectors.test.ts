/**
 * Entities found by meaning (docs/derivation.md, "Entities found by meaning"), through the routes with the real model, on
 * the embedded stores and on Qdrant + Neo4j + Redis: every name and alias gets one vector per distinct text, embedded
 * in the background after the write answered; graphrag and the hybrid `graph` leg reach, after the names a question
 * holds, the entities whose names are near it. Expected values come from the graph written here: its distinct texts are
 * counted by hand, and 住得比标准贵 names no entity (so any entity it reaches is reached by meaning).
 */
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { ENTITY_NAME_COLLECTION, entityNameKey } from '../../src/kernel/entity-names.js'
import type { EntityNameCounts } from '../../src/corpus/entity-vectors.js'
import type { Providers } from '../../src/services.js'
import { buildTestApp, type TestApp } from '../helpers/build.js'
import { runQdrantUrl, sharedRedisEnv } from '../helpers/two-replicas.js'

// Distinct texts: 住宿超标, 住宿费超标准, 差旅报销, 出差报销, 年假, 带薪年休假, 青禾科技 (the name of two entities) = 7.
const GRAPH = {
  entities: [
    { id: 'over', name: '住宿超标', aliases: ['住宿费超标准'], description: '出差住宿费用超过标准，需要总监审批', source_chunk_ids: ['travel#0'] },
    { id: 'travel', name: '差旅报销', aliases: ['出差报销'], source_chunk_ids: ['travel#0'] },
    { id: 'leave', name: '年假', aliases: ['带薪年休假'], source_chunk_ids: ['leave#0'] },
    { id: 'org', name: '青禾科技', source_chunk_ids: ['org#0'] },
    { id: 'org2', name: '青禾科技', source_chunk_ids: ['org#1'] },
    { id: 'cfo', name: '财务总监', source_chunk_ids: ['travel#3'] }
  ],
  relations: [{ source: 'over', target: 'cfo', type: '审批人' }, { source: 'travel', target: 'over', type: '包含' }]
}
const TEXTS = 8 // the seven above and 财务总监

const qdrantUrl = runQdrantUrl('entity-vectors (qdrant+neo4j+redis)')
const backends = [
  { name: 'embedded', skip: false, env: (): Record<string, string> => ({}) },
  {
    name: 'qdrant+neo4j+redis', skip: !qdrantUrl,
    env: (): Record<string, string> => ({
      VECTOR_BACKEND: 'qdrant', QDRANT_URL: qdrantUrl, COLLECTION_PREFIX: `ev_${randomBytes(3).toString('hex')}_`,
      GRAPH_BACKEND: 'neo4j', NEO4J_URI: inject('neo4jUri'), GRAPH_TIMEOUT_MS: '30000', VECTOR_TIMEOUT_MS: '30000', ...sharedRedisEnv()
    })
  }
]

type Item = { id: string; score: number; metadata: Record<string, unknown> }

for (const backend of backends) {
  describe.skipIf(backend.skip)(`entity vectors on ${backend.name}`, () => {
    let t: TestApp
    const embedded: string[] = []
    let failNames = false
    const ns = `ev-${randomBytes(3).toString('hex')}`
    beforeAll(async () => {
      t = await buildTestApp({ ENTITY_VECTORS: 'true', GRAPHRAG_MEANING_FLOOR: '0.5', CACHE_TTL_SECONDS: '0', ...backend.env() }, (p: Providers) => ({
        ...p,
        // every other call reaches the real embedder itself (its private fields need it as `this`)
        embedder: new Proxy(p.embedder, {
          get(target, key, receiver) {
            if (key === 'embedPassages') {
              return async (texts: readonly string[]) => {
                if (failNames) throw new Error('the embedder is down (test)')
                embedded.push(...texts)
                return target.embedPassages(texts)
              }
            }
            const value = Reflect.get(target, key, receiver)
            return typeof value === 'function' ? value.bind(target) : value
          }
        })
      }))
    }, 300_000)
    afterAll(async () => {
      await t?.app.inject({ method: 'DELETE', url: `/namespaces/${ns}` })
      await t?.close()
    })

    const status = (): Promise<EntityNameCounts> => t.app.services.entityVectors!.namespace(ns)
    const settled = () => t.app.services.writePath.entityNamesIdle()
    const collection = () => `${t.config.collectionPrefix}${ENTITY_NAME_COLLECTION}`
    const graphrag = async (q: string) => {
      const r = await t.app.inject({ method: 'GET', url: `/retrieve?mode=graphrag&namespace=${ns}&top_k=5&q=${encodeURIComponent(q)}` })
      expect(r.statusCode, r.body).toBe(200)
      return (r.json() as { recall_bundle: Item[] }).recall_bundle
    }

    it('a graph write answers before its names are embedded; then each distinct text has one vector, embedded once', async () => {
      const r = await t.app.inject({ method: 'POST', url: '/ingest/graph', payload: { namespace: ns, ...GRAPH } })
      expect(r.statusCode, r.body).toBe(200)
      await settled()
      expect(await status()).toEqual({ pending: 0, done: TEXTS, failed: 0 })
      expect(await t.app.services.vectors.count(collection(), ns)).toBe(TEXTS)
      expect(embedded.filter((text) => text === '青禾科技')).toHaveLength(1)
      // the same graph again: every text is held, nothing is embedded
      const before = embedded.length
      expect((await t.app.inject({ method: 'POST', url: '/ingest/graph', payload: { namespace: ns, ...GRAPH } })).statusCode).toBe(200)
      await settled()
      expect(embedded.length).toBe(before)
    })

    it('/metrics reports the namespace\'s names by state', async () => {
      const text = (await t.app.inject({ method: 'GET', url: '/metrics' })).body
      expect(text).toContain(`recall_entity_names{namespace="${ns}",state="done"} ${TEXTS}`)
      expect(text).toContain(`recall_entity_names{namespace="${ns}",state="pending"} 0`)
    })

    it('graphrag reaches 住宿超标 from 住得比标准贵, which names no entity, by meaning, with the similarity', async () => {
      const items = await graphrag('住得比标准贵')
      const over = items.find((i) => i.id === 'over')
      expect(over, JSON.stringify(items)).toBeDefined()
      expect(over!.metadata['matched_by']).toBe('meaning')
      expect(over!.metadata['hop']).toBe(0)
      const similarity = over!.metadata['similarity'] as number
      expect(similarity).toBeGreaterThanOrEqual(0.5)
      expect(similarity).toBeLessThanOrEqual(1)
      // scored like a partial name by its similarity
      expect(over!.score).toBeCloseTo(0.6 + 0.4 * similarity, 3)
      // its approver comes one hop away
      expect(items.find((i) => i.id === 'cfo')?.metadata['hop']).toBe(1)
    })

    it('a name the question holds comes first, matched by name; meaning matches follow it', async () => {
      const items = await graphrag('年假和住得比标准贵')
      expect(items[0]!.id).toBe('leave')
      expect(items[0]!.metadata['matched_by']).toBe('name')
      const meaning = items.filter((i) => i.metadata['matched_by'] === 'meaning' && i.metadata['hop'] === 0)
      expect(meaning.map((i) => i.id)).toContain('over')
      expect(items.findIndex((i) => i.id === 'over')).toBeGreaterThan(0)
    })

    it('an unrelated question reaches nothing by meaning', async () => {
      const items = await graphrag('今天天气怎么样')
      expect(items.filter((i) => i.metadata['matched_by'] === 'meaning')).toEqual([])
    })

    it('the hybrid graph leg takes the same entities, its path saying meaning and the similarity', async () => {
      const doc = { id: 'travel', text: '# 差旅\n\n出差前提交申请。\n\n报销按标准执行。\n\n住宿费用超过标准的，需要财务总监审批。' }
      const w = await t.app.inject({ method: 'POST', url: '/ingest/documents', payload: { namespace: ns, documents: [doc] } })
      expect(w.statusCode, w.body).toBe(200)
      const r = await t.app.inject({ method: 'POST', url: '/retrieve', payload: { mode: 'hybrid', namespace: ns, query: '住得比标准贵', top_k: 5, legs: ['vector', 'lexical', 'graph'], structures: 'imported' } })
      expect(r.statusCode, r.body).toBe(200)
      const paths = (r.json() as { recall_bundle: Item[] }).recall_bundle.flatMap((i) => (i.metadata['graph_paths'] as Array<Record<string, unknown>> | undefined) ?? [])
      const over = paths.find((p) => p['entity_id'] === 'over')
      expect(over, JSON.stringify(paths)).toMatchObject({ matched_by: 'meaning', hop: 0 })
      expect(over!['similarity']).toBeGreaterThanOrEqual(0.5)
      await settled()
    })

    it('a derived graph\'s names get vectors too, counted per document', async () => {
      await settled()
      const derived = await t.app.services.graph.derivedOf(ns, ['travel'])
      expect(derived.entities.length).toBeGreaterThan(0)
      const perDocument = await t.app.services.entityVectors!.documents(ns, ['travel', 'absent'])
      expect(perDocument.get('absent')).toEqual({ pending: 0, done: 0, failed: 0 })
      const travel = perDocument.get('travel')!
      expect(travel.pending).toBe(0)
      expect(travel.done).toBeGreaterThan(0)
      expect(await status()).toMatchObject({ pending: 0, failed: 0 })
    })

    it('deleting an entity removes the vectors of the texts no other entity holds', async () => {
      const before = await status()
      // org2 shares 青禾科技 with org: the text stays; cfo's 财务总监 goes unless a derived entity holds it
      expect((await t.app.inject({ method: 'DELETE', url: `/entities/org2?namespace=${ns}` })).statusCode).toBe(200)
      await settled()
      expect(await status()).toEqual(before)
      expect((await t.app.inject({ method: 'DELETE', url: `/entities/leave?namespace=${ns}` })).statusCode).toBe(200)
      await settled()
      // 年假 and 带薪年休假 were held by `leave` alone
      expect(await status()).toEqual({ ...before, done: before.done - 2 })
    })

    it('a failing embedder leaves names pending and failed with the reason; the next write embeds them', async () => {
      failNames = true
      const r = await t.app.inject({ method: 'POST', url: '/ingest/graph', payload: { namespace: ns, entities: [{ id: 'sick', name: '病假' }], relations: [] } })
      expect(r.statusCode, r.body).toBe(200)
      await settled()
      const failed = await status()
      expect(failed).toMatchObject({ pending: 1, failed: 1, reason: 'the embedder is down (test)' })
      failNames = false
      expect((await t.app.inject({ method: 'POST', url: '/ingest/graph', payload: { namespace: ns, entities: [{ id: 'sick', name: '病假' }], relations: [] } })).statusCode).toBe(200)
      await settled()
      expect(await status()).toEqual({ pending: 0, done: failed.done + 1, failed: 0 })
    })

    it('a document\'s status read right after each write counts that write\'s names, not the last one\'s', async () => {
      const doc = 'leave-rules'
      /** The distinct name keys derived from the document, read from the graph here, not through the status. */
      const namesOf = async () => {
        const { entities } = await t.app.services.graph.derivedOf(ns, [doc])
        return new Set(entities.filter((e) => e.derived_from?.some((p) => p.doc_id === doc)).flatMap((e) => [e.name, ...e.aliases]).map(entityNameKey).filter((k) => k !== ''))
      }
      const statusOf = async () => {
        const r = await t.app.inject({ method: 'GET', url: `/documents/${doc}?namespace=${ns}` })
        expect(r.statusCode, r.body).toBe(200)
        return (r.json() as { index_status: Record<string, unknown> }).index_status['entity_vectors']
      }
      const write = async (text: string) => {
        expect((await t.app.inject({ method: 'POST', url: '/ingest/documents', payload: { namespace: ns, documents: [{ id: doc, text }] } })).statusCode).toBe(200)
        await settled()
      }
      await write('# 产假\n\n女职工生育享受产假九十八天。\n\n男职工享受陪产假十五天，由人事部登记。')
      const first = await namesOf()
      expect(first.size).toBeGreaterThan(0)
      expect(await statusOf()).toEqual({ state: 'done', items: { derived: first.size, expected: first.size } })
      await write('# 加班\n\n工作日加班按一点五倍工资计算。\n\n休息日加班可以调休，由部门经理批准，财务中心核算。')
      const second = await namesOf()
      expect(second).not.toEqual(first)
      expect(await statusOf()).toEqual({ state: 'done', items: { derived: second.size, expected: second.size } })
      // a name vector removed behind the status's back is seen at the next read
      const victim = [...second][0]!
      const held: string[] = []
      for await (const r of t.app.services.vectors.scroll(collection(), ns)) if (r.payload.text === victim) held.push(r.id)
      await t.app.services.vectors.write(collection(), ns, { deleteDocIds: held })
      expect(await statusOf()).toMatchObject({ state: 'pending', items: { derived: second.size - 1, expected: second.size } })
    })

    it('deleting the namespace removes its names\' vectors', async () => {
      expect((await t.app.inject({ method: 'DELETE', url: `/namespaces/${ns}` })).statusCode).toBe(200)
      await settled()
      expect(await t.app.services.vectors.count(collection(), ns)).toBe(0)
      expect(await status()).toEqual({ pending: 0, done: 0, failed: 0 })
    })
  })
}

/**
 * docs/namespaces.md, "The embedding model of a namespace": a namespace made with one local model can be dropped by a
 * service on the other (everything of it goes, from both models' stores, and the answer counts it), and re-embedded in
 * place with the running model (`npm run reembed`), on the real zh and en models, over the embedded stores and Qdrant.
 */
import { access, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { QdrantClient } from '@qdrant/js-client-rest'
import { afterAll, describe, expect, inject, it } from 'vitest'
import { buildApp } from '../../src/http/app.js'
import { loadConfig } from '../../src/config.js'
import { openServices } from '../../src/services.js'
import { createRuntime } from '../../src/runtime.js'
import { withServices, type TestFastify } from '../helpers/build.js'
import { main as reembed } from '../../src/cli/reembed.js'
import { QDRANT_SKIP_LINE } from '../helpers/qdrant-server.js'

const qdrantUrl = inject('qdrantUrl')
if (!qdrantUrl) console.warn(`namespace-reembed (Qdrant part): ${QDRANT_SKIP_LINE}`)

const ZH = 'bge-small-zh-v1.5'
const EN = 'bge-small-en-v1.5'

/** The backend's settings: none for the embedded stores; Qdrant's URL and a collection prefix of this run's. */
let backend: Record<string, string> = {}

const envOf = (dataDir: string, model: string) => ({
  DATA_DIR: dataDir, DEMO_DATA: 'false', MODEL_DIR: process.env.MODEL_DIR ?? './models', EMBEDDING_SESSIONS: '0',
  DERIVED_EPISODES: 'true', EMBEDDING_MODEL: model, ...backend
})

async function open(dataDir: string, model: string): Promise<TestFastify> {
  const config = loadConfig(envOf(dataDir, model))
  const services = await openServices(config)
  const app = withServices(await buildApp(createRuntime(services), { logger: false }), services)
  await app.ready()
  return app
}

const exists = (path: string) => access(path).then(() => true, () => false)

// two short documents: one chunk each (`<id>#0`)
const DOCS = [
  { id: 'cough', text: 'Chronic cough lasting more than three weeks calls for a chest X-ray and a lung function test.' },
  { id: 'fever', text: 'With a fever, take the temperature first and drink plenty of water.' }
]

function describeOtherModel(name: string, settings: Record<string, string>, cleanup: () => Promise<void> = async () => {}): void {
  describe(`a namespace made with another model: ${name}`, () => {
    const dirs: string[] = []
    const prefix = settings['COLLECTION_PREFIX'] ?? 'recall_'
    const zh = (c: string) => `${prefix}${c}`
    const en = (c: string) => `${prefix}bge_small_en_v1_5_${c}`
    // over Qdrant the lexical leg lives in the chunk points (checked by the lexical-only query), not in folders
    const folders = settings['VECTOR_BACKEND'] !== 'qdrant'
    afterAll(async () => {
      await cleanup()
      for (const d of dirs) await rm(d, { recursive: true, force: true })
    })

    async function madeWithZh(namespace: string): Promise<{ dataDir: string; listed: Record<string, unknown> }> {
      backend = settings
      const dataDir = await mkdtemp(join(tmpdir(), 'recall-namespace-reembed-'))
      dirs.push(dataDir)
      const app = await open(dataDir, ZH)
      try {
        expect((await app.inject({ method: 'POST', url: '/ingest/documents', payload: { namespace, documents: DOCS } })).statusCode).toBe(200)
        const listed = (await app.inject({ method: 'GET', url: '/namespaces' })).json<{ namespaces: Array<Record<string, unknown>> }>()
          .namespaces.find((n) => n['namespace'] === namespace)!
        // what the zh stores hold of it: chunks, derived Episodes' vectors, the lexical folder, the model record
        expect(await app.services.vectors.count(zh('chunks'), namespace)).toBe(2)
        expect(await app.services.vectors.count(zh('derived_Episode_summary'), namespace)).toBeGreaterThan(0)
        if (folders) expect(await exists(join(dataDir, 'bm25', 'namespaces', namespace))).toBe(true)
        return { dataDir, listed }
      } finally {
        await app.close()
      }
    }

    it('is dropped by a service on the other model: both models\' stores and its record go, and the answer counts what it held', async () => {
      const { dataDir, listed } = await madeWithZh('zh-notes')
      expect(listed).toMatchObject({ documents: 2, chunks: 2 })

      let app = await open(dataDir, EN)
      try {
        const drop = await app.inject({ method: 'DELETE', url: '/namespaces/zh-notes' })
        expect(drop.statusCode, drop.body).toBe(200)
        // what the zh service listed, though this service's own stores held none of its chunks
        expect(drop.json<{ removed: Record<string, unknown> }>().removed).toEqual(listed)
        const { vectors, config } = app.services
        for (const c of ['chunks', 'derived_Episode_summary', 'derived_FacetPoint_search_text'].map(zh)) {
          expect(await vectors.count(c, 'zh-notes'), c).toBe(0)
        }
        expect(await vectors.count(config.namespaceModels.records, 'zh-notes')).toBe(0)
        if (folders) expect(await exists(join(dataDir, 'bm25', 'namespaces', 'zh-notes'))).toBe(false)
        expect((await app.inject({ method: 'DELETE', url: '/namespaces/zh-notes' })).statusCode).toBe(404)
        // the record is gone: the namespace is this model's to write
        expect((await app.inject({ method: 'POST', url: '/ingest/documents', payload: { namespace: 'zh-notes', documents: DOCS } })).statusCode).toBe(200)
      } finally {
        await app.close()
      }

      app = await open(dataDir, ZH)
      try {
        expect((await app.inject({ method: 'GET', url: '/documents?namespace=zh-notes' })).statusCode).toBe(409)
      } finally {
        await app.close()
      }
    })

    it('is re-embedded in place by `npm run reembed`: reads answer from the running model\'s vectors and lexical index, ids unchanged, the old model\'s stores emptied', async () => {
      const { dataDir } = await madeWithZh('moved')
      let app = await open(dataDir, EN)
      try {
        expect((await app.inject({ method: 'POST', url: '/retrieve', payload: { mode: 'hybrid', namespace: 'moved', query: 'cough' } })).statusCode).toBe(409)
      } finally {
        await app.close()
      }

      let printed = ''
      const sink = new Writable({ write(chunk, _, done) { printed += String(chunk); done() } })
      const done = await reembed(['--namespace', 'moved'], envOf(dataDir, EN), sink)
      expect(done?.from).toEqual([ZH])
      expect(done?.chunks).toBe(2)
      expect(done?.others).toBeGreaterThan(0)
      expect(printed).toContain(`namespace "moved" moved from ${ZH} to ${EN}: 2 chunks`)

      app = await open(dataDir, EN)
      try {
        const { vectors, embedder } = app.services
        const documents = (await app.inject({ method: 'GET', url: '/documents?namespace=moved' })).json<{ documents: Array<{ id: string }> }>()
        expect(documents.documents.map((d) => d.id)).toEqual(['cough', 'fever'])
        const ids: string[] = []
        for await (const { id } of vectors.scroll(en('chunks'), 'moved')) ids.push(id)
        expect(ids).toEqual(['cough#0', 'fever#0'])
        // a chunk's stored vector is the en model's own for its text (a chunk without title or headings embeds its text)
        const [stored] = [...(await vectors.vectorsOf(en('chunks'), 'moved', ['cough#0'])).values()]
        const [own] = await embedder.embedPassages([DOCS[0]!.text])
        expect(stored!.length).toBe(384)
        expect(Math.max(...Array.from(stored!, (v, i) => Math.abs(v - own![i]!)))).toBeLessThan(1e-6)

        const leg = async (legs: string, query: string) => (await app.inject({
          method: 'POST', url: '/retrieve', payload: { mode: 'hybrid', namespace: 'moved', query, top_k: 2, legs: [legs] }
        })).json<{ recall_bundle: Array<{ id: string }> }>().recall_bundle.map((i) => i.id)
        expect((await leg('vector', 'What should a patient who has coughed for a month have done?'))[0]).toBe('cough#0')
        // the English analyzer's stems: "coughing" meets "cough" only in an index built with it
        expect(await leg('lexical', 'coughing')).toEqual(['cough#0'])
        const episodic = await app.inject({ method: 'POST', url: '/retrieve', payload: { mode: 'episodic', namespace: 'moved', query: 'fever temperature' } })
        expect(episodic.statusCode, episodic.body).toBe(200)
        expect(episodic.json<{ recall_bundle: unknown[] }>().recall_bundle.length).toBeGreaterThan(0)

        // nothing is left in the zh model's stores
        for (const c of ['chunks', 'derived_Episode_summary', 'derived_FacetPoint_search_text'].map(zh)) {
          expect(await vectors.count(c, 'moved'), c).toBe(0)
        }
        if (folders) expect(await exists(join(dataDir, 'bm25', 'namespaces', 'moved'))).toBe(false)
        if (folders) expect(await exists(join(dataDir, 'bm25-bge_small_en_v1_5', 'namespaces', 'moved'))).toBe(true)
      } finally {
        await app.close()
      }

      // a second run finds nothing to move; the record now names the en model, so the zh service refuses the namespace
      expect((await reembed(['--namespace', 'moved'], envOf(dataDir, EN), sink))?.from).toEqual([])
      app = await open(dataDir, ZH)
      try {
        const r = await app.inject({ method: 'GET', url: '/documents?namespace=moved' })
        expect(r.statusCode).toBe(409)
        expect(r.json<{ message: string }>().message).toContain(`holds vectors made with ${EN}`)
      } finally {
        await app.close()
      }
    })
  })
}

describeOtherModel('embedded stores', {})

const prefix = `nsreembed_${process.pid}_`
describe.skipIf(!qdrantUrl)('on Qdrant', () => {
  describeOtherModel('Qdrant', qdrantUrl ? { VECTOR_BACKEND: 'qdrant', QDRANT_URL: qdrantUrl, COLLECTION_PREFIX: prefix } : {}, async () => {
    const client = new QdrantClient({ url: qdrantUrl!, checkCompatibility: false })
    const { collections } = await client.getCollections()
    for (const c of collections.filter((c) => c.name.startsWith(prefix))) await client.deleteCollection(c.name)
  })
})

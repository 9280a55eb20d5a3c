/**
 * docs/namespaces.md, "The embedding model of a namespace": a namespace records the model its vectors were made with,
 * and a service running another model refuses to read or write it (409 naming both and what to do), loses nothing
 * of it, and serves its own namespaces; on the embedded stores and on Qdrant. Dropping and re-embedding such a
 * namespace: namespace-reembed.test.ts.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { QdrantClient } from '@qdrant/js-client-rest'
import { afterAll, describe, expect, inject, it } from 'vitest'
import { buildApp } from '../../src/http/app.js'
import { loadConfig } from '../../src/config.js'
import { openServices } from '../../src/services.js'
import { createRuntime } from '../../src/runtime.js'
import { withServices, type TestFastify } from '../helpers/build.js'
import { QDRANT_SKIP_LINE } from '../helpers/qdrant-server.js'

const qdrantUrl = inject('qdrantUrl')
if (!qdrantUrl) console.warn(`namespace-model (Qdrant part): ${QDRANT_SKIP_LINE}`)

const ZH = 'bge-small-zh-v1.5'
const EN = 'bge-small-en-v1.5'

async function open(dataDir: string, model: string, backend: Record<string, string>): Promise<TestFastify> {
  const config = loadConfig({
    DATA_DIR: dataDir, DEMO_DATA: 'false', MODEL_DIR: process.env.MODEL_DIR ?? './models', EMBEDDING_SESSIONS: '0',
    DERIVED_EPISODES: 'false', EMBEDDING_MODEL: model, ...backend
  })
  const services = await openServices(config)
  const app = withServices(await buildApp(createRuntime(services), { logger: false }), services)
  await app.ready()
  return app
}

const ingest = (app: TestFastify, namespace: string, documents: Array<{ id: string; text: string }>) =>
  app.inject({ method: 'POST', url: '/ingest/documents', payload: { namespace, documents } })
const hybrid = (app: TestFastify, namespace: string, query: string) =>
  app.inject({ method: 'POST', url: '/retrieve', payload: { mode: 'hybrid', namespace, query, top_k: 3 } })
const documentCount = async (app: TestFastify, namespace: string) =>
  (await app.inject({ method: 'GET', url: `/documents?namespace=${namespace}` })).json<{ total: number }>().total

const ZH_DOCS = [{ id: 'cough', text: '慢性咳嗽超过三周，建议先做胸部X线检查和肺功能检查。' }, { id: 'fever', text: '发热时先测体温，多喝水。' }]
const EN_DOCS = [
  { id: 'paint', text: 'Melanie: I painted a lake sunrise last year, it is special to me.' },
  { id: 'group', text: 'Caroline: I went to a LGBTQ support group yesterday and it was so powerful.' },
  { id: 'dogs', text: 'John: We adopted two puppies from the shelter.' }
]

function describeModelRecords(name: string, backend: () => Record<string, string>, cleanup: () => Promise<void> = async () => {}): void {
  describe(`the embedding model of a namespace: ${name}`, () => {
    const dirs: string[] = []
    afterAll(async () => {
      await cleanup()
      for (const d of dirs) await rm(d, { recursive: true, force: true })
    })

    it('a service on another model refuses the namespace, naming both models and what to do, and loses nothing of it', async () => {
      const dataDir = await mkdtemp(join(tmpdir(), 'recall-namespace-model-'))
      dirs.push(dataDir)

      let app = await open(dataDir, ZH, backend())
      expect((await ingest(app, 'zh-notes', ZH_DOCS)).statusCode).toBe(200)
      expect((await hybrid(app, 'zh-notes', '咳嗽三周要做什么检查')).json<{ recall_bundle: Array<{ id: string }> }>().recall_bundle[0]?.id).toBe('cough#0')
      await app.close()

      app = await open(dataDir, EN, backend())
      try {
        const refusals = [
          await hybrid(app, 'zh-notes', 'cough'),
          await app.inject({ method: 'POST', url: '/retrieve', payload: { mode: 'episodic', namespace: 'zh-notes', query: 'cough' } }),
          await ingest(app, 'zh-notes', [{ id: 'more', text: 'A third note.' }]),
          await app.inject({ method: 'DELETE', url: '/documents/cough?namespace=zh-notes' })
        ]
        for (const r of refusals) {
          expect(r.statusCode, r.body).toBe(409)
          const body = r.json<{ code: string; message: string }>()
          expect(body.code).toBe('RECALL_MODEL_MISMATCH')
          expect(body.message).toContain(`namespace "zh-notes" holds vectors made with ${ZH}, and this service embeds with ${EN}`)
          expect(body.message).toContain(`EMBEDDING_MODEL=${ZH}`)
          expect(body.message).toContain(`re-embed it in place (EMBEDDING_MODEL=${EN} npm run reembed -- --namespace zh-notes)`)
          expect(body.message).toContain('or drop it (DELETE /namespaces/zh-notes, on a service of either model) and ingest its sources again here')
        }

        // its own namespaces work, with English vectors and stemming
        expect((await ingest(app, 'en-notes', EN_DOCS)).statusCode).toBe(200)
        const leg = async (legs: string, query: string) => (await app.inject({
          method: 'POST', url: '/retrieve', payload: { mode: 'hybrid', namespace: 'en-notes', query, top_k: 3, legs: [legs] }
        })).json<{ recall_bundle: Array<{ id: string }> }>().recall_bundle.map((i) => i.id)
        // the lexical leg alone meets another form of the words; the vector leg alone a question without them
        expect(await leg('lexical', 'Who made paintings?')).toEqual(['paint#0'])
        expect(await leg('lexical', 'puppy adoption')).toEqual(['dogs#0'])
        expect((await leg('vector', 'Who went to a meeting for queer people?'))[0]).toBe('group#0')
        expect((await hybrid(app, 'en-notes', 'puppy adoption')).json<{ recall_bundle: Array<{ id: string }> }>().recall_bundle[0]?.id).toBe('dogs#0')
      } finally {
        await app.close()
      }

      app = await open(dataDir, ZH, backend())
      try {
        // nothing of the refused writes landed
        expect(await documentCount(app, 'zh-notes')).toBe(2)
        expect((await hybrid(app, 'zh-notes', '咳嗽三周要做什么检查')).json<{ recall_bundle: Array<{ id: string }> }>().recall_bundle[0]?.id).toBe('cough#0')
        const other = await hybrid(app, 'en-notes', 'paintings')
        expect(other.statusCode).toBe(409)
        expect(other.json<{ message: string }>().message).toContain(`namespace "en-notes" holds vectors made with ${EN}, and this service embeds with ${ZH}`)
        // a drop by the model that made it forgets the record: the namespace is free for any model again
        expect((await app.inject({ method: 'DELETE', url: '/namespaces/zh-notes' })).statusCode).toBe(200)
      } finally {
        await app.close()
      }

      app = await open(dataDir, EN, backend())
      try {
        expect((await ingest(app, 'zh-notes', EN_DOCS)).statusCode).toBe(200)
      } finally {
        await app.close()
      }
    })

    it('a namespace written before namespaces recorded their model counts as the default model\'s', async () => {
      const dataDir = await mkdtemp(join(tmpdir(), 'recall-namespace-model-legacy-'))
      dirs.push(dataDir)
      let app = await open(dataDir, ZH, backend())
      expect((await ingest(app, 'old', ZH_DOCS)).statusCode).toBe(200)
      // as an earlier version left it: vectors in the default collections, no record
      await app.services.vectors.dropNamespace(app.services.config.namespaceModels.records, 'old')
      await app.close()
      app = await open(dataDir, EN, backend())
      try {
        const r = await hybrid(app, 'old', 'cough')
        expect(r.statusCode).toBe(409)
        expect(r.json<{ message: string }>().message).toContain(`holds vectors made with ${ZH}`)
      } finally {
        await app.close()
      }
    })
  })
}

describeModelRecords('embedded stores', () => ({}))

const prefix = `nsmodel_${process.pid}_`
describe.skipIf(!qdrantUrl)('on Qdrant', () => {
  describeModelRecords('Qdrant', () => ({ VECTOR_BACKEND: 'qdrant', QDRANT_URL: qdrantUrl!, COLLECTION_PREFIX: prefix }), async () => {
    const client = new QdrantClient({ url: qdrantUrl!, checkCompatibility: false })
    const { collections } = await client.getCollections()
    for (const c of collections.filter((c) => c.name.startsWith(prefix))) await client.deleteCollection(c.name)
  })
})

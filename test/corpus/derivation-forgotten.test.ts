/**
 * A write's derivation is shared by its graph part and its Episodes part, then let go (issue 44): kept beside the
 * catalog's chunk records for as long as they were held, it made the ingesting process hold a third more heap than a
 * restarted one on the same data. After a documents write, a rebuild of the derived channels and a write replayed
 * from the journal, nothing is kept for the written documents' stored chunks, and the stores hold what was derived.
 */
import { randomBytes } from 'node:crypto'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { derivationHeld, derivedContribution, forgetDerived, storedChunksOf } from '../../src/corpus/derived-contribution.js'
import type { DocumentLibraryView } from '../../src/corpus/document-views.js'
import { loadDerivationOptions } from '../../src/corpus/derived-graph.js'
import { deriveDocument } from '../../src/derive/document.js'
import { derivationOptions } from '../../src/derive/options.js'
import type { ChunkRecord } from '../../src/kernel/chunk-payload.js'
import { buildTestApp, type TestApp } from '../helpers/build.js'
import { runQdrantUrl } from '../helpers/two-replicas.js'

const NS = 'derivation-forgotten'
const documents = [
  { id: 'auth', text: '# 鉴权中间件\n\n鉴权中间件由平台组负责维护，依赖 Redis 集群。\n\n## 升级\n\n平台组在周会上复盘鉴权中间件的升级。' },
  { id: 'drug', text: '# 用药提示\n\n左氧氟沙星禁用于18岁以下儿童，孕妇慎用。' }
]

describe('forgetDerived', () => {
  const options = derivationOptions({ userDictionary: ['鉴权中间件', '平台组'] })
  const chunk = (id: string, index: number, text: string): ChunkRecord => ({ id, doc_id: 'doc', chunk_index: index, text, source: 'doc' })
  const records = [chunk('doc#0', 0, '鉴权中间件由平台组负责维护。'), chunk('doc#1', 1, '平台组在周会上复盘。')]
  // a library view holding exactly these records (the write path's view of the catalog)
  const library = {
    storedChunks: (docId: string) => new Map(docId === 'doc' ? records.map((r) => [r.id, r.text] as const) : []),
    chunk: (id: string) => records.find((r) => r.id === id)
  } as unknown as DocumentLibraryView

  it('drops the derivation kept for a document, so the same records derive again to an equal result', () => {
    const first = derivedContribution(storedChunksOf('doc', library), options)
    expect(derivationHeld(records)).toBe(true)
    forgetDerived(['doc', 'absent'], library)
    expect(derivationHeld(records)).toBe(false)
    const again = derivedContribution(storedChunksOf('doc', library), options)
    expect(again).not.toBe(first)
    expect(again).toEqual(first)
  })
})

describe('a documents write with the derived graph and Episodes on', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await buildTestApp({ DERIVED_GRAPH: 'true', DERIVED_EPISODES: 'true' })
  }, 300_000)
  afterAll(async () => { await t?.close() })

  const held = () => documents.map((d) => derivationHeld(storedChunksOf(d.id, t.app.services.documents.get(NS))))

  it('keeps no derivation once it answered, and the graph and Episodes hold what was derived', async () => {
    const written = await t.app.services.writePath.write(NS, { kind: 'documents', op: 'upsert', documents })
    expect(written.derived?.entities).toBeGreaterThan(0)
    expect(held()).toEqual([false, false])
    // what the write derived is in the store: the names a derivation of the stored chunks gives, made again here
    const { config, documents: libraries, graph } = t.app.services
    const options = loadDerivationOptions(config.derivation.dictionaryFile, { ngramMinCount: config.derivation.ngramMinCount })
    const expected = documents.flatMap((d) => deriveDocument(storedChunksOf(d.id, libraries.get(NS)), options).entities.map((e) => e.name))
    expect(expected.length).toBeGreaterThan(0)
    const names = (await graph.names(NS)).filter((e) => e.derived).map((e) => e.name)
    expect(new Set(names)).toEqual(new Set(expected))
    expect((await t.app.services.episodes.countByType(NS))['Episode']).toBeGreaterThanOrEqual(documents.length)
  })

  it('keeps none after a rebuild of the derived channels either', async () => {
    await t.app.services.writePath.write(NS, { kind: 'rebuild', op: 'rebuild', ids: ['auth'], channels: ['derived_graph', 'derived_episodes'] })
    expect(held()).toEqual([false, false])
  })
})

// the write journal is kept over Qdrant only (the embedded stores' logs are their own): a replayed write derives too
const qdrantUrl = runQdrantUrl('the replayed-write case of derivation-forgotten')
describe.skipIf(!qdrantUrl)('a documents write replayed from the journal at start-up', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await buildTestApp({
      VECTOR_BACKEND: 'qdrant', QDRANT_URL: qdrantUrl, COLLECTION_PREFIX: `forgotten${randomBytes(3).toString('hex')}_`,
      DERIVED_GRAPH: 'true', DERIVED_EPISODES: 'true'
    })
  }, 300_000)
  afterAll(async () => { await t?.close() })

  it('derives the written documents and keeps no derivation after it', async () => {
    await mkdir(join(t.dataDir, 'journal', 'writes'), { recursive: true })
    await writeFile(join(t.dataDir, 'journal', 'writes', '000000000000001-test.json'), JSON.stringify({
      // announced while the namespace held none of them (`before`), never reached: the replay writes them whole
      namespace: NS, change: { kind: 'documents', op: 'upsert', documents }, before: Object.fromEntries(documents.map((d) => [d.id, null]))
    }))
    expect(await t.app.services.writePath.recover(['documents'])).toBe(1)
    const library = t.app.services.documents.get(NS)
    expect(documents.map((d) => storedChunksOf(d.id, library).length > 0)).toEqual([true, true])
    expect(documents.map((d) => derivationHeld(storedChunksOf(d.id, library)))).toEqual([false, false])
    expect((await t.app.services.graph.count(NS)).entities).toBeGreaterThan(0)
  })
})

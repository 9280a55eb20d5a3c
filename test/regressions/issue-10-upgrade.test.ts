/**
 * Issue 10, upgrade: a DATA_DIR written by the version before namespaces (test/fixtures/before-namespaces,
 * made by that version) opens with everything in `default`, every mode answering from it, and its files
 * untouched by opening, reading, or writing into another namespace, except the two graph stores' JSON
 * files, which issue 18 upgrades in place to the store kernel's snapshot and log at open.
 */
import { createHash } from 'node:crypto'
import { cp, mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/http/app.js'
import { loadConfig } from '../../src/config.js'
import { openServices } from '../../src/services.js'
import { createRuntime } from '../../src/runtime.js'

const FIXTURE = join(import.meta.dirname, '../fixtures/before-namespaces')
/** The files the store kernel upgrades at open (issue 18); every other file of the fixture stays as it is. */
const UPGRADED = ['graph/knowledge-graph.json', 'episodic/graph.json']

/**
 * Every file under `dir` with the SHA-256 of its bytes; not `writer.json`, the running process's registration as the
 * DATA_DIR's one writer (its heartbeat is rewritten while it runs), which is not data.
 */
async function fingerprint(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {}
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || entry.name === 'README.md' || (entry.parentPath === dir && entry.name === 'writer.json')) continue
    const path = join(entry.parentPath, entry.name)
    out[path.slice(dir.length + 1)] = createHash('sha256').update(await readFile(path)).digest('hex')
  }
  return out
}

let dataDir: string
let app: FastifyInstance
let before: Record<string, string>

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'recall-upgrade-'))
  await cp(FIXTURE, dataDir, { recursive: true })
  before = await fingerprint(dataDir)
  // DERIVED_EPISODES off: a first derived Episode creates the `derived_` vector collections, files of their own beside
  // the old ones, where this test holds that a write adds only the new namespace's files
  const config = loadConfig({ DATA_DIR: dataDir, DEMO_DATA: 'false', MODEL_DIR: process.env.MODEL_DIR ?? './models', DERIVED_EPISODES: 'false' })
  app = await buildApp(createRuntime(await openServices(config)), { logger: false })
  await app.ready()
})
afterAll(async () => {
  await app.close()
  await rm(dataDir, { recursive: true, force: true })
})

const retrieve = async (payload: object) => {
  const r = await app.inject({ method: 'POST', url: '/retrieve', payload })
  expect(r.statusCode, r.body).toBe(200)
  return r.json()
}

describe('a DATA_DIR from the version before namespaces', () => {
  it('opens with everything in default', async () => {
    const r = await app.inject({ method: 'GET', url: '/namespaces' })
    const listed = r.json().namespaces
    expect(listed).toHaveLength(1)
    expect(listed[0]).toMatchObject({ namespace: 'default', documents: 2, entities: 2, relations: 1, episodes: 1 })
    const docs = (await app.inject({ method: 'GET', url: '/documents' })).json()
    expect(docs.documents.map((d: { id: string }) => d.id)).toEqual(['cough', 'travel'])
    expect(listed[0].chunks).toBe(docs.chunks)
  })

  it('the upgraded graph stores hold what the old JSON files held (counts and content)', async () => {
    const kg = JSON.parse(await readFile(join(FIXTURE, 'graph/knowledge-graph.json'), 'utf8')) as {
      entities: { id: string; name: string }[]; relations: { source: string; target: string; type: string }[]
    }
    const ep = JSON.parse(await readFile(join(FIXTURE, 'episodic/graph.json'), 'utf8')) as { episodes: { episode: { id: string; summary: string } }[] }
    const listed = (await app.inject({ method: 'GET', url: '/namespaces' })).json().namespaces[0]
    expect({ entities: listed.entities, relations: listed.relations, episodes: listed.episodes })
      .toEqual({ entities: kg.entities.length, relations: kg.relations.length, episodes: ep.episodes.length })
    for (const entity of kg.entities) {
      const hits = (await retrieve({ mode: 'graphrag', query: entity.name, top_k: 10 })).recall_bundle as { id: string; metadata: { entity_name: string; relations: { source: string; target: string; type: string }[] } }[]
      const item = hits.find((i) => i.id === entity.id)
      expect(item, entity.id).toBeDefined()
      expect(item!.metadata.entity_name).toBe(entity.name)
      const mine = kg.relations.filter((r) => r.source === entity.id || r.target === entity.id)
      expect(item!.metadata.relations.map((r) => ({ source: r.source, target: r.target, type: r.type }))).toEqual(mine.map((r) => ({ source: r.source, target: r.target, type: r.type })))
    }
    for (const { episode } of ep.episodes) {
      const items = (await retrieve({ mode: 'episodic', query: episode.summary, top_k: 5 })).recall_bundle as { id: string; text: string }[]
      const item = items.find((i) => i.id === episode.id)
      expect(item, episode.id).toBeDefined()
      expect(item!.text).toContain(episode.summary)
    }
  })

  it('answers every mode from it, the old calls unchanged, metadata and filters included', async () => {
    const hybrid = await retrieve({ mode: 'hybrid', query: '咳嗽三周要做什么检查', top_k: 1 })
    expect(hybrid.recall_bundle[0]).toMatchObject({ id: 'cough#0', metadata: { doc_metadata: { lang: 'zh', year: 2024 } } })
    expect(hybrid.legs.map((l: { status: string }) => l.status)).toEqual(['ok', 'ok', 'ok'])
    const lexical = await retrieve({ mode: 'hybrid', query: '发票报销', legs: ['lexical'] })
    expect(lexical.recall_bundle.map((i: { id: string }) => i.id)).toEqual(['travel#0'])
    const filtered = await retrieve({ mode: 'hybrid', query: '检查', filter: { metadata: { year: { gte: 2024 } } } })
    expect(new Set(filtered.recall_bundle.map((i: { metadata: { doc_id: string } }) => i.metadata.doc_id))).toEqual(new Set(['cough']))
    const graphrag = await retrieve({ mode: 'graphrag', query: '北大在哪里' })
    expect(graphrag.recall_bundle.map((i: { id: string }) => i.id)).toEqual(['pku', 'bj'])
    const episodic = await retrieve({ mode: 'episodic', query: '网关流式改造的边界' })
    expect(episodic.recall_bundle.map((i: { id: string }) => i.id)).toEqual(['E1'])
    const inRange = await retrieve({ mode: 'episodic', query: '网关流式改造的边界', filter: { time_range: { start: '2025-03-01T12:00:00Z' } } })
    expect(inRange.recall_bundle.map((i: { id: string }) => i.id)).toEqual(['E1'])
    const get = await app.inject({ method: 'GET', url: `/retrieve?mode=hybrid&q=${encodeURIComponent('住宿标准')}&top_k=1` })
    expect(get.json().recall_bundle[0].id).toBe('travel#0')
  })

  it('leaves its files untouched, also when another namespace is written (the graph JSON files upgraded in place)', async () => {
    const opened = await fingerprint(dataDir)
    // issue 18: each graph store read its old whole-state JSON once and wrote it as a snapshot and a log
    for (const old of UPGRADED) {
      expect(before[old], old).toBeDefined()
      expect(opened[old], old).toBeUndefined()
      const stem = old.replace(/\.json$/, '')
      expect(opened[`${stem}.snap`], stem).toBeDefined()
      expect(opened[`${stem}.log`], stem).toBeDefined()
    }
    const unchanged = Object.fromEntries(Object.entries(before).filter(([f]) => !UPGRADED.includes(f)))
    // issue 41: opening embeds the old graph's entity names into a collection of its own (new files; no old file changes)
    const entityNames = (f: string) => f.startsWith('vectors/recall_entity_names.')
    // issue 43: the embedding sessions' shared weights are a copy of the model made on first start (new files, a cache)
    const sharedWeights = (f: string) => f.startsWith('embedding-weights/')
    // issue 44: the catalogs' checkpoint files are written in the background once start-up has settled (a cache)
    const catalogFiles = (f: string) => f.startsWith('catalog/')
    expect(Object.fromEntries(Object.entries(opened).filter(([f]) => !entityNames(f) && !sharedWeights(f) && !catalogFiles(f) && (!/\.(snap|log)$/.test(f) || !f.startsWith('graph/') && !f.startsWith('episodic/'))))).toEqual(unchanged)
    before = opened
    const r = await app.inject({
      method: 'POST', url: '/ingest/documents',
      payload: { namespace: 'tenant-a', documents: [{ id: 'cough', text: '# 另一个咳嗽文档\n\n租户 a 的咳嗽随访。' }] }
    })
    expect(r.statusCode, r.body).toBe(200)
    const after = await fingerprint(dataDir)
    const added = Object.keys(after).filter((f) => !(f in before))
    // the first write that embeds creates the service-wide collection of namespace model records (issue 40), and the
    // first that derives the collection of derivation records (issue 41, index status) and the entity-name collection
    // (issue 41, entity vectors), whose files of their own sit
    // beside the old ones; every other file added is the new namespace's
    const records = ['recall_namespace_models', 'recall_derivation_status', 'recall_entity_names'].flatMap((c) => [`vectors/${c}.log`, `vectors/${c}.snap`])
    expect(added.filter((f) => !records.includes(f) && !catalogFiles(f)).every((f) => f.split('/').includes('namespaces') && f.includes('tenant-a')), added.join(', ')).toBe(true)
    for (const [file, hash] of Object.entries(before)) if (!catalogFiles(file)) expect(after[file], file).toBe(hash)
    const texts = (await retrieve({ mode: 'hybrid', query: '咳嗽', legs: ['lexical'] })).recall_bundle.map((i: { text: string }) => i.text)
    expect(texts.length).toBeGreaterThan(0)
    expect(texts.filter((text: string) => text.includes('租户 a'))).toEqual([])
  })
})

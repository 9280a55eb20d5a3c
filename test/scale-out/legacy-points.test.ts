/**
 * Points a version before namespaces wrote to Qdrant carry no `namespace` in their payload. The first start-up gives
 * them to `default` through the write path (docs/write-path.md, "Points written before namespaces"): under the
 * `documents:` lock of `default` (seen in Redis with MONITOR), journalled (a start-up killed right after the journal
 * record finishes it on the next), recorded as a hybrid write. A second start-up finds none and writes nothing.
 *
 * The old deployment's data is made as that version left it: documents written into `default`, then their points'
 * `namespace` removed through Qdrant's REST API (the point ids of `default` are the ids that version gave them).
 */
import { randomBytes } from 'node:crypto'
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { QdrantClient } from '@qdrant/js-client-rest'
import { Redis } from 'ioredis'
import { afterAll, describe, expect, inject, it } from 'vitest'
import { startServer, type ServerProcess } from '../../scripts/lib/server-process.js'
import { chunkDocument } from '../../src/corpus/documents/chunking.js'
import { buildTestApp, type TestApp } from '../helpers/build.js'
import { runQdrantUrl, sharedQdrantEnv } from '../helpers/two-replicas.js'

const qdrantUrl = runQdrantUrl('the legacy-point adoption tests')

const OLD_DEFAULT = [
  { id: 'cough', text: '慢性咳嗽超过三周，建议先做胸部X线检查和肺功能检查。' },
  { id: 'fever', text: '发热时先测体温，多喝水，超过三十九度就医。' }
]
const OTHER = [{ id: 'travel', text: '差旅住宿标准为一线城市每晚六百元。' }]
const LEASE_MS = 1000
const LEGACY_CHUNKS = OLD_DEFAULT.flatMap((d) => chunkDocument(d)).length

describe.skipIf(!qdrantUrl)('points written before namespaces', () => {
  const client = new QdrantClient({ url: qdrantUrl, checkCompatibility: false })
  const prefixes: string[] = []
  const dirs: string[] = []
  afterAll(async () => {
    const { collections } = await client.getCollections()
    for (const c of collections.filter((c) => prefixes.some((p) => c.name.startsWith(p)))) await client.deleteCollection(c.name)
    for (const d of dirs) await rm(d, { recursive: true, force: true })
  })

  const legacyCount = async (collection: string) =>
    (await client.count(collection, { exact: true, filter: { must: [{ is_empty: { key: 'namespace' } }] } })).count

  /** Writes `default` and `other` through a service, then leaves `default`'s points as the old version wrote them. */
  async function oldDeployment(env: Record<string, string>): Promise<{ collection: string; generation: number }> {
    prefixes.push(env.COLLECTION_PREFIX!)
    const old = await buildTestApp(env)
    try {
      const written = await old.app.inject({ method: 'POST', url: '/ingest/documents', payload: { namespace: 'default', documents: OLD_DEFAULT } })
      expect(written.statusCode, written.body).toBe(200)
      const other = await old.app.inject({ method: 'POST', url: '/ingest/documents', payload: { namespace: 'other', documents: OTHER } })
      expect(other.statusCode, other.body).toBe(200)
      const collection = old.app.services.documents.collection
      await client.deletePayload(collection, { keys: ['namespace'], filter: { must: [{ key: 'namespace', match: { value: 'default' } }] }, wait: true })
      expect(await legacyCount(collection)).toBe(LEGACY_CHUNKS)
      return { collection, generation: written.json<{ generation: number }>().generation }
    } finally {
      await old.close()
    }
  }

  const stepDetail = async (t: TestApp) =>
    (await t.app.inject({ method: 'GET', url: '/readyz' })).json<{ startup: { steps: Array<{ name: string; detail: string }> } }>()
      .startup.steps.find((s) => s.name === 'documents')?.detail.split('; legacy points: ')[1]
  const listed = async (t: TestApp, namespace: string) =>
    (await t.app.inject({ method: 'GET', url: `/documents?namespace=${namespace}` })).json<{ documents: Array<{ id: string }> }>().documents.map((d) => d.id).sort()
  const found = async (t: TestApp, query: string, leg: 'vector' | 'lexical') => {
    const r = await t.app.inject({ method: 'POST', url: '/retrieve', payload: { mode: 'hybrid', namespace: 'default', query, legs: [leg], top_k: 1 } })
    expect(r.statusCode, r.body).toBe(200)
    return r.json<{ recall_bundle: Array<{ metadata: { doc_id: string } }> }>().recall_bundle.map((i) => i.metadata.doc_id)
  }

  it('the first start-up adopts them into default under its lock and records it; the next finds none and writes nothing', async () => {
    // a Redis database of this file's own: no other test file moves `default`'s generation meanwhile
    const env = { ...sharedQdrantEnv('legacy', qdrantUrl), REDIS_URL: `${inject('redisUrl')}/11` }
    const { collection, generation: before } = await oldDeployment(env)

    const monitor = await new Redis(inject('redisUrl')).monitor()
    const locksTaken: string[] = []
    monitor.on('monitor', (_time: string, args: string[]) => {
      const key = args[0]?.toLowerCase() === 'eval' && args[1]?.includes("'NX'") ? args[3] : undefined
      if (key?.startsWith('recall:write-lock:')) locksTaken.push(key.slice('recall:write-lock:'.length))
    })
    let a: TestApp | undefined
    let b: TestApp | undefined
    try {
      a = await buildTestApp(env)
      expect(await stepDetail(a)).toBe(`${LEGACY_CHUNKS} points adopted into default (generation ${before + 1})`)
      expect(await legacyCount(collection)).toBe(0)
      expect(locksTaken).toContain('documents:default')
      const adopted = await a.app.services.generations.readState('hybrid', 'default')
      expect(adopted.generation).toBe(before + 1)
      expect(await listed(a, 'default')).toEqual(['cough', 'fever'])
      expect(await listed(a, 'other')).toEqual(['travel'])
      expect(await found(a, '咳嗽多久要拍胸片', 'vector')).toEqual(['cough'])
      expect(await found(a, '体温', 'lexical')).toEqual(['fever'])

      const locksBefore = locksTaken.length
      b = await buildTestApp(env)
      expect(await stepDetail(b)).toBe('none found')
      expect(locksTaken.slice(locksBefore).filter((l) => l.startsWith('documents:'))).toEqual([])
      expect((await b.app.services.generations.readState('hybrid', 'default')).generation).toBe(before + 1)
      expect(await listed(b, 'default')).toEqual(['cough', 'fever'])
      expect(await found(b, '体温', 'lexical')).toEqual(['fever'])
    } finally {
      monitor.disconnect()
      await a?.close()
      await b?.close()
    }
  }, 600_000)

  it('a start-up killed right after the journal record of the adoption: the next one finishes it', async () => {
    const root = await mkdtemp(join(tmpdir(), 'recall-legacy-crash-'))
    dirs.push(root)
    const env = {
      VECTOR_BACKEND: 'qdrant', QDRANT_URL: qdrantUrl, COLLECTION_PREFIX: `legacycrash${randomBytes(3).toString('hex')}_`,
      DATA_DIR: join(root, 'data'), DEMO_DATA: 'false', VECTOR_TIMEOUT_MS: '30000', CACHE_TTL_SECONDS: '0', SOLE_WRITER_LEASE_MS: String(LEASE_MS)
    }
    const { collection } = await oldDeployment(env)
    await expect(startServer({ ...env, FAILPOINTS: 'after-journal' }, { timeoutMs: 180_000 })).rejects.toThrow(/exited|did not start/)
    const journal = join(env.DATA_DIR, 'journal', 'writes')
    const entries = await readdir(journal)
    expect(entries).toHaveLength(1)
    const entry = JSON.parse(await readFile(join(journal, entries[0]!), 'utf8')) as { namespace: string; change: object }
    expect(entry).toMatchObject({ namespace: 'default', change: { kind: 'legacy-points', op: 'adopt', chunks: collection } })
    expect(await legacyCount(collection)).toBe(LEGACY_CHUNKS)
    await new Promise((resolve) => setTimeout(resolve, LEASE_MS + 200)) // the killed process's sole-writer lease runs out

    let restarted: ServerProcess | undefined
    try {
      restarted = await startServer(env, { timeoutMs: 180_000 })
      expect(await readdir(journal)).toEqual([])
      expect(await legacyCount(collection)).toBe(0)
      const list = await (await fetch(`${restarted.url}/documents?namespace=default`)).json() as { documents: Array<{ id: string }> }
      expect(list.documents.map((d) => d.id).sort()).toEqual(['cough', 'fever'])
    } finally {
      await restarted?.kill('SIGTERM')
    }
  }, 600_000)
})

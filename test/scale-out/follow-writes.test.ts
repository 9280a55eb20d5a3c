import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { QdrantLexicalIndexes } from '../../src/providers/lexical-index/qdrant.js'
import { buildTestApp, type TestApp } from '../helpers/build.js'
import { runQdrantUrl, sharedQdrantEnv, useTwoReplicas } from '../helpers/two-replicas.js'

const qdrantUrl = runQdrantUrl('the follow-writes tests')

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

// Two replicas over one real Qdrant and the run's Redis, following each other's writes (the default), and a third
// that does not (CATALOG_FOLLOW_WRITES=false). After a write through A, B must hold it before any request reaches
// B (its catalog, its copy of the postings, the version it was read at), so that B's next read has nothing to
// catch up; C must still be where its last read left it. Expected: the documents written, A's hybrid version.
describe.skipIf(!qdrantUrl)('catching up as other replicas\' writes are recorded (CATALOG_FOLLOW_WRITES)', () => {
  const env = sharedQdrantEnv('fw', qdrantUrl)
  const namespace = `fw-${randomBytes(3).toString('hex')}`
  let a: TestApp
  let b: TestApp
  let c: TestApp
  useTwoReplicas(env, (pair) => ({ a, b } = pair))
  beforeAll(async () => { c = await buildTestApp({ ...env, CATALOG_FOLLOW_WRITES: 'false' }) })
  afterAll(async () => { await c?.close() })

  const ingest = async (documents: object[]) => {
    const r = await a.app.inject({ method: 'POST', url: '/ingest/documents', payload: { namespace, documents } })
    expect(r.statusCode, r.body).toBe(200)
  }
  const ids = async (t: TestApp) =>
    (await t.app.inject({ method: 'GET', url: `/documents?namespace=${namespace}` })).json().documents.map((d: { id: string }) => d.id)
  const hybridVersion = async () => (await a.app.services.generations.readState('hybrid', namespace)).version
  const catchUpCount = async (t: TestApp) => {
    const text = (await t.app.inject({ method: 'GET', url: '/metrics' })).body
    return [...text.matchAll(/^recall_catalog_catch_up_seconds_count\{[^}]*\} (\d+)$/gm)].reduce((n, m) => n + Number(m[1]), 0)
  }
  const lexicalPaths = async (t: TestApp) => {
    const text = (await t.app.inject({ method: 'GET', url: '/metrics' })).body
    return Object.fromEntries<number>([...text.matchAll(/^recall_lexical_searches_total\{path="([\w:-]+)"\} (\d+)$/gm)].map((m) => [m[1]!, Number(m[2])] as const))
  }

  it('B holds A\'s write before a request reaches it; C, not following, only at its next read', async () => {
    await ingest([{ id: 'cough', text: '咳嗽三周以上应做胸片检查。' }])
    // first reads: a namespace is followed once this replica has read it
    expect(await ids(b)).toEqual(['cough'])
    expect(await ids(c)).toEqual(['cough'])
    const readAt = b.app.services.sharedCatalog!.versionOf(namespace)
    expect(c.app.services.sharedCatalog!.versionOf(namespace)).toBe(readAt)

    await ingest([{ id: 'fever', text: '发热超过三天应就医，体温超过三十九度可用退烧药。' }])
    const written = await hybridVersion()
    expect(written).not.toBe(readAt)
    const deadline = Date.now() + 5_000
    while (b.app.services.sharedCatalog!.versionOf(namespace) !== written) {
      if (Date.now() > deadline) throw new Error(`B never caught up to ${written} on its own (still at ${b.app.services.sharedCatalog!.versionOf(namespace)})`)
      await sleep(10)
    }
    expect(b.app.services.documents.get(namespace)!.has('fever')).toBe(true)
    const copy = (b.app.services.lexical as QdrantLexicalIndexes).get(namespace)
    await copy.localCopyIdle()
    expect(copy.localCopyReady).toBe(true)

    // B's read finds nothing to catch up, and answers from its copy
    const before = await catchUpCount(b)
    const pathsBefore = await lexicalPaths(b)
    copy.recordRounds = true
    const r = await b.app.inject({ method: 'POST', url: '/retrieve', payload: { mode: 'hybrid', namespace, legs: ['lexical'], query: '发热就医' } })
    expect(r.statusCode, r.body).toBe(200)
    expect(r.json().recall_bundle.map((i: { id: string }) => i.id)).toEqual(['fever#0'])
    expect(copy.rounds).toEqual([-1])
    expect(await catchUpCount(b)).toBe(before)
    const pathsAfter = await lexicalPaths(b)
    expect(Object.fromEntries(Object.entries(pathsAfter).map(([k, n]) => [k, n - (pathsBefore[k] ?? 0)]).filter(([, n]) => n !== 0)))
      .toEqual({ 'local-copy': 1 })

    // C heard nothing: still at its last read, until a read catches it up
    await sleep(200)
    expect(c.app.services.sharedCatalog!.versionOf(namespace)).toBe(readAt)
    expect(await ids(c)).toEqual(['cough', 'fever'])
    expect(c.app.services.sharedCatalog!.versionOf(namespace)).toBe(written)
  })

  it('a namespace B never read is not read because A wrote it', async () => {
    const other = `fw-${randomBytes(3).toString('hex')}`
    const r = await a.app.inject({ method: 'POST', url: '/ingest/documents', payload: { namespace: other, documents: [{ id: 'x', text: '夜间告警由二线值班处理。' }] } })
    expect(r.statusCode, r.body).toBe(200)
    await sleep(300)
    expect(b.app.services.sharedCatalog!.versionOf(other)).toBeUndefined()
    expect(b.app.services.documents.get(other)).toBeUndefined()
  })
})

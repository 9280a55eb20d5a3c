/**
 * `POST /ingest/documents` as a job: 202 and `Location`, progress readable while it runs, the same answer at the end;
 * a cancel mid-job leaves every document wholly written (as a synchronous ingest writes it) or absent; small bodies
 * answer as before. Each ingest is one log line and counted in `/metrics`, beside per-namespace gauges.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../../src/config.js'
import { buildApp } from '../../../src/http/app.js'
import { openServices } from '../../../src/services.js'
import { createRuntime } from '../../../src/runtime.js'
import { captureLogs } from '../../helpers/log-capture.js'
import { withServices, type TestFastify } from '../../helpers/build.js'

let app: TestFastify
let dataDir: string
let logs: Array<Record<string, unknown>>

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'recall-jobs-'))
  // small thresholds, so that a test body is a job and a job has many batches (one document each)
  const config = loadConfig({ DATA_DIR: dataDir, DEMO_DATA: 'false', MODEL_DIR: process.env.MODEL_DIR ?? './models', DERIVED_GRAPH: 'false', DERIVED_EPISODES: 'false', INGEST_JOB_BODY_BYTES: '20000', INGEST_JOB_BATCH_CHUNKS: '2' })
  const services = await openServices(config)
  const captured = captureLogs()
  logs = captured.logs
  // one logger for the app and the runtime's jobs, as the server shares one
  const logger = pino({ level: 'info' }, captured.stream)
  app = withServices(await buildApp(createRuntime(services, { logger }), { loggerInstance: logger }), services)
  await app.ready()
}, 300_000)
afterAll(async () => {
  await app?.close()
  await rm(dataDir, { recursive: true, force: true })
})

/** A document of three paragraphs, about two chunks, every one of its own. */
const para = (i: number, p: number) => `第${i}号文档的第${p}段说明了值班安排。` + `夜间告警由二线值班人员处理，白天由一线处理，交接时记录未决事项${i}。`.repeat(6)
const doc = (i: number) => ({ id: `doc-${i}`, source: `notes/${i}.md`, text: `# 文档 ${i}\n\n${[0, 1, 2].map((p) => para(i, p)).join('\n\n')}` })
const docs = (from: number, n: number) => Array.from({ length: n }, (_, k) => doc(from + k))

const post = (body: unknown, query = '') => app.inject({ method: 'POST', url: `/ingest/documents${query}`, payload: body as object })
const job = async (id: string) => (await app.inject({ method: 'GET', url: `/ingest/jobs/${id}` })).json()
async function until(id: string, done: (j: any) => boolean, ms = 240_000): Promise<any> {
  const deadline = Date.now() + ms
  for (;;) {
    const j = await job(id)
    if (done(j) || Date.now() > deadline) return j
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}
/** A namespace's stored chunks of each document: id -> chunk id -> text. */
function stored(namespace: string): Map<string, Map<string, string>> {
  const library = app.services.documents.get(namespace)
  return new Map((library?.list() ?? []).map((d) => [d.id, library!.storedChunks(d.id)]))
}
async function scrape(): Promise<string> {
  return (await app.inject({ method: 'GET', url: '/metrics' })).body
}
function sample(text: string, name: string, labels: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}} `))
  return line === undefined ? undefined : Number(line.split(' ').at(-1))
}

describe('ingest jobs', () => {
  it('a small body answers when written, exactly as before, logged once and counted', async () => {
    const before = sample(await scrape(), 'recall_ingests_total', 'outcome="written"') ?? 0
    const r = await post({ namespace: 'small', documents: docs(0, 2) })
    expect(r.statusCode).toBe(200)
    const body = r.json()
    expect(Object.keys(body).sort()).toEqual(['chunks', 'documents', 'generation', 'replaced', 'took_ms', 'unchanged', 'unchanged_ids'])
    expect(body).toMatchObject({ documents: 2, replaced: 0, unchanged: 0 })
    const lines = logs.filter((l) => l.msg === 'ingest' && l.namespace === 'small')
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatchObject({ outcome: 'written', documents: 2, chunks: body.chunks, replaced: 0, unchanged: 0, refused: 0 })
    expect(typeof lines[0]!.ms).toBe('number')
    const text = await scrape()
    expect(sample(text, 'recall_ingests_total', 'outcome="written"')).toBe(before + 1)
    expect(sample(text, 'recall_namespace_documents', 'namespace="small"')).toBe(2)
    expect(sample(text, 'recall_namespace_chunks', 'namespace="small"')).toBe(stored('small').get('doc-0')!.size + stored('small').get('doc-1')!.size)
    // sent again: unchanged, logged and counted so
    const again = await post({ namespace: 'small', documents: docs(0, 2) })
    expect(again.json()).toMatchObject({ unchanged: 2 })
    expect(logs.filter((l) => l.msg === 'ingest' && l.namespace === 'small').at(-1)).toMatchObject({ outcome: 'unchanged', unchanged: 2 })
    expect(sample(await scrape(), 'recall_ingest_documents_total', 'outcome="unchanged"')).toBeGreaterThanOrEqual(2)
  }, 120_000)

  it('a refused body is one log line naming what was refused, and counted', async () => {
    const before = sample(await scrape(), 'recall_ingests_total', 'outcome="refused"') ?? 0
    const r = await post({ namespace: 'refused', documents: [doc(1), { id: 'blank', text: '   ' }] })
    expect(r.statusCode).toBe(400)
    expect(logs.filter((l) => l.msg === 'ingest' && l.namespace === 'refused')).toEqual([
      expect.objectContaining({ outcome: 'refused', documents: 0, refused: 2, error: expect.stringContaining('blank') })
    ])
    expect(sample(await scrape(), 'recall_ingests_total', 'outcome="refused"')).toBe(before + 1)
  })

  it('wait=false runs as a job: 202 with Location, progress, and at the end the synchronous answer with its generation', async () => {
    const r = await post({ namespace: 'job', documents: docs(0, 4) }, '?wait=false')
    expect(r.statusCode).toBe(202)
    const started = r.json()
    expect(r.headers.location).toBe(`/ingest/jobs/${started.id}`)
    expect(started).toMatchObject({ namespace: 'job', state: 'running', status_url: `/ingest/jobs/${started.id}`, documents: { done: 0, total: 4 }, errors: [] })
    const ended = await until(started.id, (j) => j.state !== 'running')
    expect(ended.state).toBe('done')
    const held = stored('job')
    const chunks = [...held.values()].reduce((n, c) => n + c.size, 0)
    expect(ended.documents).toEqual({ done: 4, total: 4 })
    expect(ended.chunks).toEqual({ done: chunks, total: chunks })
    expect(ended.result).toMatchObject({ documents: 4, chunks, replaced: 0, unchanged: 0, unchanged_ids: [] })
    expect(ended.result.generation).toBe((await app.services.generations.readState('hybrid', 'job')).generation)
    expect(ended.rate.chunks_per_second).toBeGreaterThan(0)
    expect(ended.eta_seconds).toBeUndefined()
    // the generation reads the documents
    const list = await app.inject({ method: 'GET', url: `/documents?namespace=job&min_generation=${ended.result.generation}` })
    expect(list.json().total).toBe(4)
    expect(logs.filter((l) => l.msg === 'ingest' && l.namespace === 'job')).toEqual([
      expect.objectContaining({ outcome: 'written', job: started.id, documents: 4, chunks, replaced: 0, unchanged: 0, refused: 0 })
    ])
  }, 240_000)

  it('a body over INGEST_JOB_BODY_BYTES is a job unless wait=true; a bad one is refused before any job', async () => {
    const big = { namespace: 'big', documents: docs(100, 12) }
    expect(Buffer.byteLength(JSON.stringify(big))).toBeGreaterThan(20_000)
    const r = await post(big)
    expect(r.statusCode).toBe(202)
    await until(r.json().id, (j) => j.state !== 'running')
    const sync = await post({ namespace: 'big-sync', documents: docs(100, 12) }, '?wait=true')
    expect(sync.statusCode).toBe(200)
    expect(sync.json()).toMatchObject({ documents: 12 })
    const bad = await post({ namespace: 'big', documents: [...docs(100, 12), { id: 'doc-100', text: 'again' }] }, '?wait=false')
    expect(bad.statusCode).toBe(400)
    expect(bad.json().message).toMatch(/"doc-100" appears twice/)
  }, 240_000)

  it('DELETE cancels between batches: every document is then wholly written or absent, a re-send writes the rest', async () => {
    const body = { namespace: 'cancel', documents: docs(200, 24) }
    const r = await post(body, '?wait=false')
    const id = r.json().id
    const running = await until(id, (j) => j.documents.done >= 2 || j.state !== 'running')
    expect(running.state).toBe('running')
    expect(running.eta_seconds).toBeGreaterThan(0)
    expect(running.rate.chunks_per_second).toBeGreaterThan(0)
    const cancel = await app.inject({ method: 'DELETE', url: `/ingest/jobs/${id}` })
    expect(cancel.statusCode).toBe(200)
    expect(cancel.json()).toMatchObject({ id, cancel_requested: true })
    const ended = await until(id, (j) => j.state !== 'running')
    expect(ended.state).toBe('cancelled')
    const done = ended.documents.done
    expect(done).toBeGreaterThanOrEqual(2)
    expect(done).toBeLessThan(24)
    // what a synchronous ingest of the same documents writes, in a namespace of its own
    expect((await post({ namespace: 'cancel-reference', documents: body.documents }, '?wait=true')).statusCode).toBe(200)
    const reference = stored('cancel-reference')
    const held = stored('cancel')
    body.documents.forEach((d, i) => {
      if (i < done) expect(held.get(d.id), d.id).toEqual(reference.get(d.id))
      else expect(held.has(d.id), d.id).toBe(false)
    })
    expect(await app.services.vectors.count(app.services.documents.collection, 'cancel')).toBe([...held.values()].reduce((n, c) => n + c.size, 0))
    expect(ended.result).toMatchObject({ documents: done })
    expect(logs.filter((l) => l.msg === 'ingest' && l.namespace === 'cancel')).toEqual([expect.objectContaining({ outcome: 'cancelled', documents: done })])
    // sent again: the written ones are unchanged, the rest written
    const again = await post(body, '?wait=true')
    expect(again.json()).toMatchObject({ documents: 24, unchanged: done })
    expect(stored('cancel')).toEqual(reference)
  }, 300_000)

  it('an unknown job is a 404 that says where jobs live', async () => {
    const r = await app.inject({ method: 'GET', url: '/ingest/jobs/nope' })
    expect(r.statusCode).toBe(404)
    expect(r.json().message).toMatch(/no ingest job "nope" in this process/)
    expect((await app.inject({ method: 'DELETE', url: '/ingest/jobs/nope' })).statusCode).toBe(404)
  })
})

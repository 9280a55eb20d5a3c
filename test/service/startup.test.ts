/**
 * Listen first (docs/operations.md, "Reliability"): the real service in a child process listens before it loads anything; while the
 * model loads and the demo world is ingested, /readyz answers 503 saying what it waits for and how far it
 * got, retrieval answers 503 RECALL_STARTING with Retry-After, progress is logged; readiness flips when
 * everything is loaded. Nothing is printed on stderr (no deprecation warning).
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { startServer, type ServerProcess } from '../../scripts/lib/server-process.js'

let server: ServerProcess | undefined
let dataDir = ''
afterAll(async () => {
  await server?.kill()
  if (dataDir) await rm(dataDir, { recursive: true, force: true })
})

interface Readiness {
  ready: boolean
  backends: { backend: string; ok: boolean }[]
  startup: { done: boolean; steps: { name: string; state: string; detail: string; attempts: number }[] }
}

describe('start-up of the real service with the demo world', () => {
  it('listens at once, reports loading progress, refuses retrieval with Retry-After until loaded, then flips to ready', async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'recall-startup-'))
    server = await startServer({ DATA_DIR: dataDir, DEMO_DATA: 'true', LOG_LEVEL: 'info' }, { until: 'healthz' })
    const url = server.url

    // Listening, and not loaded yet: the demo corpus alone takes seconds to embed.
    const first = await fetch(`${url}/readyz`)
    expect(first.status).toBe(503)
    const early = await first.json() as Readiness
    expect(early.ready).toBe(false)
    expect(early.startup.done).toBe(false)
    expect(early.startup.steps.map((s) => s.name)).toEqual(
      ['sole-writer', 'embedder', 'documents', 'knowledge-graph', 'entity-names', 'demo:graph', 'demo:episodes', 'demo:documents', 'episodic:stores', 'graphrag:names']
    )

    const refused = await fetch(`${url}/retrieve?mode=hybrid&q=${encodeURIComponent('咳嗽检查')}`)
    expect(refused.status).toBe(503)
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
    const body = await refused.json() as { code: string; message: string }
    expect(body.code).toBe('RECALL_STARTING')
    expect(body.message).toMatch(/waiting for .*(embedder|documents|demo:documents)/)

    // How far it got: the demo corpus step counts embedded chunks while it runs.
    let sawProgress = false
    let readiness: Readiness = early
    for (let i = 0; i < 2400 && !readiness.ready; i++) {
      const r = await fetch(`${url}/readyz`)
      readiness = await r.json() as Readiness
      expect(r.status).toBe(readiness.ready ? 200 : 503)
      if (readiness.startup.steps.some((s) => s.name === 'demo:documents' && /\d+ of \d+ chunks embedded/.test(s.detail))) sawProgress = true
      if (!readiness.ready) await new Promise((r) => setTimeout(r, 100))
    }
    expect(readiness.ready).toBe(true)
    expect(readiness.startup.steps.every((s) => s.state === 'done')).toBe(true)
    expect(sawProgress).toBe(true)

    const answered = await fetch(`${url}/retrieve?mode=hybrid&q=${encodeURIComponent('咳嗽三周以上要做什么检查')}`)
    expect(answered.status).toBe(200)
    expect(((await answered.json()) as { recall_bundle: unknown[] }).recall_bundle.length).toBeGreaterThan(0)

    const log = server.output()
    expect(log).toMatch(/start-up: loading the embedding model/)
    expect(log).toMatch(/start-up: demo:documents ready: \d+ documents, \d+ chunks/)
    expect(server.stderr()).toBe('')
  }, 300_000)

  it('restarted on the same folder, reads the stores episodic reads before it is ready, and its first episodic read answers', async () => {
    await server!.kill()
    server = await startServer({ DATA_DIR: dataDir, DEMO_DATA: 'false', LOG_LEVEL: 'info' }, { until: 'healthz' })
    let readiness: Readiness | undefined
    for (let i = 0; i < 2400 && !readiness?.ready; i++) {
      readiness = await (await fetch(`${server.url}/readyz`)).json() as Readiness
      if (!readiness.ready) await new Promise((r) => setTimeout(r, 100))
    }
    // the demo world's derived and imported Episodes: their vectors and graph nodes were read by the step
    const step = readiness!.startup.steps.find((s) => s.name === 'episodic:stores')!
    const [, records, collections, nodes] = /^(\d+) records in (\d+) collections, (\d+) episodic graph nodes$/.exec(step.detail) ?? []
    expect(Number(collections)).toBe(13)
    expect(Number(records)).toBeGreaterThan(100)
    expect(Number(nodes)).toBeGreaterThan(100)
    const episodic = await fetch(`${server.url}/retrieve`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ mode: 'episodic', query: '流式返回那个任务有哪些约束', top_k: 3 })
    })
    expect(episodic.status).toBe(200)
    expect(((await episodic.json()) as { recall_bundle: unknown[] }).recall_bundle.length).toBeGreaterThan(0)
  }, 300_000)
})

/**
 * Backends down at start-up never stop the service (docs/operations.md, "Reliability"): the real service in a child process listens,
 * names each down backend in /readyz, serves what it can, and keeps retrying the start-up steps that need
 * the missing backend. Qdrant is down as a closed port, then comes up on that port: the real server of
 * `../shared/qdrant/` where it is there, else the stand-in that answers as Qdrant does (its requests and
 * answers checked against Qdrant's OpenAPI document), with the lexical leg embedded as the stand-in has no
 * sparse vectors.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { freePort } from '../../scripts/lib/free-port.js'
import { loadQdrantOpenApi } from '../helpers/qdrant-openapi.js'
import { canStartQdrant, startQdrant, type QdrantServer } from '../helpers/qdrant-server.js'
import { startFakeQdrant, type FakeQdrant } from '../helpers/qdrant-stand-in.js'
import { startServer, type ServerProcess } from '../../scripts/lib/server-process.js'
import { describeWith, QDRANT_OPENAPI } from '../helpers/reference-data.js'

interface Readiness {
  ready: boolean
  backends: { backend: string; ok: boolean; detail?: string }[]
  startup: { done: boolean; steps: { name: string; state: string; detail: string; attempts: number }[] }
}

const servers: ServerProcess[] = []
const dirs: string[] = []
let qdrant: FakeQdrant | undefined
let realQdrant: QdrantServer | undefined
afterAll(async () => {
  for (const s of servers) await s.kill()
  await qdrant?.close()
  await realQdrant?.stop('SIGTERM', true)
  for (const d of dirs) await rm(d, { recursive: true, force: true })
})

async function start(env: Record<string, string>): Promise<ServerProcess> {
  const dataDir = await mkdtemp(join(tmpdir(), 'recall-down-'))
  dirs.push(dataDir)
  const server = await startServer({ DATA_DIR: dataDir, DEMO_DATA: 'true', ...env }, { until: 'healthz' })
  servers.push(server)
  return server
}

const readiness = async (url: string): Promise<Readiness> => (await fetch(`${url}/readyz`)).json() as Promise<Readiness>
const step = (r: Readiness, name: string) => r.startup.steps.find((s) => s.name === name)!
const get = (url: string, path: string) => fetch(`${url}${path}`)

async function eventually(check: () => Promise<boolean>, ms: number): Promise<boolean> {
  const until = Date.now() + ms
  for (;;) {
    if (await check()) return true
    if (Date.now() > until) return false
    await new Promise((r) => setTimeout(r, 200))
  }
}

describeWith(QDRANT_OPENAPI)('Qdrant down at start-up', () => {
  it('listens, names it, serves graphrag, refuses hybrid with Retry-After, retries, and loads everything once Qdrant is there', async () => {
    const port = await freePort()
    const real = canStartQdrant()
    const server = await start({
      VECTOR_BACKEND: 'qdrant', QDRANT_URL: `http://127.0.0.1:${port}`, VECTOR_TIMEOUT_MS: '1000',
      ...(real ? {} : { LEXICAL_BACKEND: 'embedded' })
    })
    const url = server.url

    // The first attempt of the document library has failed (connection refused is immediate).
    expect(await eventually(async () => step(await readiness(url), 'documents').state === 'retrying', 60_000)).toBe(true)
    const down = await fetch(`${url}/readyz`)
    expect(down.status).toBe(503)
    const body = await down.json() as Readiness
    expect(body.backends.find((b) => b.backend === 'vector-store:qdrant')).toMatchObject({ ok: false })
    expect(step(body, 'documents').detail).toMatch(/qdrant is unreachable/)

    const hybrid = await get(url, `/retrieve?mode=hybrid&q=${encodeURIComponent('咳嗽')}`)
    expect(hybrid.status).toBe(503)
    expect(Number(hybrid.headers.get('retry-after'))).toBeGreaterThan(0)
    const refused = await hybrid.json() as { code: string; message: string }
    expect(refused.code, refused.message).toBe('RECALL_STARTING')
    // The step's detail says why while it waits for its next attempt, and what it does during one.
    expect(refused.message).toMatch(/waiting for .*documents \((opening the document library|.*qdrant is unreachable)/)

    // The knowledge graph is embedded: graphrag answers from the demo graph meanwhile.
    expect(await eventually(async () => (await get(url, `/retrieve?mode=graphrag&q=${encodeURIComponent('鉴权中间件')}`)).status === 200, 60_000)).toBe(true)
    // Episodic waits for the first attempt at its demo data, then answers 503 naming Qdrant.
    expect(await eventually(async () => {
      const episodic = await get(url, `/retrieve?mode=episodic&q=${encodeURIComponent('流式返回')}`)
      return episodic.status === 503 && (await episodic.json() as { message: string }).message.includes('vector-store:qdrant')
    }, 60_000)).toBe(true)

    // It keeps trying, with growing delays.
    expect(await eventually(async () => step(await readiness(url), 'documents').attempts >= 3, 60_000)).toBe(true)

    if (real) realQdrant = await startQdrant({ port })
    else qdrant = await startFakeQdrant(loadQdrantOpenApi(), { port })
    expect(await eventually(async () => (await readiness(url)).ready, 120_000)).toBe(true)
    const answered = await get(url, `/retrieve?mode=hybrid&q=${encodeURIComponent('咳嗽三周以上要做什么检查')}`)
    expect(answered.status).toBe(200)
    const bundle = await answered.json() as { recall_bundle: unknown[]; legs: { name: string; status: string; hits?: number }[] }
    expect(bundle.recall_bundle.length).toBeGreaterThan(0)
    // on the real server the lexical leg is Qdrant's too (LEXICAL_BACKEND defaults to qdrant), and it finds the demo chunks
    expect(bundle.legs.find((l) => l.name === 'lexical')).toMatchObject({ status: 'ok', hits: expect.any(Number) })
    expect(bundle.legs.find((l) => l.name === 'lexical')!.hits).toBeGreaterThan(0)
    expect(qdrant?.responseErrors ?? []).toEqual([])
  }, 300_000)
})

describe('Neo4j, Redis and a remote embedder down at start-up', () => {
  it('listens, names each in /readyz, answers graphrag 503 naming Neo4j, and hybrid from the lexical leg', async () => {
    const [neo4jPort, redisPort, embedderPort] = [await freePort(), await freePort(), await freePort()]
    const server = await start({
      GRAPH_BACKEND: 'neo4j', NEO4J_URI: `bolt://127.0.0.1:${neo4jPort}`,
      REDIS_URL: `redis://127.0.0.1:${redisPort}`,
      EMBEDDER: 'openai', EMBEDDING_URL: `http://127.0.0.1:${embedderPort}`, EMBEDDING_MODEL: 'bge-small-zh-v1.5'
    })
    const url = server.url
    expect(await eventually(async () => {
      const r = await readiness(url)
      return ['embedder', 'knowledge-graph', 'demo:episodes', 'demo:documents'].every((n) => step(r, n).attempts >= 1 && step(r, n).state !== 'running')
    }, 60_000)).toBe(true)

    const r = await fetch(`${url}/readyz`)
    expect(r.status).toBe(503)
    const body = await r.json() as Readiness
    const down = body.backends.filter((b) => !b.ok).map((b) => b.backend).sort()
    expect(down).toEqual(['cache:redis', 'embedder:openai', 'episodic-graph:neo4j', 'knowledge-graph:neo4j'])

    const graphrag = await get(url, `/retrieve?mode=graphrag&q=${encodeURIComponent('鉴权中间件')}`)
    expect(graphrag.status).toBe(503)
    expect(Number(graphrag.headers.get('retry-after'))).toBeGreaterThan(0)
    expect((await graphrag.json() as { message: string }).message).toContain('knowledge-graph:neo4j')

    // Hybrid serves what it can: the lexical leg over an (empty) library, the embedding leg's failure named.
    const hybrid = await get(url, `/retrieve?mode=hybrid&q=${encodeURIComponent('咳嗽')}`)
    expect(hybrid.status).toBe(200)
    const legs = (await hybrid.json() as { legs: { name: string; status: string; reason?: string }[] }).legs
    expect(legs.find((l) => l.name === 'embedding')).toMatchObject({ status: 'error', reason: expect.stringContaining('embedder:openai') })
    expect(legs.find((l) => l.name === 'lexical')).toMatchObject({ status: 'ok' })
    expect((await fetch(`${url}/analyze`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"text":"流式返回"}' })).status).toBe(200)

    // The failed leg inside that 200 is counted against its backend, as the 503s are.
    const metrics = await (await get(url, '/metrics')).text()
    expect(metrics).toMatch(/recall_backend_errors_total\{backend="embedder:openai"\} [1-9]/)
    expect(metrics).toMatch(/recall_backend_errors_total\{backend="knowledge-graph:neo4j"\} [1-9]/)
    // The response cache's failed lookups too, though they cost only a miss.
    expect(metrics).toMatch(/recall_backend_errors_total\{backend="cache:redis"\} [1-9]/)
  }, 300_000)
})

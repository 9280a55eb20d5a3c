import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { startServer, type ServerProcess } from '../../scripts/lib/server-process.js'
import { heapFlagsFor } from '../../src/memory/limit.js'

// A real service process with a small MEMORY_LIMIT, started as `npm start` starts it (the heap flags from the limit),
// fed documents until it refuses one: the refusal is a 507 naming the limit and the namespace, reads go on, a delete
// is still taken, and the refused write left nothing of itself behind.
const dirs: string[] = []
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true })
})

const NAMESPACE = 'budget'
const MiB = 2 ** 20

interface Memory { limit_bytes: number; limit_source: string; rss_bytes: number; heap_headroom_bytes: number; heap_growing_percent: number | null; rss_refuse_at_bytes: number; refusing_writes: boolean; refused_writes: number }

async function start(limitBytes: number): Promise<ServerProcess> {
  const dataDir = await mkdtemp(join(tmpdir(), 'recall-budget-'))
  dirs.push(dataDir)
  return startServer(
    // no release of the heap after writes (MEMORY_RELEASE_AFTER_MS): it could make room again between the refusal and the checks below
    { DATA_DIR: dataDir, DEMO_DATA: 'false', MEMORY_LIMIT: String(limitBytes), MEMORY_RELEASE_AFTER_MS: '0', RATE_LIMIT_MAX: '0', CACHE_TTL_SECONDS: '0', EMBEDDING_SESSIONS: '1' },
    { args: [...heapFlagsFor(limitBytes), '--import', 'tsx', 'src/http/server.ts'] }
  )
}

const readyz = async (server: ServerProcess) => (await (await fetch(`${server.url}/readyz`)).json()) as { ready: boolean; memory: Memory }

/** Document `n` of batch `b`: a few short sections whose words are its own, so each document adds chunks, entities and an Episode. */
function document(b: number, n: number) {
  const tag = `tag${b}x${n}`
  const sections = [0, 1, 2].map((s) => `## 第${s + 1}节 ${tag}s${s}\n\n项目${tag}的负责人是成员${b}号${n}甲，第${s}阶段在城市${n}乙完成了模块${tag}m${s}的评审。` +
    `模块${tag}m${s}依赖服务${tag}d${s}，由团队${b}丙维护，记录编号 ${tag}r${s}。`)
  return { id: `doc-${b}-${n}`, text: `# 报告 ${tag}\n\n${sections.join('\n\n')}` }
}

const ingest = (server: ServerProcess, documents: object[]) => fetch(`${server.url}/ingest/documents?wait=true`, {
  method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ namespace: NAMESPACE, documents })
})

const lexicalIds = async (server: ServerProcess, q: string) => {
  const r = await fetch(`${server.url}/retrieve?mode=hybrid&legs=lexical&namespace=${NAMESPACE}&q=${encodeURIComponent(q)}`)
  expect(r.status).toBe(200)
  return ((await r.json()) as { recall_bundle: { id: string }[] }).recall_bundle.map((i) => i.id)
}

describe('MEMORY_LIMIT: a write past the budget is refused, reads go on', () => {
  it('refuses with 507 naming the limit and the namespace sizes, keeps answering reads, and writes nothing of the refused batch', async () => {
    // What the idle service holds here decides the limit: a small margin over it, so that a few batches spend it.
    const probe = await start(4 * 1024 * MiB)
    const idle = (await readyz(probe)).memory.rss_bytes
    await probe.kill()
    const limit = Math.ceil((idle + 120 * MiB) / 0.9)
    const server = await start(limit)
    try {
      const before = await readyz(server)
      expect(before.memory).toMatchObject({ limit_bytes: limit, limit_source: 'MEMORY_LIMIT', refusing_writes: false, refused_writes: 0 })
      // started as npm start starts it, with a fixed growing percentage (50): the budget counts the heap's growth and holds it
      expect(before.memory.heap_growing_percent).toBeGreaterThanOrEqual(10)
      expect(before.memory.heap_growing_percent).toBeLessThanOrEqual(50)

      const written: string[] = []
      let chunks = 0
      let refused: { status: number; body: { statusCode: number; code: string; message: string }; ids: string[] } | undefined
      for (let b = 0; b < 200 && !refused; b++) {
        const docs = Array.from({ length: 40 }, (_, n) => document(b, n))
        const r = await ingest(server, docs)
        if (r.status === 507) refused = { status: r.status, body: await r.json() as never, ids: docs.map((d) => d.id) }
        else {
          expect(r.status, await r.clone().text()).toBe(200)
          const summary = await r.json() as { documents: number; chunks: number }
          expect(summary.documents).toBe(docs.length)
          chunks += summary.chunks
          written.push(...docs.map((d) => d.id))
        }
      }
      expect(refused, 'the budget was never spent').toBeDefined()
      expect(written.length).toBeGreaterThan(0)

      // The refusal names the limit, what the namespace holds, and what to do.
      expect(refused!.body).toMatchObject({ statusCode: 507, code: 'RECALL_MEMORY_BUDGET' })
      const { message } = refused!.body
      expect(message).toContain(`MEMORY_LIMIT ${(limit / MiB).toFixed(1)} MiB`)
      expect(message).toContain(`${NAMESPACE}: ${written.length} documents, ${chunks} chunks`)
      expect(message).toMatch(/raise MEMORY_LIMIT/)
      expect(message).toMatch(/Qdrant \+ Neo4j/)
      expect(message).toMatch(/DERIVED_GRAPH=false, DERIVED_EPISODES=false/)

      // /readyz stays ready and shows the budget spent; /metrics says so too.
      const after = await readyz(server)
      expect(after.ready).toBe(true)
      expect(after.memory.refusing_writes).toBe(true)
      expect(after.memory.refused_writes).toBeGreaterThanOrEqual(1)
      const metrics = await (await fetch(`${server.url}/metrics`)).text()
      expect(metrics).toMatch(new RegExp(`^recall_memory_limit_bytes ${limit}$`, 'm'))
      expect(metrics).toMatch(/^recall_memory_refusing_writes 1$/m)
      expect(metrics).toMatch(/^recall_memory_refused_writes [1-9]\d*$/m)

      // Another write that adds is refused too, a graph import as well as documents.
      expect((await ingest(server, [document(999, 0)])).status).toBe(507)
      const graph = await fetch(`${server.url}/ingest/graph`, {
        method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ namespace: NAMESPACE, entities: [{ id: 'e1', name: '新实体' }] })
      })
      expect(graph.status).toBe(507)

      // Reads are answered: a written document is found by its own words, in all three modes.
      const [first] = written
      const [, b, n] = /^doc-(\d+)-(\d+)$/.exec(first!)!
      expect((await lexicalIds(server, `tag${b}x${n}r1`))[0]).toBe(`${first}#1`)
      for (const mode of ['hybrid', 'graphrag', 'episodic']) {
        const r = await fetch(`${server.url}/retrieve?mode=${mode}&namespace=${NAMESPACE}&q=${encodeURIComponent(`项目tag${b}x${n}的负责人是谁`)}`)
        expect(r.status, mode).toBe(200)
      }

      // Nothing of the refused batches was written: the namespace lists exactly the acknowledged documents and chunks,
      // and no word of a refused document is found.
      const listed = await (await fetch(`${server.url}/documents?namespace=${NAMESPACE}`)).json() as { documents: { id: string }[]; total: number; chunks: number }
      expect(listed.documents.map((d) => d.id).sort()).toEqual([...written].sort())
      expect(listed.chunks).toBe(chunks)
      const [, rb, rn] = /^doc-(\d+)-(\d+)$/.exec(refused!.ids[0]!)!
      expect(await lexicalIds(server, `tag${rb}x${rn}r1`)).toEqual([])
      const namespaces = await (await fetch(`${server.url}/namespaces`)).json() as { namespaces: { namespace: string; documents: number; entities: number }[] }
      const held = namespaces.namespaces.find((ns) => ns.namespace === NAMESPACE)!
      expect(held.documents).toBe(written.length)

      // A delete makes room and is still taken.
      const deleted = await fetch(`${server.url}/documents/${first}?namespace=${NAMESPACE}`, { method: 'DELETE' })
      expect(deleted.status).toBe(200)
      expect(await lexicalIds(server, `tag${b}x${n}r1`)).toEqual([])
    } finally {
      await server.kill()
    }
  }, 600_000)
})

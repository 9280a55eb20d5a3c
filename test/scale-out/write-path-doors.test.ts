/**
 * Every door a write comes in by goes through the one write path (src/corpus/write-path.ts): after a write through
 * the door, an answer replica A cached before it is not served; replica B, given the write's generation, sees it;
 * and the write took its namespace's write lock in Redis (seen with MONITOR, whatever process sent it).
 * Two replicas over the run's real Qdrant and Redis, response cache on.
 */
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { loadDemoDocuments } from '../../src/corpus/demo.js'
import type { TestApp } from '../helpers/build.js'
import { runQdrantUrl, sharedQdrantEnv, startTwoReplicas, type TwoReplicas } from '../helpers/two-replicas.js'

const qdrantUrl = runQdrantUrl('the write-path doors tests')

describe.skipIf(!qdrantUrl)('every door writes through the one write path', () => {
  const env = {
    ...sharedQdrantEnv('doors', qdrantUrl), CACHE_TTL_SECONDS: '300', MCP_INGEST_TOOL: 'true', VECTOR_TIMEOUT_MS: '30000',
    GRAPH_BACKEND: 'neo4j', NEO4J_URI: inject('neo4jUri'), GRAPH_TIMEOUT_MS: '30000'
  }
  let pair: TwoReplicas
  let a: TestApp
  let b: TestApp
  let aUrl: string
  let monitor: Redis
  let dir: string
  /** Every write lock taken in Redis since the test began: `<kind>:<namespace>`. */
  const locksTaken: string[] = []

  beforeAll(async () => {
    pair = await startTwoReplicas(env)
    ;({ a, b } = pair)
    aUrl = await a.app.listen({ port: 0, host: '127.0.0.1' })
    dir = await mkdtemp(join(tmpdir(), 'recall-doors-'))
    monitor = await new Redis(inject('redisUrl')).monitor()
    monitor.on('monitor', (_time: string, args: string[]) => {
      // the lock's acquire script: EVAL <script> 1 <key> <token> <lease ms>
      const key = args[0]?.toLowerCase() === 'eval' && args[1]?.includes("'NX'") ? args[3] : undefined
      if (key?.startsWith('recall:write-lock:')) locksTaken.push(key.slice('recall:write-lock:'.length))
    })
  }, 300_000)
  afterAll(async () => {
    monitor?.disconnect()
    await pair?.close()
    if (dir) await rm(dir, { recursive: true, force: true })
  })

  const fresh = (door: string) => `door-${door}-${randomBytes(3).toString('hex')}`

  async function retrieve(t: TestApp, mode: string, namespace: string, query: string, minGeneration?: number) {
    const r = await t.app.inject({
      method: 'POST', url: '/retrieve',
      payload: { mode, namespace, query, top_k: 10, ...(mode === 'hybrid' ? { legs: ['lexical'] } : {}), ...(minGeneration !== undefined ? { min_generation: minGeneration } : {}) }
    })
    expect(r.statusCode, r.body).toBe(200)
    const body = r.json() as { cached: boolean; generation?: number; recall_bundle: Array<{ id: string; metadata: { doc_id?: string } }> }
    return { cached: body.cached, generation: body.generation, ids: body.recall_bundle.map((x) => x.metadata.doc_id ?? x.id) }
  }

  /** A's answer to `query`, asked twice so that it is cached (the second must say so). */
  async function cachedOnA(mode: string, namespace: string, query: string) {
    await retrieve(a, mode, namespace, query)
    const again = await retrieve(a, mode, namespace, query)
    expect(again.cached, 'the response cache is on: the second ask is a hit').toBe(true)
    return again
  }

  async function rest(method: string, url: string, payload?: object) {
    const r = await a.app.inject({ method: method as 'POST', url, ...(payload ? { payload } : {}) })
    expect(r.statusCode, r.body).toBe(200)
    return r.json() as { generation?: number } & Record<string, unknown>
  }

  function cli(args: string[]): Promise<{ code: number | null; output: string }> {
    return new Promise((resolve) => {
      const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/ingest.ts', ...args], {
        env: { ...process.env, ...env, DATA_DIR: join(dir, 'cli-data'), LOG_LEVEL: 'silent', DEMO_DATA: 'false' }, stdio: ['ignore', 'pipe', 'pipe']
      })
      let output = ''
      child.stdout.on('data', (d: Buffer) => { output += d.toString() })
      child.stderr.on('data', (d: Buffer) => { output += d.toString() })
      child.on('close', (code) => resolve({ code, output }))
    })
  }

  const seed = (namespace: string) => rest('POST', '/ingest/documents', { namespace, documents: [{ id: 'seed', text: '# 种子\n\n这份文档只是让命名空间不空。' }] })
  const note = (id: string, word: string) => ({ id, text: `# 门 ${id}\n\n暗号 ${word} 只在这份文档里出现。` })

  /** A document door: `send` writes `doc` into `namespace` and answers the generation the write reached. */
  const documentDoors: Array<[string, (namespace: string, doc: { id: string; text: string }) => Promise<number | undefined>]> = [
    ['REST POST /ingest/documents', async (namespace, doc) => (await rest('POST', '/ingest/documents', { namespace, documents: [doc] })).generation],
    ['MCP tool ingest', async (namespace, doc) => {
      const client = new Client({ name: 'doors', version: '1.0.0' })
      await client.connect(new StreamableHTTPClientTransport(new URL(`${aUrl}/mcp`)))
      try {
        const r = await client.callTool({ name: 'ingest', arguments: { namespace, documents: [doc] } })
        expect(r.isError, JSON.stringify(r.content)).toBeFalsy()
        return (r.structuredContent as { generation?: number }).generation
      } finally {
        await client.close()
      }
    }],
    ...(['--direct', '--url'] as const).map((how): typeof documentDoors[number] => [`CLI ${how}`, async (namespace, doc) => {
      const folder = join(dir, namespace)
      await mkdir(folder, { recursive: true })
      await writeFile(join(folder, `${doc.id}.md`), doc.text)
      const r = await cli([...(how === '--direct' ? ['--direct'] : ['--url', aUrl]), '--namespace', namespace, folder])
      expect(r.code, r.output).toBe(0)
      const generation = /generation (\d+)/.exec(r.output)?.[1]
      expect(generation, r.output).toBeDefined()
      return Number(generation)
    }])
  ]

  for (const [door, send] of documentDoors) {
    it(`documents through ${door}`, async () => {
      const namespace = fresh('docs')
      const word = `zq${randomBytes(3).toString('hex')}`
      await seed(namespace)
      expect((await cachedOnA('hybrid', namespace, word)).ids).not.toContain('noted')
      const before = locksTaken.length
      const generation = await send(namespace, note('noted', word))
      expect(locksTaken.slice(before)).toContain(`documents:${namespace}`)
      const afterOnA = await retrieve(a, 'hybrid', namespace, word)
      expect(afterOnA.cached, 'an answer cached before the write is not served after it').toBe(false)
      expect(afterOnA.ids).toContain('noted')
      expect(generation, 'the write answers the generation it reached').toBeGreaterThan(0)
      expect((await retrieve(b, 'hybrid', namespace, word, generation)).ids).toContain('noted')
    }, 180_000)
  }

  it('a rebuild through REST POST /documents/{id}/rebuild (lexical and derived_graph)', async () => {
    const namespace = fresh('rebuild')
    const word = `zq${randomBytes(3).toString('hex')}`
    const written = await rest('POST', '/ingest/documents', { namespace, documents: [note('noted', word)] })
    const cached = await cachedOnA('hybrid', namespace, word)
    expect(cached.ids).toContain('noted')
    const before = locksTaken.length
    const rebuilt = await rest('POST', '/documents/noted/rebuild', { namespace, channels: ['lexical', 'derived_graph'] })
    expect(locksTaken.slice(before)).toEqual(expect.arrayContaining([`documents:${namespace}`, `graph:${namespace}`]))
    expect(rebuilt.rebuilt).toMatchObject({ lexical: { documents: 1, chunks: 1 }, derived_graph: { documents: 1 } })
    expect(rebuilt.generation, 'the rebuild answers the generation it reached').toBeGreaterThan(written.generation!)
    const afterOnA = await retrieve(a, 'hybrid', namespace, word)
    expect(afterOnA.cached, 'an answer cached before the rebuild is not served after it').toBe(false)
    expect(afterOnA.ids).toContain('noted')
    expect((await retrieve(b, 'hybrid', namespace, word, rebuilt.generation)).ids).toContain('noted')
  }, 180_000)

  it('documents through the demo loader (into an empty default)', async () => {
    const word = 'Grafana'
    const before = await cachedOnA('hybrid', 'default', word)
    expect(before.ids).toEqual([])
    const mark = locksTaken.length
    const line = await loadDemoDocuments(a.app.services, () => undefined)
    expect(line).toMatch(/^\d+ documents/)
    expect(locksTaken.slice(mark)).toContain('documents:default')
    const afterOnA = await retrieve(a, 'hybrid', 'default', word)
    expect(afterOnA.cached).toBe(false)
    expect(afterOnA.ids).toContain('consult-gateway-runbook')
    expect((await retrieve(b, 'hybrid', 'default', word, afterOnA.generation)).ids).toContain('consult-gateway-runbook')
  }, 300_000)

  it('documents through journal replay (a write a killed run left half-done is finished at start-up)', async () => {
    const namespace = fresh('journal')
    const word = `zq${randomBytes(3).toString('hex')}`
    // Stored: three sections. The write announced in the journal keeps the first two: the stores hold a mix of the
    // two versions (its first chunk, and the old third), which the replay completes.
    const old = { id: 'mixed', text: `# 一\n\n第一节。\n\n# 二\n\n第二节。\n\n# 三\n\n第三节，暗号 ${word}。` }
    const announced = { id: 'mixed', text: '# 一\n\n第一节。\n\n# 二\n\n第二节，改过了。' }
    await rest('POST', '/ingest/documents', { namespace, documents: [old] })
    expect((await cachedOnA('hybrid', namespace, word)).ids).toEqual(['mixed'])
    await mkdir(join(a.dataDir, 'journal', 'writes'), { recursive: true })
    await writeFile(join(a.dataDir, 'journal', 'writes', '000000000000001-test.json'),
      JSON.stringify({ namespace, change: { kind: 'documents', op: 'upsert', documents: [announced] } }))
    const mark = locksTaken.length
    expect(await a.app.services.writePath.recover(['documents'])).toBe(1)
    expect(locksTaken.slice(mark)).toContain(`documents:${namespace}`)
    const afterOnA = await retrieve(a, 'hybrid', namespace, word)
    expect(afterOnA.cached).toBe(false)
    expect(afterOnA.ids).toEqual([])
    expect((await retrieve(b, 'hybrid', namespace, '改过了', afterOnA.generation)).ids).toEqual(['mixed'])
    expect((await retrieve(b, 'hybrid', namespace, word, afterOnA.generation)).ids).toEqual([])
  }, 180_000)

  it('a namespace removed through DELETE /namespaces/{ns}', async () => {
    const namespace = fresh('drop')
    const word = `zq${randomBytes(3).toString('hex')}`
    await rest('POST', '/ingest/documents', { namespace, documents: [note('doomed', word)] })
    await rest('POST', '/ingest/graph', { namespace, entities: [{ id: 'e1', name: `实体${word}` }] })
    expect((await cachedOnA('hybrid', namespace, word)).ids).toEqual(['doomed'])
    const mark = locksTaken.length
    const { generation } = await rest('DELETE', `/namespaces/${namespace}`)
    expect(locksTaken.slice(mark)).toEqual(expect.arrayContaining([`documents:${namespace}`, `graph:${namespace}`, `episodes:${namespace}`]))
    const afterOnA = await retrieve(a, 'hybrid', namespace, word)
    expect(afterOnA.cached).toBe(false)
    expect(afterOnA.ids).toEqual([])
    expect((await retrieve(b, 'hybrid', namespace, word, generation)).ids).toEqual([])
  }, 180_000)

  it('a graph written through REST POST /ingest/graph takes the graph lock and ends cached graphrag answers', async () => {
    const namespace = fresh('graph')
    await rest('POST', '/ingest/graph', { namespace, entities: [{ id: 'li', name: '李四' }] })
    expect((await cachedOnA('graphrag', namespace, '王五负责什么')).ids).not.toContain('wang')
    const mark = locksTaken.length
    const { generation } = await rest('POST', '/ingest/graph', { namespace, entities: [{ id: 'wang', name: '王五', description: '王五负责鉴权中间件。' }] })
    expect(locksTaken.slice(mark)).toContain(`graph:${namespace}`)
    const afterOnA = await retrieve(a, 'graphrag', namespace, '王五负责什么')
    expect(afterOnA.cached).toBe(false)
    expect(afterOnA.ids).toContain('wang')
    expect((await retrieve(b, 'graphrag', namespace, '王五负责什么', generation)).ids).toContain('wang')
  }, 180_000)

  it('Episodes written through REST POST /ingest/episodes take the Episode lock and end cached episodic answers', async () => {
    const namespace = fresh('episodes')
    const episode = (id: string, topic: string) => ({
      id, name: topic, summary: `${topic}的摘要。`,
      facets: [{ id: `${id}-f`, search_text: `${topic}的处理经过与结论`, points: [{ id: `${id}-p`, search_text: `${topic}的要点` }] }]
    })
    await rest('POST', '/ingest/episodes', { namespace, episodes: [episode('ep-1', '差旅报销标准调整')] })
    expect((await cachedOnA('episodic', namespace, '数据库主从切换演练')).ids).not.toContain('ep-2')
    const mark = locksTaken.length
    const { generation } = await rest('POST', '/ingest/episodes', { namespace, episodes: [episode('ep-2', '数据库主从切换演练')] })
    expect(locksTaken.slice(mark)).toContain(`episodes:${namespace}`)
    const afterOnA = await retrieve(a, 'episodic', namespace, '数据库主从切换演练')
    expect(afterOnA.cached).toBe(false)
    expect(afterOnA.ids).toContain('ep-2')
    expect((await retrieve(b, 'episodic', namespace, '数据库主从切换演练', generation)).ids).toContain('ep-2')
  }, 180_000)
  it('a conversation through REST POST /ingest/conversations (append, then delete) takes the Episode lock and ends cached episodic answers', async () => {
    const namespace = fresh('conversations')
    const turns = (list: Array<[string, string, string]>) => ({
      namespace, conversations: [{ id: 'chat', sessions: [{ id: 's1', time: '2023-05-08T13:56:00Z', turns: list.map(([id, speaker, text]) => ({ id, speaker, text })) }] }]
    })
    const cited = async (t: TestApp, minGeneration?: number) => {
      const r = await t.app.inject({ method: 'POST', url: '/retrieve', payload: { mode: 'episodic', namespace, query: 'pottery class blue bowl', top_k: 5, ...(minGeneration !== undefined ? { min_generation: minGeneration } : {}) } })
      expect(r.statusCode, r.body).toBe(200)
      const body = r.json() as { cached: boolean; recall_bundle: Array<{ metadata: { turns?: Array<{ id: string }> } }> }
      return { cached: body.cached, turns: body.recall_bundle.flatMap((i) => i.metadata.turns ?? []).map((x) => x.id).sort() }
    }
    await rest('POST', '/ingest/conversations', turns([['t1', 'Ann', 'We talked about the weather and the train strike.']]))
    await cited(a)
    expect((await cited(a)).cached).toBe(true)
    let mark = locksTaken.length
    const appended = await rest('POST', '/ingest/conversations', turns([['t2', 'Bo', 'I went to a pottery class and made a blue bowl.']]))
    expect(locksTaken.slice(mark)).toContain(`episodes:${namespace}`)
    expect(await cited(a)).toEqual({ cached: false, turns: ['t1', 't2'] })
    expect((await cited(b, appended.generation)).turns).toEqual(['t1', 't2'])
    mark = locksTaken.length
    const deleted = await rest('DELETE', `/conversations/chat?namespace=${namespace}`)
    expect(locksTaken.slice(mark)).toContain(`episodes:${namespace}`)
    expect((await cited(a)).turns).toEqual([])
    expect((await cited(b, deleted.generation)).turns).toEqual([])
  }, 180_000)
})

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from '../../src/config.js'
import { buildTestApp, type TestApp } from '../helpers/build.js'
import { completion, startChatServer, type ChatReply, type ChatRequest } from '../helpers/chat-server.js'

// LLM extraction through the one write path: a documents write asks a local OpenAI-compatible server (node:http,
// started here; no model runs) and the answer joins the derived graph, marked `llm`, through the same replaceDerived.

const BORROW = '借阅系统由读者服务部负责维护，馆长张明批准了新的续借规则。'
const MODEL_ANSWER = {
  entities: [
    { name: '读者服务部', type: '机构', description: '负责维护借阅系统的部门' },
    { name: '借阅系统', type: '系统', description: '' },
    { name: '张明', type: '人物', description: '馆长' }
  ],
  relations: [
    { source: '读者服务部', target: '借阅系统', type: '维护', description: '借阅系统由读者服务部负责维护' },
    { source: '张明', target: '续借规则', type: '批准', description: '馆长张明批准了新的续借规则' }
  ]
}

function script(request: ChatRequest): ChatReply {
  const user = request.body.messages.find((m) => m.role === 'user')!.content
  if (user.includes('ALWAYS-MALFORMED')) return { body: completion('{"entities": ') }
  return { body: completion(user.includes(BORROW) ? JSON.stringify(MODEL_ANSWER) : '{"entities": [], "relations": []}', { prompt_tokens: 300, completion_tokens: 90 }) }
}

let server: Awaited<ReturnType<typeof startChatServer>>
let t: TestApp
const namespace = 'llm-graph'

beforeAll(async () => {
  server = await startChatServer(script)
  t = await buildTestApp({ LLM_EXTRACTION: 'true', LLM_URL: server.url, LLM_MODEL: 'test-model', LLM_RETRIES: '1', LLM_TIMEOUT_MS: '5000' })
})
afterAll(async () => {
  await t?.close()
  await server?.close()
})

const ingest = async (id: string, text: string) => {
  const r = await t.app.inject({ method: 'POST', url: '/ingest/documents', payload: { namespace, documents: [{ id, text }] } })
  expect(r.statusCode, r.body).toBe(200)
  return r.json() as { derived: { entities: number; relations: number; llm: Record<string, number> } }
}

describe('LLM extraction in the document write', () => {
  it('joins what the model extracts to the derived graph, marked llm, with the chunk as evidence, and reports calls and tokens', async () => {
    const answer = await ingest('borrow', `# 借阅规则\n\n${BORROW}`)
    expect(answer.derived.llm).toEqual({ chunks: 1, cached: 0, failed: 0, calls: 1, retries: 0, prompt_tokens: 300, completion_tokens: 90, total_tokens: 390 })
    expect(server.requests).toHaveLength(1)
    const metrics = (await t.app.inject({ method: 'GET', url: '/metrics' })).body
    expect(metrics).toContain('recall_llm_extraction_calls_total{outcome="ok"} 1')
    expect(metrics).toContain('recall_llm_extraction_tokens_total{kind="prompt"} 300')
    expect(metrics).toContain('recall_llm_extraction_tokens_total{kind="completion"} 90')

    const { entities, relations } = await t.app.services.graph.derivedOf(namespace, ['borrow'])
    const entity = (name: string) => entities.find((e) => e.name === name)
    // the model's type, the document's part marked llm, the chunk as evidence
    expect(entity('读者服务部')).toMatchObject({ id: 'd:读者服务部', type: '机构', description: '负责维护借阅系统的部门', source_chunk_ids: ['borrow#0'] })
    expect(entity('读者服务部')!.derived_from).toEqual([expect.objectContaining({ doc_id: 'borrow', chunk_ids: ['borrow#0'], llm: true })])
    // an end named only in a relation is an entity too
    expect(entity('续借规则')!.derived_from![0]!.llm).toBe(true)
    const relation = relations.find((r) => r.source === 'd:读者服务部' && r.target === 'd:借阅系统' && r.type === '维护')
    expect(relation?.derived_from).toEqual([{ doc_id: 'borrow', chunk_ids: ['borrow#0'], count: 1, llm: true }])
    // what the rules derive alone stays, unmarked (the heading's term is the rules' only)
    expect(entities.some((e) => e.derived_from!.every((p) => p.llm === undefined))).toBe(true)

    const r = await t.app.inject({ method: 'POST', url: '/retrieve', payload: { mode: 'graphrag', query: '读者服务部负责什么', namespace } })
    expect(r.statusCode, r.body).toBe(200)
    const item = (r.json() as { recall_bundle: Array<{ id: string; metadata: { source_chunk_ids: string[] } }> }).recall_bundle.find((i) => i.id === 'd:读者服务部')
    expect(item?.metadata.source_chunk_ids).toEqual(['borrow#0'])
  })

  it('asks nothing for a document written again unchanged (the cache), and removes the LLM part with the document', async () => {
    const again = await ingest('borrow', `# 借阅规则\n\n${BORROW}`)
    expect(again.derived.llm).toMatchObject({ chunks: 1, cached: 1, calls: 0, total_tokens: 0 })
    expect(server.requests).toHaveLength(1)
    const deleted = await t.app.inject({ method: 'DELETE', url: `/documents/borrow?namespace=${namespace}` })
    expect(deleted.statusCode, deleted.body).toBe(200)
    const left = await t.app.services.graph.derivedOf(namespace, ['borrow'])
    expect(left.entities).toEqual([])
    expect(left.relations).toEqual([])
  })

  it('writes the document with the rules\' part only when every answer is malformed, and says so', async () => {
    const answer = await ingest('broken', '# 古籍\n\nALWAYS-MALFORMED 古籍阅览室禁用闪光灯。')
    expect(answer.derived.llm).toMatchObject({ chunks: 1, failed: 1, calls: 2, retries: 1 })
    expect((await t.app.inject({ method: 'GET', url: '/metrics' })).body).toContain('recall_llm_extraction_calls_total{outcome="malformed"} 2')
    const { entities } = await t.app.services.graph.derivedOf(namespace, ['broken'])
    expect(entities.length).toBeGreaterThan(0)
    expect(entities.every((e) => e.derived_from!.every((p) => p.llm === undefined))).toBe(true)
  })
})

describe('LLM extraction settings', () => {
  it('is off by default and, turned on, needs a URL, a model and the derived graph', () => {
    expect(loadConfig({}).derivation.llm).toBeUndefined()
    const problems = (env: Record<string, string>) => {
      try {
        loadConfig(env)
        return []
      } catch (error) {
        return (error as ConfigError).problems
      }
    }
    expect(problems({ LLM_EXTRACTION: 'true' })).toEqual(['LLM_EXTRACTION=true needs LLM_URL', 'LLM_EXTRACTION=true needs LLM_MODEL'])
    expect(problems({ LLM_EXTRACTION: 'true', LLM_URL: 'http://127.0.0.1:1/v1', LLM_MODEL: 'm', DERIVED_GRAPH: 'false' }))
      .toEqual(['LLM_EXTRACTION=true needs DERIVED_GRAPH=true (the extraction joins the derived graph)'])
    expect(loadConfig({ LLM_EXTRACTION: 'true', LLM_URL: 'http://127.0.0.1:1/v1', LLM_MODEL: 'm' }).derivation.llm)
      .toEqual({ url: 'http://127.0.0.1:1/v1', model: 'm', responseFormat: 'json_object', concurrency: 4, retries: 3, timeoutMs: 60_000 })
  })
})

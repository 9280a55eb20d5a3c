import { execFile } from 'node:child_process'
import { resolve } from 'node:path'
import { promisify } from 'node:util'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { getEncoding } from 'js-tiktoken'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../helpers/build.js'

const docs = [
  { id: 'cough', source: 'clinical/cough.md', text: '# 咳嗽\n\n咳嗽三周以上应做胸片和血常规检查。咳嗽超过八周且胸片正常，做胸部 CT 和肺功能检查。' },
  { id: 'travel', source: 'finance/travel.md', text: '# 差旅\n\n一线城市住宿每晚不超过六百元，其他城市不超过四百元。' },
  { id: 'oncall', source: 'ops/oncall.md', text: '# 值班\n\n夜间告警由二线值班处理，十五分钟内响应。' }
]

let t: TestApp
let base: string
beforeAll(async () => {
  t = await buildTestApp({ API_KEYS: 'k-all,k-a=tenant-a', MCP_INGEST_TOOL: 'true' })
  base = await t.app.listen({ port: 0, host: '127.0.0.1' })
}, 300_000)
afterAll(async () => t?.close())

async function connect(key?: string): Promise<Client> {
  const client = new Client({ name: 'recall-test', version: '1.0.0' })
  const headers: Record<string, string> = key ? { authorization: `Bearer ${key}` } : {}
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers } }))
  return client
}

const textOf = (result: unknown) => (result as { content: { type: string; text: string }[] }).content[0]!.text

describe('/mcp with the SDK client', () => {
  it('lists the tools with the REST routes\' schemas; ingest only when the operator turned it on', async () => {
    const client = await connect()
    const { tools } = await client.listTools()
    expect(tools.map((x) => x.name)).toEqual(['retrieve', 'compare', 'list_namespaces', 'analyze', 'ingest', 'remember'])
    const retrieve = tools.find((x) => x.name === 'retrieve')!
    const props = retrieve.inputSchema.properties as Record<string, { enum?: string[] }>
    expect(props.mode!.enum).toEqual(['hybrid', 'graphrag', 'episodic'])
    expect(props.tokenizer!.enum).toEqual(['o200k_base', 'cl100k_base', 'characters'])
    expect(retrieve.inputSchema.required).toEqual(['mode', 'query'])
    await client.close()

    const readOnly = await buildTestApp()
    try {
      const url = await readOnly.app.listen({ port: 0, host: '127.0.0.1' })
      const other = new Client({ name: 'recall-test', version: '1.0.0' })
      await other.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)))
      expect((await other.listTools()).tools.map((x) => x.name)).toEqual(['retrieve', 'compare', 'list_namespaces', 'analyze'])
      await other.close()
    } finally {
      await readOnly.close()
    }
  })

  it('ingest needs a key like the REST write; with one it writes', async () => {
    const anonymous = await connect()
    const refused = await anonymous.callTool({ name: 'ingest', arguments: { documents: docs } })
    expect(refused.isError).toBe(true)
    const rest = await t.app.inject({ method: 'POST', url: '/ingest/documents', payload: { documents: docs } })
    expect(JSON.parse(textOf(refused))).toEqual(rest.json())
    await anonymous.close()

    const client = await connect('k-all')
    const ok = await client.callTool({ name: 'ingest', arguments: { documents: docs } })
    expect(ok.isError).toBeFalsy()
    expect(ok.structuredContent).toMatchObject({ documents: 3, chunks: 3 })
    await client.close()
  })

  it('remember appends turns to a session (a Chinese chat): episodic then cites them with speaker and time; a bad turn names itself', async () => {
    const client = await connect('k-all')
    const remember = (turns: object[]) => client.callTool({ name: 'remember', arguments: {
      namespace: 'chat-memory', conversation: '家庭群', session: '周一', time: '2023年5月8日 下午1:56', turns
    } })
    const first = await remember([{ id: 'm1', speaker: '王芳', text: '我昨天带孩子去动物园看了熊猫。' }])
    expect(first.isError, textOf(first)).toBeFalsy()
    expect(first.structuredContent).toMatchObject({ sessions: 1, turns: 1, turns_embedded: 1 })
    const second = await remember([{ id: 'm2', speaker: '刘强', text: '上周六我在公司加班修数据库。' }])
    expect(second.structuredContent).toMatchObject({ turns: 2, turns_embedded: 1 })
    const answer = await client.callTool({ name: 'retrieve', arguments: { mode: 'episodic', namespace: 'chat-memory', query: '谁去动物园看熊猫了？', top_k: 3 } })
    const bundle = (answer.structuredContent as { recall_bundle: Array<{ metadata: { turns?: Array<{ id: string; speaker: string; time: string }> } }> }).recall_bundle
    expect(bundle[0]?.metadata.turns?.[0]).toMatchObject({ id: 'm1', speaker: '王芳', time: '2023年5月8日 下午1:56' })
    expect(textOf(answer)).toContain('[2023年5月8日 下午1:56] 王芳: 我昨天带孩子去动物园看了熊猫。')
    await expect(remember([{ id: 'm3', speaker: ' ', text: '空的说话人' }])).rejects.toThrow(/turns\[0\]\.speaker: must not be blank/)
    await client.close()
  })

  it('ingest answers each document: an invalid one refused with its reason, one without text skipped, the others written', async () => {
    const client = await connect('k-all')
    const documents = [
      { id: 'mcp-ok', text: '# 便签\n\n周五下午例会。' },
      { id: 'mcp bad', text: '正文。' },
      { id: 'mcp-junk', text: `正文${'\uFFFD'.repeat(10)}` },
      { id: 'mcp-empty', text: '---\ntitle: 只有元数据\n---\n\n<script setup>\nimport X from "./X.vue"\n</script>\n\n<X />\n' }
    ]
    const ok = await client.callTool({ name: 'ingest', arguments: { namespace: 'mcp-skip', documents } })
    expect(ok.isError).toBeFalsy()
    const answer = ok.structuredContent as { documents: number; refused: Array<{ index: number; id: string; reason: string }>; skipped: Array<{ id: string; reason: string }> }
    expect(answer.documents).toBe(1)
    expect(answer.refused.map((r) => [r.index, r.id])).toEqual([[1, 'mcp bad'], [2, 'mcp-junk']])
    expect(answer.refused[1]!.reason).toMatch(/over the 0\.5% allowed \(MAX_JUNK_SHARE\)/)
    expect(answer.skipped).toEqual([{ id: 'mcp-empty', reason: expect.stringMatching(/^no text to index/) }])
    const listed = await t.app.inject({ method: 'GET', url: '/documents?namespace=mcp-skip', headers: { authorization: 'Bearer k-all' } })
    expect(listed.json().documents.map((d: { id: string }) => d.id)).toEqual(['mcp-ok'])
    // on_invalid: reject refuses the whole call, as the route's default does
    await expect(client.callTool({ name: 'ingest', arguments: { namespace: 'mcp-reject', on_invalid: 'reject', documents } })).rejects.toThrow(/-32602.*ingest: body\/documents\/1\/id must match pattern/)
    await client.close()
  })

  it('retrieve: the packed context as text within max_tokens, the bundle as structured content', async () => {
    const client = await connect()
    const result = await client.callTool({ name: 'retrieve', arguments: { mode: 'hybrid', query: '咳嗽三周以上要做什么检查', top_k: 3, max_tokens: 60 } })
    const text = textOf(result)
    expect(getEncoding('o200k_base').encode(text, [], []).length).toBeLessThanOrEqual(60)
    expect(text).toContain('[1] clinical/cough.md')
    const structured = result.structuredContent as { recall_bundle: { id: string }[]; manifest: { id: string }[]; tokens: number }
    expect(structured.recall_bundle.map((i) => i.id)[0]).toBe('cough#0')
    expect(structured.manifest.map((m) => m.id)).toEqual(structured.recall_bundle.map((i) => i.id))
    // the same answer as POST /context
    const rest = (await t.app.inject({ method: 'POST', url: '/context', payload: { mode: 'hybrid', query: '咳嗽三周以上要做什么检查', top_k: 3, max_tokens: 60 } })).json()
    expect(text).toBe(rest.context)
    expect(structured.tokens).toBe(rest.tokens)
    await client.close()
  })

  it('compare, list_namespaces and analyze answer as their REST routes do', async () => {
    const client = await connect()
    const compared = await client.callTool({ name: 'compare', arguments: { query: '咳嗽', top_k: 2, arms: [{ mode: 'hybrid' }, { mode: 'hybrid', legs: ['lexical'] }] } })
    const restCompare = (await t.app.inject({ method: 'POST', url: '/retrieve/compare', payload: { query: '咳嗽', top_k: 2, arms: [{ mode: 'hybrid' }, { mode: 'hybrid', legs: ['lexical'] }] } })).json()
    // the same items in each arm (the comparison also holds timings, which differ)
    const idsOf = (answer: { arms: { response: { recall_bundle: { id: string }[] } }[] }) => answer.arms.map((a) => a.response.recall_bundle.map((i) => i.id))
    expect(idsOf(compared.structuredContent as never)).toEqual(idsOf(restCompare))
    expect(idsOf(restCompare)[0]!.length).toBeGreaterThan(0)
    const listed = await client.callTool({ name: 'list_namespaces', arguments: {} })
    expect(listed.structuredContent).toEqual((await t.app.inject({ method: 'GET', url: '/namespaces' })).json())
    const analyzed = await client.callTool({ name: 'analyze', arguments: { text: 'API 流式返回' } })
    expect(analyzed.structuredContent).toEqual({ tokens: ['api', '流式', '式返', '返回'] })
    await client.close()
  })

  it('arguments the schema refuses are the protocol\'s invalid-params error naming the argument', async () => {
    const client = await connect()
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      ['retrieve', { mode: 'hybrid', query: '咳嗽', top_k: 500 }, /retrieve: arguments\/top_k must be <= 100/],
      ['retrieve', { mode: 'fuzzy', query: '咳嗽' }, /arguments\/mode must be equal to one of the allowed values: hybrid, graphrag, episodic/],
      ['retrieve', { mode: 'hybrid', query: '咳嗽', tokenizer: 'gpt2' }, /arguments\/tokenizer must be equal to one of the allowed values: o200k_base, cl100k_base, characters/],
      ['retrieve', { mode: 'hybrid', query: '咳嗽', colour: 'red' }, /arguments must not have additional properties \("colour"\)/],
      ['retrieve', { mode: 'graphrag', query: '咳嗽', legs: ['lexical'] }, /retrieve: legs apply to mode=hybrid only/],
      ['analyze', {}, /analyze: arguments must have required properties text/],
      ['nope', {}, /unknown tool "nope"/]
    ]
    for (const [name, args, message] of cases) {
      const error = await client.callTool({ name, arguments: args }).then(() => undefined, (e: unknown) => e as { code: number; message: string })
      expect(error, `${name} ${JSON.stringify(args)}`).toBeDefined()
      expect(error!.code).toBe(-32602)
      expect(error!.message).toMatch(message)
    }
    await client.close()
  })

  it('a namespace the key may not use gets the REST refusal, saying nothing about it', async () => {
    const client = await connect('k-a')
    const result = await client.callTool({ name: 'retrieve', arguments: { mode: 'hybrid', query: '咳嗽', namespace: 'default' } })
    expect(result.isError).toBe(true)
    const rest = await t.app.inject({ method: 'POST', url: '/retrieve', headers: { authorization: 'Bearer k-a' }, payload: { mode: 'hybrid', query: '咳嗽', namespace: 'default' } })
    expect(rest.statusCode).toBe(403)
    expect(JSON.parse(textOf(result))).toEqual(rest.json())
    // the key lists only its own namespaces
    const listed = await client.callTool({ name: 'list_namespaces', arguments: {} })
    expect(listed.structuredContent).toEqual({ namespaces: [] })
    await client.close()
  })

  it('counts tool calls in /metrics and releases every request it held', async () => {
    const metrics = (await t.app.inject({ method: 'GET', url: '/metrics' })).body
    expect(metrics).toMatch(/recall_mcp_tool_calls_total\{tool="retrieve",outcome="ok"\} [1-9]/)
    expect(metrics).toMatch(/recall_mcp_tool_calls_total\{tool="retrieve",outcome="invalid"\} [1-9]/)
    expect(metrics).toMatch(/recall_request_duration_seconds_count\{route="\/mcp",mode="none",status="200"\} [1-9]/)
    expect(t.app.overload.figures().inFlight).toBe(0)
  })

  it('GET and DELETE /mcp are 405 (a stateless server)', async () => {
    const r = await t.app.inject({ method: 'GET', url: '/mcp' })
    expect(r.statusCode).toBe(405)
    expect(r.headers.allow).toBe('POST')
  })
})

describe('/mcp with the MCP Inspector CLI, a separate client process', () => {
  // The CLI reads its own package.json by a path relative to the working directory: run it from its folder.
  const dir = resolve('node_modules/@modelcontextprotocol/inspector-cli/build')
  const inspector = async (...args: string[]): Promise<{ ok: boolean; out: string }> => {
    try {
      const { stdout } = await promisify(execFile)('node', ['index.js', `${base}/mcp`, '--header', 'Authorization: Bearer k-all', ...args], { cwd: dir, timeout: 60_000 })
      return { ok: true, out: stdout }
    } catch (error) {
      const e = error as { stdout?: string; stderr?: string }
      return { ok: false, out: `${e.stdout ?? ''}${e.stderr ?? ''}` }
    }
  }

  it('lists the tools and calls each one', async () => {
    const listed = await inspector('--method', 'tools/list')
    expect(listed.ok, listed.out).toBe(true)
    expect((JSON.parse(listed.out) as { tools: { name: string }[] }).tools.map((x) => x.name)).toEqual(['retrieve', 'compare', 'list_namespaces', 'analyze', 'ingest', 'remember'])

    const calls: Array<[string, string[], (result: { structuredContent: Record<string, unknown>; content: { text: string }[] }) => void]> = [
      ['retrieve', ['mode=hybrid', 'query=一线城市住宿标准', 'max_tokens=80', 'format=xml'], (r) => {
        expect(r.content[0]!.text).toMatch(/^<context>\n<source id="1" ref="travel#0"/)
        expect(getEncoding('o200k_base').encode(r.content[0]!.text, [], []).length).toBeLessThanOrEqual(80)
      }],
      ['compare', ['query=夜间告警', 'arms=[{"mode":"hybrid"},{"mode":"graphrag"}]'], (r) => expect(r.structuredContent.arms).toHaveLength(2)],
      ['list_namespaces', [], (r) => expect((r.structuredContent.namespaces as { namespace: string }[]).map((n) => n.namespace)).toContain('default')],
      ['analyze', ['text=GPT-4o 流式'], (r) => expect(r.structuredContent.tokens).toEqual(['gpt', '4o', '流式'])],
      ['ingest', ['documents=[{"id":"note","text":"# 便签\\n\\n周五下午例会。"}]'], (r) => expect(r.structuredContent).toMatchObject({ documents: 1, chunks: 1 })]
    ]
    for (const [name, args, check] of calls) {
      const called = await inspector('--method', 'tools/call', '--tool-name', name, ...(args.length > 0 ? ['--tool-arg', ...args] : []))
      expect(called.ok, `${name}: ${called.out}`).toBe(true)
      check(JSON.parse(called.out))
    }
  })

  it('bad arguments come back as the protocol error naming the argument', async () => {
    const called = await inspector('--method', 'tools/call', '--tool-name', 'retrieve', '--tool-arg', 'mode=hybrid', 'query=x', 'top_k=500')
    expect(called.ok).toBe(false)
    expect(called.out).toMatch(/-32602.*retrieve: arguments\/top_k must be <= 100/)
  })
})

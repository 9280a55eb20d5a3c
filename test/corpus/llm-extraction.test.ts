import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { EXTRACTION_SCHEMA, MalformedExtractionError, parseExtraction } from '../../src/derive/llm/answer.js'
import { LlmExtractor, type LlmExtractorOptions } from '../../src/corpus/llm-extraction/extractor.js'
import { loadExtractionPrompts } from '../../src/corpus/llm-extraction/prompts.js'
import { completion, startChatServer, type ChatReply, type ChatRequest } from '../helpers/chat-server.js'

// The extraction protocol against a local OpenAI-compatible server (node:http, started here): no model runs. The
// server answers the shapes OpenAI documents for /v1/chat/completions; each chunk text says how it misbehaves.

const GOOD = { entities: [{ name: '借阅系统', type: '系统', description: '图书馆的借阅系统' }], relations: [] }
const answer = (extraction: unknown = GOOD) => ({ body: completion(JSON.stringify(extraction)) })

function script(request: ChatRequest, nth: number): ChatReply {
  const user = request.body.messages.find((m) => m.role === 'user')!.content
  if (user.includes('MALFORMED-ONCE') && nth === 0) return { body: completion('{"entities": [{"name": "借阅系统"') }
  if (user.includes('ALWAYS-MALFORMED')) return { body: completion('这不是 JSON') }
  if (user.includes('RATE-LIMITED-ONCE') && nth === 0) {
    return { status: 429, headers: { 'retry-after': '1' }, body: { error: { message: 'Rate limit reached', type: 'requests', code: 'rate_limit_exceeded' } } }
  }
  if (user.includes('SERVER-ERROR-ONCE') && nth === 0) return { status: 503, body: { error: { message: 'overloaded' } } }
  if (user.includes('SLOW-ONCE') && nth === 0) return { ...answer(), delayMs: 3000 }
  if (user.includes('BAD-REQUEST')) return { status: 400, body: { error: { message: 'bad request', type: 'invalid_request_error' } } }
  if (user.includes('SLOW-EVERY-TIME')) return { ...answer(), delayMs: 150 }
  return answer()
}

let server: Awaited<ReturnType<typeof startChatServer>>
let cacheDir: string
const prompts = loadExtractionPrompts({})

beforeAll(async () => {
  server = await startChatServer(script)
})
afterAll(async () => {
  await server?.close()
})
afterEach(async () => {
  server.reset()
  if (cacheDir) await rm(cacheDir, { recursive: true, force: true })
})

async function extractor(overrides: Partial<LlmExtractorOptions> = {}): Promise<LlmExtractor> {
  cacheDir = await mkdtemp(join(tmpdir(), 'recall-llm-cache-'))
  return new LlmExtractor({
    client: { url: server.url, model: 'test-model', timeoutMs: 1000, responseFormat: 'json_object', apiKey: 'sk-test' },
    prompts, cacheDir, concurrency: 4, retries: 3, backoffMs: 10, maxBackoffMs: 5000, ...overrides
  })
}

const chunk = (id: string, text: string) => ({ id, text, title: '借阅规则' })

describe('the answer of one chunk', () => {
  it('takes a JSON object with entities and relations, fenced or not, and refuses anything else', () => {
    expect(parseExtraction(JSON.stringify(GOOD))).toEqual(GOOD)
    expect(parseExtraction('```json\n{"entities": [{"name": " 平台组 ", "type": ""}], "relations": []}\n```')).toEqual({ entities: [{ name: '平台组' }], relations: [] })
    for (const bad of ['这不是 JSON', '[]', '{"entities": []}', '{"entities": [{"type": "x"}], "relations": []}', '{"entities": [], "relations": [{"source": "a", "target": 3, "type": "x"}]}']) {
      expect(() => parseExtraction(bad), bad).toThrow(MalformedExtractionError)
    }
  })
})

describe('LlmExtractor against a local chat server', () => {
  it('sends the documented request: model, system and user messages with the chunk, temperature 0, JSON output, the key', async () => {
    const { extractions, stats } = await (await extractor()).extract([chunk('d#0', '借阅系统由读者服务部负责维护。')])
    expect(extractions.get('d#0')).toEqual(GOOD)
    expect(stats).toMatchObject({ chunks: 1, cached: 0, failed: 0, calls: 1, retries: 0, prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 })
    const [request] = server.requests
    expect(request!.path).toBe('/v1/chat/completions')
    expect(request!.headers.authorization).toBe('Bearer sk-test')
    expect(request!.body.model).toBe('test-model')
    expect(request!.body.temperature).toBe(0)
    expect(request!.body.response_format).toEqual({ type: 'json_object' })
    expect(request!.body.messages.map((m) => m.role)).toEqual(['system', 'user'])
    expect(request!.body.messages[0]!.content).toContain('JSON')
    expect(request!.body.messages[1]!.content).toContain('借阅系统由读者服务部负责维护。')
    expect(request!.body.messages[1]!.content).toContain('借阅规则')
  })

  it('asks for structured output with the extraction schema when so configured', async () => {
    const withSchema = await extractor({ client: { url: server.url, model: 'test-model', timeoutMs: 1000, responseFormat: 'json_schema' } })
    await withSchema.extract([chunk('d#0', '借阅系统。')])
    expect(server.requests[0]!.body.response_format).toEqual({ type: 'json_schema', json_schema: { name: 'extraction', strict: true, schema: EXTRACTION_SCHEMA } })
    expect(server.requests[0]!.headers.authorization).toBeUndefined()
  })

  it('asks again after a malformed answer, and counts the tokens of both calls', async () => {
    const { extractions, stats } = await (await extractor()).extract([chunk('d#0', 'MALFORMED-ONCE 借阅系统。')])
    expect(extractions.get('d#0')).toEqual(GOOD)
    expect(stats).toMatchObject({ calls: 2, retries: 1, failed: 0, prompt_tokens: 200, completion_tokens: 40, total_tokens: 240 })
  })

  it('waits as a 429 says (Retry-After: 1) and then succeeds; a 503 is retried too', async () => {
    const started = performance.now()
    const { extractions, stats } = await (await extractor()).extract([chunk('d#0', 'RATE-LIMITED-ONCE 借阅系统。'), chunk('d#1', 'SERVER-ERROR-ONCE 借阅系统。')])
    const waited = performance.now() - started
    expect([...extractions.keys()].sort()).toEqual(['d#0', 'd#1'])
    expect(stats).toMatchObject({ calls: 4, retries: 2, failed: 0, total_tokens: 240 })
    expect(waited).toBeGreaterThanOrEqual(1000)
  })

  it('gives up a call past its timeout and asks again', async () => {
    const started = performance.now()
    const { extractions, stats } = await (await extractor({ client: { url: server.url, model: 'test-model', timeoutMs: 500, responseFormat: 'json_object' } }))
      .extract([chunk('d#0', 'SLOW-ONCE 借阅系统。')])
    expect(extractions.get('d#0')).toEqual(GOOD)
    expect(stats).toMatchObject({ calls: 2, retries: 1, failed: 0 })
    expect(performance.now() - started).toBeLessThan(3000)
  })

  it('leaves a chunk without extraction after retries + 1 malformed answers, and caches nothing for it', async () => {
    const x = await extractor({ retries: 2 })
    const first = await x.extract([chunk('d#0', 'ALWAYS-MALFORMED 借阅系统。'), chunk('d#1', '借阅系统。')])
    expect(first.extractions.has('d#0')).toBe(false)
    expect(first.extractions.get('d#1')).toEqual(GOOD)
    expect(first.stats).toMatchObject({ chunks: 2, failed: 1, calls: 4, retries: 2 })
    const again = await x.extract([chunk('d#0', 'ALWAYS-MALFORMED 借阅系统。'), chunk('d#1', '借阅系统。')])
    expect(again.stats).toMatchObject({ cached: 1, failed: 1, calls: 3 })
  })

  it('does not retry a request the server refuses (400)', async () => {
    const { stats } = await (await extractor()).extract([chunk('d#0', 'BAD-REQUEST 借阅系统。')])
    expect(stats).toMatchObject({ calls: 1, retries: 0, failed: 1 })
  })

  it('answers a chunk seen before under the same model and prompts from the cache, and asks again when either changes', async () => {
    const x = await extractor()
    const chunks = [chunk('a#0', '借阅系统。'), chunk('b#0', '借阅系统。'), chunk('a#1', '古籍阅览室。')]
    const first = await x.extract(chunks)
    // b#0 has a#0's text: asked once or twice depending on timing, never more
    expect(first.stats.calls).toBeGreaterThanOrEqual(2)
    const second = await x.extract(chunks)
    expect(second.stats).toMatchObject({ cached: 3, calls: 0, total_tokens: 0 })
    expect(second.extractions.get('a#1')).toEqual(GOOD)
    const otherModel = new LlmExtractor({ client: { url: server.url, model: 'other-model', timeoutMs: 1000, responseFormat: 'json_object' }, prompts, cacheDir, concurrency: 1, retries: 0 })
    expect((await otherModel.extract(chunks.slice(2))).stats).toMatchObject({ cached: 0, calls: 1 })
    const otherPrompt = new LlmExtractor({ client: { url: server.url, model: 'test-model', timeoutMs: 1000, responseFormat: 'json_object' }, prompts: { ...prompts, system: `${prompts.system}\n只列出人物。` }, cacheDir, concurrency: 1, retries: 0 })
    expect((await otherPrompt.extract(chunks.slice(2))).stats).toMatchObject({ cached: 0, calls: 1 })
    expect((await x.extract(chunks.slice(2), { cacheOnly: true })).stats).toMatchObject({ cached: 1, calls: 0 })
  })

  it('keeps at most `concurrency` calls in flight', async () => {
    const x = await extractor({ concurrency: 2 })
    const chunks = Array.from({ length: 8 }, (_, i) => chunk(`c#${i}`, `SLOW-EVERY-TIME ${i} 借阅系统。`))
    const progress: number[] = []
    const { stats } = await x.extract(chunks, { onProgress: (s) => progress.push(s.chunks - s.failed) })
    expect(stats.calls).toBe(8)
    expect(server.maxInFlight).toBe(2)
    expect(progress).toHaveLength(8)
    expect(x.totals()).toMatchObject({ calls: 8, total_tokens: 8 * 120 })
  })
})

import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { resolve } from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { BackendTimeoutError, BackendUnavailableError, UnexpectedResponseError } from '../../src/providers/errors.js'
import { createEmbedder } from '../../src/providers/embedder/index.js'
import { LocalEmbedder } from '../../src/providers/embedder/local.js'
import { OpenAICompatibleEmbedder } from '../../src/providers/embedder/openai.js'
import { describeEmbedderContract } from '../contracts/embedder.contract.js'

const MODEL_DIR = resolve(process.env['MODEL_DIR'] ?? 'models')
const QUERY_INSTRUCTION = '为这个句子生成表示以用于检索相关文章：'

interface SeenRequest {
  method: string
  path: string
  authorization: string | undefined
  body: { model?: unknown; input?: unknown; dimensions?: unknown }
}

/**
 * A small server speaking OpenAI's `/v1/embeddings`, computing real vectors with the local model. Like
 * some real servers it answers in reverse `index` order and with vectors not of unit length (scaled by
 * 3), which the client must undo. The model name picks a misbehaviour: `fail-500`, `unavailable-503`,
 * `malformed`, `no-data`, `slow`, `wrong-dimension`, `missing-item`, `base64`.
 */
async function startEmbeddingServer(model: LocalEmbedder): Promise<{ url: string; seen: SeenRequest[]; server: Server }> {
  const seen: SeenRequest[] = []
  const readBody = async (request: IncomingMessage): Promise<string> => {
    let text = ''
    for await (const chunk of request) text += String(chunk)
    return text
  }
  const server = createServer((request, response) => {
    void (async () => {
      const body = JSON.parse(await readBody(request)) as SeenRequest['body']
      seen.push({ method: request.method ?? '', path: request.url ?? '', authorization: request.headers.authorization, body })
      const reply = (status: number, payload: string): void => {
        response.writeHead(status, { 'content-type': 'application/json' }).end(payload)
      }
      if (request.method !== 'POST' || request.url !== '/v1/embeddings') return reply(404, '{"error":"not found"}')
      const input = body.input as string[]
      switch (body.model) {
        case 'fail-500':
          return reply(500, '{"error":{"message":"boom"}}')
        case 'unavailable-503':
          return reply(503, '{"error":{"message":"model loading"}}')
        case 'malformed':
          return reply(200, '{"data": [ {"embedding": [0.1, ')
        case 'no-data':
          return reply(200, '{"object":"list"}')
        case 'slow':
          await new Promise((r) => setTimeout(r, 1500))
          return reply(200, '{"data":[]}')
        default:
      }
      const vectors = await model.embedPassages(input)
      const data = vectors.map((v, index) => {
        const values = Array.from(v, (x) => x * 3)
        if (body.model === 'wrong-dimension') values.length = 384
        const embedding = body.model === 'base64' ? Buffer.from(new Float32Array(values).buffer).toString('base64') : values
        return { object: 'embedding', index, embedding }
      })
      if (body.model === 'missing-item') data.pop()
      reply(200, JSON.stringify({ object: 'list', model: body.model, data: data.reverse(), usage: { prompt_tokens: 0, total_tokens: 0 } }))
    })().catch((error: unknown) => response.writeHead(500).end(String(error)))
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const { port } = server.address() as AddressInfo
  return { url: `http://127.0.0.1:${port}`, seen, server }
}

const model = new LocalEmbedder({ modelDir: MODEL_DIR, modelName: 'bge-small-zh-v1.5' })
let url: string
let seen: SeenRequest[]
let server: Server

beforeAll(async () => {
  await model.init()
  ;({ url, seen, server } = await startEmbeddingServer(model))
})

afterAll(async () => {
  await new Promise((r) => server.close(r))
  await model.close()
})

describeEmbedderContract(
  'openai-compatible (local server, batches of 2)',
  async () => createEmbedder({ backend: 'openai', url, model: 'bge-small-zh-v1.5', timeoutMs: 10_000, batchSize: 2 }),
  { dimensions: 512, queryInstruction: QUERY_INSTRUCTION }
)

describe('OpenAICompatibleEmbedder requests', () => {
  beforeEach(() => {
    seen.length = 0
  })

  it('POSTs {model, input} to <url>/v1/embeddings with the bearer key', async () => {
    const embedder = new OpenAICompatibleEmbedder({ url, model: 'bge-small-zh-v1.5', apiKey: 'sk-test', timeoutMs: 10_000 })
    await embedder.embedPassages(['甲', '乙'])
    expect(seen).toEqual([
      { method: 'POST', path: '/v1/embeddings', authorization: 'Bearer sk-test', body: { model: 'bge-small-zh-v1.5', input: ['甲', '乙'] } }
    ])
  })

  it('accepts a url that already ends in /v1 (and a trailing slash)', async () => {
    for (const base of [`${url}/v1`, `${url}/v1/`, `${url}/`]) {
      const embedder = new OpenAICompatibleEmbedder({ url: base, model: 'bge-small-zh-v1.5', timeoutMs: 10_000 })
      expect(await embedder.embedPassages(['甲'])).toHaveLength(1)
    }
    expect(seen.map((r) => r.path)).toEqual(['/v1/embeddings', '/v1/embeddings', '/v1/embeddings'])
  })

  it('sends dimensions only when configured, and no Authorization without a key', async () => {
    const embedder = new OpenAICompatibleEmbedder({ url, model: 'bge-small-zh-v1.5', dimensions: 512, timeoutMs: 10_000 })
    await embedder.embedQueries(['甲'])
    expect(seen[0]?.body).toEqual({ model: 'bge-small-zh-v1.5', input: [`${QUERY_INSTRUCTION}甲`], dimensions: 512 })
    expect(seen[0]?.authorization).toBeUndefined()
  })

  it('splits input into batchSize requests and keeps the order across them', async () => {
    const embedder = new OpenAICompatibleEmbedder({ url, model: 'bge-small-zh-v1.5', timeoutMs: 10_000, batchSize: 2 })
    const texts = ['一', '二', '三', '四', '五']
    const vectors = await embedder.embedPassages(texts)
    expect(seen.map((r) => r.body.input)).toEqual([['一', '二'], ['三', '四'], ['五']])
    const direct = await model.embedPassages(texts)
    for (const [i, v] of vectors.entries()) {
      expect(v.reduce((s, x, j) => s + x * direct[i]![j]!, 0)).toBeGreaterThan(0.9999)
    }
  })

  it('an empty input makes no request', async () => {
    const embedder = new OpenAICompatibleEmbedder({ url, model: 'bge-small-zh-v1.5', timeoutMs: 10_000 })
    expect(await embedder.embedPassages([])).toEqual([])
    expect(await embedder.embedQueries([])).toEqual([])
    expect(seen).toHaveLength(0)
  })

  it('reads base64 float32 embeddings too', async () => {
    const embedder = new OpenAICompatibleEmbedder({ url, model: 'base64', timeoutMs: 10_000, queryInstruction: '' })
    const [v] = await embedder.embedPassages(['我是中国人'])
    const [direct] = await model.embedPassages(['我是中国人'])
    expect(v!.reduce((s, x, j) => s + x * direct![j]!, 0)).toBeGreaterThan(0.9999)
  })

  it('applies no query instruction for models that are not bge-zh', async () => {
    const embedder = new OpenAICompatibleEmbedder({ url, model: 'text-embedding-3-small', timeoutMs: 10_000 })
    await embedder.embedQueries(['甲'])
    expect(seen[0]?.body.input).toEqual(['甲'])
  })
})

describe('OpenAICompatibleEmbedder failures map to the provider errors', () => {
  const make = (modelName: string, timeoutMs = 10_000): OpenAICompatibleEmbedder =>
    new OpenAICompatibleEmbedder({ url, model: modelName, timeoutMs })

  it.each([
    ['fail-500', UnexpectedResponseError, /HTTP 500.*boom/],
    ['unavailable-503', BackendUnavailableError, /HTTP 503/],
    ['malformed', UnexpectedResponseError, /not JSON/],
    ['no-data', UnexpectedResponseError, /no data array/],
    ['wrong-dimension', UnexpectedResponseError, /384 dimensions, expected 512/],
    ['missing-item', UnexpectedResponseError, /1 embeddings for 2 inputs/]
  ])('%s -> %o', async (modelName, errorClass, message) => {
    const failure = make(modelName).embedPassages(['甲', '乙'])
    await expect(failure).rejects.toBeInstanceOf(errorClass)
    await expect(failure).rejects.toThrow(message)
  })

  it('a server slower than timeoutMs -> BackendTimeoutError', async () => {
    const started = performance.now()
    await expect(make('slow', 200).embedPassages(['甲'])).rejects.toBeInstanceOf(BackendTimeoutError)
    expect(performance.now() - started).toBeLessThan(1400) // the server answers at 1500 ms
  })

  it('nothing listening -> BackendUnavailableError, and health says so', async () => {
    const closed = createServer()
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r))
    const { port } = closed.address() as AddressInfo
    await new Promise((r) => closed.close(r))
    const embedder = new OpenAICompatibleEmbedder({ url: `http://127.0.0.1:${port}`, model: 'bge-small-zh-v1.5', timeoutMs: 2000 })
    await expect(embedder.embedPassages(['甲'])).rejects.toBeInstanceOf(BackendUnavailableError)
    const health = await embedder.health()
    expect(health.ok).toBe(false)
    expect(health.detail).toMatch(/ECONNREFUSED/)
  })

  it('after close, calls fail with BackendUnavailableError', async () => {
    const embedder = make('bge-small-zh-v1.5')
    await embedder.close()
    await expect(embedder.embedPassages(['甲'])).rejects.toBeInstanceOf(BackendUnavailableError)
  })
})

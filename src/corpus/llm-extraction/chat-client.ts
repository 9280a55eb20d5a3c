/**
 * One call of an OpenAI-compatible `POST /v1/chat/completions` asking for JSON output: the request OpenAI documents
 * (`model`, `messages`, `temperature`, `response_format` `json_object` or `json_schema`) and the parts of its answer
 * read here (`choices[0].message.content`, `choices[0].finish_reason`, `usage`). No retry here: the extractor
 * decides, from `ChatCallError.retryable`. docs/llm-extraction.md.
 */
import { EXTRACTION_SCHEMA } from '../../derive/llm/answer.js'

type ResponseFormat = 'json_object' | 'json_schema'

export interface ChatClientOptions {
  /** Server root, with or without a trailing `/v1` (`https://api.openai.com`, `http://127.0.0.1:8000/v1`). */
  url: string
  model: string
  /** Sent as `Authorization: Bearer <apiKey>` when set. */
  apiKey?: string
  /** Deadline of one request, answer body included, in milliseconds. */
  timeoutMs: number
  responseFormat: ResponseFormat
}

export interface ChatMessage {
  role: 'system' | 'user'
  content: string
}

/** Tokens of one call as the server counts them (`usage`); zeros when it sends none. */
export interface TokenUsage {
  prompt_tokens: number
  completion_tokens: number
  total_tokens: number
}

export interface ChatAnswer {
  content: string
  finishReason?: string
  usage: TokenUsage
}

/** A call that gave no answer to use. `retryable`: 429, 408, 5xx, a timeout or no connection; not another 4xx. */
export class ChatCallError extends Error {
  constructor(message: string, readonly retryable: boolean, readonly retryAfterMs?: number, readonly usage?: TokenUsage) {
    super(message)
    this.name = 'ChatCallError'
  }
}

const chatEndpoint = (url: string): string => `${url.replace(/\/+$/, '').replace(/\/v1$/, '')}/v1/chat/completions`

function responseFormatBody(format: ResponseFormat): Record<string, unknown> {
  return format === 'json_schema'
    ? { type: 'json_schema', json_schema: { name: 'extraction', strict: true, schema: EXTRACTION_SCHEMA } }
    : { type: 'json_object' }
}

export async function chatComplete(options: ChatClientOptions, messages: readonly ChatMessage[], signal?: AbortSignal): Promise<ChatAnswer> {
  const endpoint = chatEndpoint(options.url)
  const timeout = AbortSignal.timeout(options.timeoutMs)
  let status: number
  let retryAfter: string | null
  let text: string
  try {
    const response = await fetch(endpoint, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json',
        ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {})
      },
      // temperature 0: the same chunk should give the same extraction, as far as the server allows.
      body: JSON.stringify({ model: options.model, messages, temperature: 0, response_format: responseFormatBody(options.responseFormat) }),
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout
    })
    status = response.status
    retryAfter = response.headers.get('retry-after')
    text = await response.text()
  } catch (error) {
    if (signal?.aborted) throw error
    if (timeout.aborted) throw new ChatCallError(`${endpoint} did not answer within ${options.timeoutMs} ms`, true)
    throw new ChatCallError(`${endpoint} unreachable: ${(error as Error).cause ? String((error as Error).cause) : String(error)}`, true)
  }
  if (status < 200 || status > 299) {
    const retryable = status === 429 || status === 408 || status >= 500
    throw new ChatCallError(`${endpoint} answered HTTP ${status}: ${text.slice(0, 200)}`, retryable, retryAfterMs(retryAfter))
  }
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    throw new ChatCallError(`${endpoint} answered a body that is not JSON: ${text.slice(0, 80)}`, true)
  }
  const usage = usageOf(body)
  const choice = (body as { choices?: Array<{ message?: { content?: unknown }; finish_reason?: unknown }> } | null)?.choices?.[0]
  const content = choice?.message?.content
  if (typeof content !== 'string') throw new ChatCallError(`${endpoint} answered no choices[0].message.content`, true, undefined, usage)
  return { content, usage, ...(typeof choice?.finish_reason === 'string' ? { finishReason: choice.finish_reason } : {}) }
}

function usageOf(body: unknown): TokenUsage {
  const u = (body as { usage?: Record<string, unknown> } | null)?.usage ?? {}
  const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : 0)
  const prompt = n(u.prompt_tokens)
  const completion = n(u.completion_tokens)
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: n(u.total_tokens) || prompt + completion }
}

/** `Retry-After` in seconds or as an HTTP date, in milliseconds from now; undefined when absent or unreadable. */
function retryAfterMs(header: string | null): number | undefined {
  if (header === null || header.trim() === '') return undefined
  const seconds = Number(header)
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000)
  const date = Date.parse(header)
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now())
}

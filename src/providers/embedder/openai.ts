import { BackendTimeoutError, backendName, BackendUnavailableError, UnexpectedResponseError, errorMessage, probeHealth, type BackendHealth, abortError } from '../errors.js'
import type { Embedder } from './port.js'
import { BGE_EN_QUERY_INSTRUCTION, BGE_ZH_QUERY_INSTRUCTION, normalizeL2 } from './vectors.js'

export interface OpenAICompatibleEmbedderOptions {
  /** Server root, with or without a trailing `/v1` (`https://api.openai.com`, `http://tei:8080/v1`). */
  url: string
  /** Model name sent in each request and reported as `model`. */
  model: string
  /** Sent as `Authorization: Bearer <apiKey>` when set. */
  apiKey?: string
  /**
   * Width of the vectors. When set it is also sent as `dimensions` (OpenAI's text-embedding-3 models
   * shorten to it); when absent nothing is sent and 512 (bge-small-zh-v1.5 behind TEI, vLLM, Ollama) is
   * expected. A server answering another width fails with UnexpectedResponseError.
   */
  dimensions?: number
  /** Deadline for one HTTP request of query embeddings, body included, in milliseconds. */
  timeoutMs: number
  /** Deadline for one request of passage embeddings (ingestion batches), in milliseconds. Default `timeoutMs`. */
  passageTimeoutMs?: number
  /** Texts per request. Default 64. */
  batchSize?: number
  /**
   * Prefix for queries. Default: bge's Chinese retrieval instruction when the model name looks like
   * `bge-*-zh*`, none otherwise (OpenAI's models take no instruction).
   */
  queryInstruction?: string
}

const BACKEND = backendName('embedder', 'openai')

/**
 * Any server speaking OpenAI's `POST /v1/embeddings` (OpenAI, Hugging Face TEI, Ollama, vLLM). Vectors are
 * put back in input order by their `index` and L2-normalised here, whatever the server does.
 */
export class OpenAICompatibleEmbedder implements Embedder {
  readonly model: string
  readonly dimensions: number
  readonly #endpoint: string
  readonly #apiKey: string | undefined
  readonly #sendDimensions: boolean
  readonly #timeoutMs: number
  readonly #passageTimeoutMs: number
  readonly #batchSize: number
  readonly #queryInstruction: string
  readonly #inFlight = new Set<AbortController>()
  #closed = false

  constructor(options: OpenAICompatibleEmbedderOptions) {
    this.model = options.model
    this.dimensions = options.dimensions ?? 512
    this.#endpoint = `${options.url.replace(/\/+$/, '').replace(/\/v1$/, '')}/v1/embeddings`
    this.#apiKey = options.apiKey
    this.#sendDimensions = options.dimensions !== undefined
    this.#timeoutMs = options.timeoutMs
    this.#passageTimeoutMs = options.passageTimeoutMs ?? options.timeoutMs
    this.#batchSize = Math.max(1, Math.floor(options.batchSize ?? 64))
    this.#queryInstruction = options.queryInstruction ?? remoteQueryInstruction(options.model)
  }

  embedQueries(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]> {
    return this.#embed(texts.map((t) => this.#queryInstruction + t), this.#timeoutMs, signal)
  }

  embedPassages(texts: readonly string[]): Promise<Float32Array[]> {
    return this.#embed(texts, this.#passageTimeoutMs)
  }

  health(): Promise<BackendHealth> {
    return probeHealth(BACKEND, async () => {
      await this.#embed(['ping'], this.#timeoutMs)
      return `openai-compatible ${this.model}`
    })
  }

  async close(): Promise<void> {
    this.#closed = true
    for (const controller of this.#inFlight) controller.abort(new Error('embedder closed'))
  }

  async #embed(texts: readonly string[], timeoutMs: number, signal?: AbortSignal): Promise<Float32Array[]> {
    const out: Float32Array[] = []
    for (let start = 0; start < texts.length; start += this.#batchSize) {
      out.push(...(await this.#request(texts.slice(start, start + this.#batchSize), timeoutMs, signal)))
    }
    return out
  }

  async #request(input: string[], timeoutMs: number, signal?: AbortSignal): Promise<Float32Array[]> {
    if (this.#closed) throw new BackendUnavailableError(BACKEND, 'embedder is closed')
    if (signal?.aborted) throw abortError(signal, BACKEND)
    const controller = new AbortController()
    const timer = setTimeout(() => controller.abort(new BackendTimeoutError(BACKEND, `${this.#endpoint} did not answer within ${timeoutMs} ms`)), timeoutMs)
    // The caller's signal (a leg's deadline) cancels the HTTP request too.
    const onAbort = () => controller.abort(abortError(signal!, BACKEND))
    signal?.addEventListener('abort', onAbort, { once: true })
    this.#inFlight.add(controller)
    let status: number
    let bodyText: string
    try {
      const response = await fetch(this.#endpoint, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json',
          ...(this.#apiKey === undefined ? {} : { authorization: `Bearer ${this.#apiKey}` })
        },
        body: JSON.stringify({ model: this.model, input, ...(this.#sendDimensions ? { dimensions: this.dimensions } : {}) }),
        signal: controller.signal
      })
      status = response.status
      bodyText = await response.text()
    } catch (error) {
      const reason: unknown = controller.signal.aborted ? controller.signal.reason : error
      if (reason instanceof BackendTimeoutError) throw reason
      throw new BackendUnavailableError(BACKEND, `${this.#endpoint} unreachable: ${describeFetchError(reason)}`, { cause: reason })
    } finally {
      clearTimeout(timer)
      signal?.removeEventListener('abort', onAbort)
      this.#inFlight.delete(controller)
    }
    if (status < 200 || status > 299) {
      const message = `${this.#endpoint} answered HTTP ${status}: ${bodyText.slice(0, 300)}`
      // Overload and gateway statuses mean the model server is not there right now, not that it misbehaved.
      if ([429, 502, 503, 504].includes(status)) throw new BackendUnavailableError(BACKEND, message)
      throw new UnexpectedResponseError(BACKEND, message)
    }
    return this.#parse(bodyText, input.length)
  }

  #parse(bodyText: string, count: number): Float32Array[] {
    const fail = (what: string): never => {
      throw new UnexpectedResponseError(BACKEND, `${this.#endpoint} answered an unusable body: ${what}`)
    }
    let body: unknown
    try {
      body = JSON.parse(bodyText)
    } catch {
      return fail(`not JSON: ${bodyText.slice(0, 100)}`)
    }
    const data = (body as { data?: unknown } | null)?.data
    if (!Array.isArray(data)) return fail('no data array')
    if (data.length !== count) return fail(`${data.length} embeddings for ${count} inputs`)
    const vectors = new Array<Float32Array | undefined>(count)
    for (const item of data as unknown[]) {
      const { index, embedding } = (item ?? {}) as { index?: unknown; embedding?: unknown }
      if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= count || vectors[index] !== undefined) {
        return fail(`bad or repeated index ${JSON.stringify(index)}`)
      }
      const values = decodeEmbedding(embedding)
      if (values === undefined) return fail(`embedding ${index} is not an array of finite numbers`)
      if (values.length !== this.dimensions) {
        return fail(`embedding ${index} has ${values.length} dimensions, expected ${this.dimensions}`)
      }
      try {
        vectors[index] = normalizeL2(values)
      } catch (error) {
        return fail(`embedding ${index}: ${errorMessage(error)}`)
      }
    }
    return vectors as Float32Array[]
  }
}

/** A float array, or base64 of little-endian float32 (OpenAI's `encoding_format: "base64"`). */
function decodeEmbedding(embedding: unknown): ArrayLike<number> | undefined {
  if (Array.isArray(embedding)) {
    return embedding.every((v) => typeof v === 'number' && Number.isFinite(v)) ? (embedding as number[]) : undefined
  }
  if (typeof embedding === 'string') {
    const bytes = Buffer.from(embedding, 'base64')
    if (bytes.length === 0 || bytes.length % 4 !== 0) return undefined
    const values = new Float32Array(bytes.length / 4)
    for (let i = 0; i < values.length; i++) values[i] = bytes.readFloatLE(i * 4)
    return values.every(Number.isFinite) ? values : undefined
  }
  return undefined
}

function describeFetchError(error: unknown): string {
  if (!(error instanceof Error)) return String(error)
  // undici puts the socket error (ECONNREFUSED, ENOTFOUND) in `cause`.
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : ''
  return `${error.message}${cause}`
}

/** The bge v1.5 retrieval instruction a remote model's name implies (zh or en); none for other models. */
function remoteQueryInstruction(model: string): string {
  if (/bge-.*zh/i.test(model)) return BGE_ZH_QUERY_INSTRUCTION
  if (/bge-.*en-v1\.5/i.test(model)) return BGE_EN_QUERY_INSTRUCTION
  return ''
}

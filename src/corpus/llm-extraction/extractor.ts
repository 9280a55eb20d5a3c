/**
 * Extraction of entities and relations by an LLM, chunk by chunk: from the cache when the same chunk was extracted
 * before under the same model and prompts, else by a call of the chat endpoint, at most `concurrency` calls at once in
 * the process, each retried with exponential backoff on 429, 5xx, a timeout, no connection or an unusable answer.
 * A chunk whose every attempt failed has no extraction (its document then contributes what the rules derive).
 * docs/llm-extraction.md.
 */
import { MalformedExtractionError, parseExtraction, type ChunkExtraction } from '../../derive/llm/answer.js'
import { promptsHash, userMessage, type ExtractionPrompts } from '../../derive/llm/prompt.js'
import type { DerivationChunk } from '../../derive/document.js'
import { ExtractionCache, extractionKey } from './cache.js'
import { ChatCallError, chatComplete, type ChatClientOptions, type TokenUsage } from './chat-client.js'

export interface LlmExtractorOptions {
  client: ChatClientOptions
  prompts: ExtractionPrompts
  /** Folder of the cache (`DATA_DIR/llm-extraction`). */
  cacheDir: string
  /** Calls in flight at once, in the whole process. */
  concurrency: number
  /** Further attempts after a failed one (so `retries + 1` calls at most per chunk). */
  retries: number
  /** Wait before the first retry, in ms; doubled each retry, half of it random (jitter). Default 1000. */
  backoffMs?: number
  /** Longest wait between attempts, also when the server's `Retry-After` asks for more. Default 60000. */
  maxBackoffMs?: number
  /** Told after every call, for metrics: its outcome and the tokens the server counted. */
  onCall?: (outcome: CallOutcome, usage: TokenUsage) => void
}

/** `ok`; `malformed` (an answer that is not the JSON asked for); `retryable` (429, 5xx, timeout, no connection); `refused` (another 4xx). */
type CallOutcome = 'ok' | 'malformed' | 'retryable' | 'refused'

/** What extracting some chunks took: the report of a write (`derived.llm`) and of progress. */
export interface LlmExtractionStats {
  /** Chunks asked for. */
  chunks: number
  /** Of those, answered from the cache. */
  cached: number
  /** Of those, with no extraction: every attempt failed (or, read from the cache only, none is there). */
  failed: number
  /** HTTP calls made, retries included. */
  calls: number
  /** Calls that were retries of a failed one. */
  retries: number
  prompt_tokens: number
  completion_tokens: number
  total_tokens: number
}

export const noStats = (): LlmExtractionStats => ({ chunks: 0, cached: 0, failed: 0, calls: 0, retries: 0, prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 })

export function addStats(a: LlmExtractionStats, b: LlmExtractionStats): LlmExtractionStats {
  const sum = noStats()
  for (const key of Object.keys(sum) as Array<keyof LlmExtractionStats>) sum[key] = a[key] + b[key]
  return sum
}

export interface ExtractOptions {
  /** Read the cache only, ask the model nothing (under a write lock, after `extract` warmed the cache). */
  cacheOnly?: boolean
  /** Told after each chunk is done, with the stats so far. */
  onProgress?: (stats: LlmExtractionStats) => void
}

export class LlmExtractor {
  readonly #options: LlmExtractorOptions
  readonly #cache: ExtractionCache
  readonly #promptsHash: string
  readonly #slots: Semaphore
  readonly #totals = noStats()

  constructor(options: LlmExtractorOptions) {
    this.#options = options
    this.#cache = new ExtractionCache(options.cacheDir)
    this.#promptsHash = promptsHash(options.prompts)
    this.#slots = new Semaphore(Math.max(1, Math.floor(options.concurrency)))
  }

  /** Everything this process extracted so far (`cacheOnly` reads not counted). */
  totals(): LlmExtractionStats {
    return { ...this.#totals }
  }

  /** Each chunk's extraction, by chunk id (none for a chunk that failed), and what it took. */
  async extract(chunks: readonly DerivationChunk[], options: ExtractOptions = {}): Promise<{ extractions: Map<string, ChunkExtraction>; stats: LlmExtractionStats }> {
    const stats = { ...noStats(), chunks: chunks.length }
    const extractions = new Map<string, ChunkExtraction>()
    await Promise.all(chunks.map(async (chunk) => {
      const heading = headingOf(chunk)
      const key = extractionKey({ model: this.#options.client.model, promptsHash: this.#promptsHash, responseFormat: this.#options.client.responseFormat, heading, text: chunk.text })
      const cached = await this.#cache.get(key)
      let extraction: ChunkExtraction | undefined = cached
      if (cached) stats.cached += 1
      else if (!options.cacheOnly) {
        extraction = await this.#slots.run(() => this.#ask(chunk.text, heading, stats))
        if (extraction) await this.#cache.put(key, extraction)
      }
      if (extraction) extractions.set(chunk.id, extraction)
      else stats.failed += 1
      options.onProgress?.({ ...stats })
    }))
    if (!options.cacheOnly) Object.assign(this.#totals, addStats(this.#totals, stats))
    return { extractions, stats }
  }

  /** The model's extraction of one chunk, or undefined once every attempt failed. */
  async #ask(text: string, heading: string, stats: LlmExtractionStats): Promise<ChunkExtraction | undefined> {
    const { client, prompts, retries, onCall } = this.#options
    const messages = [{ role: 'system' as const, content: prompts.system }, { role: 'user' as const, content: userMessage(prompts, { text, heading }) }]
    for (let attempt = 0; ; attempt++) {
      stats.calls += 1
      if (attempt > 0) stats.retries += 1
      let retryAfter: number | undefined
      let retryable: boolean
      let usage: TokenUsage | undefined
      try {
        const answer = await chatComplete(client, messages)
        usage = answer.usage
        const extraction = parseExtraction(answer.content)
        count(stats, usage)
        onCall?.('ok', usage)
        return extraction
      } catch (error) {
        if (error instanceof MalformedExtractionError) {
          retryable = true
          onCall?.('malformed', usage!)
        } else if (error instanceof ChatCallError) {
          retryable = error.retryable
          retryAfter = error.retryAfterMs
          usage = error.usage
          onCall?.(retryable ? 'retryable' : 'refused', usage ?? noUsage)
        } else throw error
        if (usage) count(stats, usage)
      }
      if (!retryable || attempt >= retries) return undefined
      await sleep(this.#backoff(attempt, retryAfter))
    }
  }

  #backoff(attempt: number, retryAfterMs: number | undefined): number {
    const base = this.#options.backoffMs ?? 1000
    const max = this.#options.maxBackoffMs ?? 60_000
    const exponential = base * 2 ** attempt
    const jittered = exponential / 2 + Math.random() * (exponential / 2)
    return Math.min(max, Math.max(jittered, retryAfterMs ?? 0))
  }
}

const noUsage: TokenUsage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 }

function count(stats: LlmExtractionStats, usage: TokenUsage): void {
  stats.prompt_tokens += usage.prompt_tokens
  stats.completion_tokens += usage.completion_tokens
  stats.total_tokens += usage.total_tokens
}

/** The chunk's place in its document as the prompt shows it: title, then heading path, joined by ` > `. */
function headingOf(chunk: DerivationChunk): string {
  const path = chunk.metadata?.heading_path
  const headings = Array.isArray(path) ? path.filter((h): h is string => typeof h === 'string') : typeof path === 'string' ? path.split(/\s+>\s+/) : []
  return [chunk.title, ...headings].filter((h): h is string => typeof h === 'string' && h !== '').filter((h, i, all) => all.indexOf(h) === i).join(' > ')
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** At most `size` tasks at once; the others wait in arrival order. */
class Semaphore {
  #free: number
  readonly #waiting: Array<() => void> = []

  constructor(size: number) {
    this.#free = size
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.#free > 0) this.#free -= 1
    else await new Promise<void>((resolve) => this.#waiting.push(resolve))
    try {
      return await task()
    } finally {
      const next = this.#waiting.shift()
      if (next) next()
      else this.#free += 1
    }
  }
}

import { access } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { BackendUnavailableError, backendName, UnexpectedResponseError, errorMessage, probeHealth, type BackendHealth, abortError } from '../errors.js'
import type { Embedder, EmbeddingBacklog } from './port.js'
import { BGE_ZH_QUERY_INSTRUCTION, normalizeL2 } from './vectors.js'

/** Files `npm run model` (`make model`) writes into `<modelDir>/<modelName>/`. */
export const MODEL_FILES = ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'onnx/model_quantized.onnx'] as const

export interface LocalEmbedderOptions {
  /** Folder holding one sub-folder per model (`MODEL_DIR`, default `./models`). */
  modelDir: string
  /** Name of the model's sub-folder, also reported as `model` (e.g. `bge-small-zh-v1.5`). */
  modelName: string
  /**
   * Texts per ONNX run. Default 1: the int8 graph quantises activations with one scale per run, so a text
   * embedded in a batch of 8 comes out at cosine ~0.994 to the same text embedded alone, and a passage's
   * vector would depend on its neighbours. Larger batches buy ~20% throughput on 2 cores (bench/embedder.ts).
   */
  batchSize?: number
  /** Tokens per text including `[CLS]` and `[SEP]`; longer texts are cut. Default 512, the model's limit. */
  maxLength?: number
  /** Width of the model's output. Default 512 (bge-small-zh-v1.5); checked against config.json on load. */
  dimensions?: number
  /** Prefix for queries. Default bge's Chinese retrieval instruction. */
  queryInstruction?: string
  /** ONNX Runtime intra-op threads. Default: ONNX Runtime's choice (one per core). */
  threads?: number
}

type Transformers = typeof import('@huggingface/transformers')
type Tokenizer = Awaited<ReturnType<Transformers['AutoTokenizer']['from_pretrained']>>
type Model = Awaited<ReturnType<Transformers['AutoModel']['from_pretrained']>>

interface Loaded {
  tokenizer: Tokenizer
  model: Model
}

const BACKEND = backendName('embedder', 'local')

/**
 * bge-small-zh-v1.5 (int8 ONNX) in process through @huggingface/transformers on onnxruntime-node, CPU only:
 * the `[CLS]` vector of the last hidden state, L2-normalised. The model loads once, on `init()` or on
 * the first call; runs are serialised, so concurrent callers queue rather than compete for the cores.
 * With the default `batchSize` of 1 a vector depends on its own input alone, never on the texts it was
 * sent with, so re-embedding a passage gives the same vector.
 */
export class LocalEmbedder implements Embedder {
  readonly model: string
  readonly dimensions: number
  readonly #folder: string
  readonly #batchSize: number
  readonly #maxLength: number
  readonly #queryInstruction: string
  readonly #threads: number | undefined
  #loading: Promise<Loaded> | undefined
  #loaded = false
  #queue: Promise<unknown> = Promise.resolve()
  /** When each run still waiting in the queue was queued (performance.now()), oldest first. */
  readonly #waiting: number[] = []
  /**
   * The last turns, in milliseconds: the time between the starts of two runs while others wait, that is a
   * run's own time plus the event loop's delay in starting the next, both longer on a busy machine.
   */
  readonly #turns = new RecentMean(128)
  #lastStartAt = 0
  #closed = false

  constructor(options: LocalEmbedderOptions) {
    this.model = options.modelName
    this.dimensions = options.dimensions ?? 512
    this.#folder = resolve(options.modelDir, options.modelName)
    this.#batchSize = Math.max(1, Math.floor(options.batchSize ?? 1))
    this.#maxLength = Math.min(512, Math.max(8, Math.floor(options.maxLength ?? 512)))
    this.#queryInstruction = options.queryInstruction ?? BGE_ZH_QUERY_INSTRUCTION
    this.#threads = options.threads
  }

  /** Loads the tokenizer and the ONNX session now (otherwise the first call does). */
  async init(): Promise<void> {
    await this.#load()
  }

  embedQueries(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]> {
    return this.#embed(texts.map((t) => this.#queryInstruction + t), signal)
  }

  embedPassages(texts: readonly string[]): Promise<Float32Array[]> {
    return this.#embed(texts)
  }

  backlog(): EmbeddingBacklog {
    const oldest = this.#waiting[0]
    return {
      queued: this.#waiting.length,
      oldestWaitMs: oldest === undefined ? 0 : performance.now() - oldest,
      expectedWaitMs: this.#waiting.length * this.#turns.mean
    }
  }

  health(): Promise<BackendHealth> {
    return probeHealth(BACKEND, async () => {
      // A probe during the load would wait for it; readiness should say at once that the model is not there yet.
      if (this.#loading !== undefined && !this.#loaded) throw new BackendUnavailableError(BACKEND, 'the model is still loading')
      await this.#embed(['健康检查'])
      return `local ${this.model}`
    })
  }

  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    const loading = this.#loading
    this.#loading = undefined
    await this.#queue.catch(() => undefined)
    if (loading !== undefined) {
      const loaded = await loading.catch(() => undefined)
      await loaded?.model.dispose()
    }
  }

  async #embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]> {
    if (texts.length === 0) return []
    const loaded = await this.#load()
    const out: Float32Array[] = []
    for (let start = 0; start < texts.length; start += this.#batchSize) {
      const batch = texts.slice(start, start + this.#batchSize)
      // A run whose caller gave up while it queued is dropped at its turn: the model's time goes to live requests.
      out.push(...(await this.#enqueue(() => {
        if (signal?.aborted) throw abortError(signal, BACKEND)
        return this.#run(loaded, batch)
      })))
    }
    return out
  }

  #enqueue<T>(task: () => Promise<T>): Promise<T> {
    this.#waiting.push(performance.now())
    const result = this.#queue.then(() => {
      const queuedAt = this.#waiting.shift()!
      const now = performance.now()
      // Only a run that had to wait measures a turn: one that found the model idle would count the idle time.
      if (this.#lastStartAt > 0 && now - queuedAt > 1) this.#turns.add(now - this.#lastStartAt)
      this.#lastStartAt = now
      return task()
    })
    this.#queue = result.catch(() => undefined)
    return result
  }

  async #run({ tokenizer, model }: Loaded, texts: string[]): Promise<Float32Array[]> {
    if (this.#closed) throw new BackendUnavailableError(BACKEND, 'local embedder is closed')
    let hidden: { dims: number[]; data: Float32Array }
    try {
      const inputs = tokenizer(texts, { padding: true, truncation: true, max_length: this.#maxLength })
      const outputs = (await model(inputs)) as { last_hidden_state?: { dims: number[]; data: Float32Array } }
      if (outputs.last_hidden_state === undefined) throw new Error('the model returned no last_hidden_state')
      hidden = outputs.last_hidden_state
    } catch (error) {
      throw new UnexpectedResponseError(BACKEND, `local model run failed: ${errorMessage(error)}`, { cause: error })
    }
    const [batch, tokens, width] = hidden.dims
    if (batch !== texts.length || tokens === undefined || width !== this.dimensions) {
      throw new UnexpectedResponseError(BACKEND, `model output has shape [${hidden.dims.join(', ')}], expected [${texts.length}, n, ${this.dimensions}]`)
    }
    const vectors: Float32Array[] = []
    for (let i = 0; i < batch; i++) {
      // CLS pooling: the first token's hidden state of each sequence.
      const offset = i * tokens * width
      vectors.push(normalizeL2(hidden.data.subarray(offset, offset + width)))
    }
    return vectors
  }

  #load(): Promise<Loaded> {
    if (this.#closed) return Promise.reject(new BackendUnavailableError(BACKEND, 'local embedder is closed'))
    if (this.#loading === undefined) {
      const loading = this.#open()
      this.#loading = loading
      loading.then(() => { this.#loaded = true }, () => undefined)
      // A failed load is retried on the next call (the model may have been fetched in the meantime).
      loading.catch(() => {
        if (this.#loading === loading) this.#loading = undefined
      })
    }
    return this.#loading
  }

  async #open(): Promise<Loaded> {
    for (const file of MODEL_FILES) {
      try {
        await access(join(this.#folder, file))
      } catch {
        throw new BackendUnavailableError(
          BACKEND,
          `model ${this.model} not found: ${join(this.#folder, file)} is missing; run \`make model\` (npm run model) with MODEL_DIR set to the model folder's parent`
        )
      }
    }
    try {
      // Imported here, not at the top: loading onnxruntime costs time and memory the openai backend never needs.
      const { AutoModel, AutoTokenizer } = await import('@huggingface/transformers')
      // An absolute path is not a hub id, so transformers.js reads the folder as is and never goes online.
      const tokenizer = await AutoTokenizer.from_pretrained(this.#folder, { local_files_only: true })
      const model = await AutoModel.from_pretrained(this.#folder, {
        local_files_only: true,
        dtype: 'q8',
        device: 'cpu',
        ...(this.#threads === undefined ? {} : { session_options: { intraOpNumThreads: this.#threads } })
      })
      const width = (model.config as { hidden_size?: unknown }).hidden_size
      if (width !== this.dimensions) {
        await model.dispose()
        throw new Error(`config.json says hidden_size ${String(width)}, this embedder is set to ${this.dimensions} dimensions`)
      }
      return { tokenizer, model }
    } catch (error) {
      throw new BackendUnavailableError(BACKEND, `cannot load model from ${this.#folder}: ${errorMessage(error)}`, { cause: error })
    }
  }
}

/**
 * The mean of the last `size` values, each cut at four times the mean so far: one long pause of the event
 * loop (a collection, a rebuild) moves it a little, a machine that stays slow moves it all the way.
 */
class RecentMean {
  readonly #values: number[] = []
  #next = 0
  #sum = 0

  constructor(readonly size: number) {}

  get mean(): number {
    return this.#values.length === 0 ? 0 : this.#sum / this.#values.length
  }

  add(value: number): void {
    const kept = this.#values.length >= 16 ? Math.min(value, 4 * this.mean) : value
    if (this.#values.length < this.size) {
      this.#values.push(kept)
    } else {
      this.#sum -= this.#values[this.#next]!
      this.#values[this.#next] = kept
      this.#next = (this.#next + 1) % this.size
    }
    this.#sum += kept
  }
}

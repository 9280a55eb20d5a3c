import { resolve } from 'node:path'
import { BackendUnavailableError, backendName, UnexpectedResponseError, probeHealth, type BackendHealth, abortError } from '../errors.js'
import { loadOnnxSession, OnnxSessionError, type OnnxSession, type OnnxSessionOptions } from './onnx-session.js'
import type { Embedder, EmbeddingBacklog } from './port.js'
import { RunQueue } from './run-queue.js'
import { SessionProcess } from './session-process-client.js'
import { SessionThread } from './session-thread-client.js'
import { sharedWeightsModel } from './shared-weights.js'
import { LOCAL_MODELS, isLocalModel } from './models.js'
import { BGE_ZH_QUERY_INSTRUCTION } from './vectors.js'


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
  /** Width of the model's output. Default: the known model's (`models.ts`), else 512; checked against config.json on load. */
  dimensions?: number
  /** Prefix for queries. Default: the known model's retrieval instruction, else bge's Chinese one. */
  queryInstruction?: string
  /** ONNX Runtime intra-op threads of each session. Default: ONNX Runtime's choice (one per core). */
  threads?: number
  /**
   * With `threads` of 2 or more: `false` puts ONNX Runtime's waiting intra-op threads to sleep instead of spinning.
   * Default true, ONNX Runtime's (bench/results/concurrency.log.md, "One session of two threads").
   */
  spinning?: boolean
  /**
   * ONNX sessions, each in a worker thread or a process of its own (`pool`), taking runs from one queue. Default 0:
   * one session in this process only, whose runs hold its event loop (the service's default is `EMBEDDING_SESSIONS`,
   * src/config.ts).
   */
  sessions?: number
  /**
   * Where the `sessions` run: `threads`, worker threads of this process sharing its runtime library (see
   * `queriesHere`); `processes`, child processes, each with its own runtime and model, plus the session in this process
   * for lone runs. Default `threads` (bench/results/concurrency.log.md, "The embedding pool and why threads").
   */
  pool?: EmbeddingPool
  /**
   * With `threads` and two sessions or more: one more session in this thread takes a short query only when the threads
   * have no room for it, the last thread then taking no short query (it stays free for passages). Default false
   * (bench/results/concurrency.log.md, "A session on the main thread").
   */
  queriesHere?: boolean
  /**
   * A folder where the sessions' one copy of the weights is kept (./shared-weights.ts): with two sessions or more, every
   * session then maps the packed weights from one file there instead of packing its own. Unset: each session holds its
   * own copy (`EMBEDDING_WEIGHTS=copies`). A copy that cannot be written or does not load leaves each session its own,
   * and `health()` says why.
   */
  weightsDir?: string
}

type EmbeddingPool = 'threads' | 'processes'

interface Loaded {
  queue: RunQueue
  sessions: OnnxSession[]
  /**
   * The session in this process besides the pool's: with processes, the one a lone run takes; with two threads or more,
   * the one that takes short queries the threads have no room for (RunQueue).
   */
  own?: OnnxSession
}

const BACKEND = backendName('embedder', 'local')

/**
 * A query run of at most this many characters (instruction included) may run on the service's own thread when the
 * session threads are busy: about 100 tokens, a few ms of the event loop; longer ones and passages never do.
 */
const INLINE_QUERY_CHARS = 160

/**
 * bge-small-zh-v1.5 or bge-small-en-v1.5 (int8 ONNX) through @huggingface/transformers on onnxruntime-node, CPU only: the `[CLS]` vector
 * of the last hidden state, L2-normalised. The model loads on `init()` or on the first call, in this process or in
 * `sessions` worker threads or processes; every run waits in one queue for a free session, so concurrent callers queue rather than
 * compete for the cores. Every session runs the same onnxruntime build with the same threads, and with the default
 * `batchSize` of 1 a vector depends on its own input alone: the same text gives the same bytes whichever session
 * embeds it and whatever runs beside it.
 */
export class LocalEmbedder implements Embedder {
  readonly model: string
  readonly dimensions: number
  readonly #folder: string
  readonly #batchSize: number
  readonly #session: OnnxSessionOptions
  readonly #sessions: number
  readonly #pool: EmbeddingPool
  readonly #queriesHere: boolean
  readonly #queryInstruction: string
  readonly #weightsDir: string | undefined
  /** Why the sessions hold a copy each although `weightsDir` was given. */
  #weightsUnshared: string | undefined
  #loading: Promise<Loaded> | undefined
  #loaded: Loaded | undefined
  #closed = false

  constructor(options: LocalEmbedderOptions) {
    this.model = options.modelName
    const known = isLocalModel(options.modelName) ? LOCAL_MODELS[options.modelName] : undefined
    this.dimensions = options.dimensions ?? known?.dimensions ?? 512
    this.#folder = resolve(options.modelDir, options.modelName)
    this.#batchSize = Math.max(1, Math.floor(options.batchSize ?? 1))
    this.#queryInstruction = options.queryInstruction ?? known?.queryInstruction ?? BGE_ZH_QUERY_INSTRUCTION
    this.#sessions = Math.max(0, Math.floor(options.sessions ?? 0))
    this.#pool = options.pool ?? 'threads'
    this.#queriesHere = options.queriesHere ?? false
    this.#weightsDir = options.weightsDir
    this.#session = {
      folder: this.#folder,
      maxLength: Math.min(512, Math.max(8, Math.floor(options.maxLength ?? 512))),
      dimensions: this.dimensions,
      ...(options.threads === undefined ? {} : { threads: options.threads }),
      ...(options.spinning === false ? { spinning: false } : {})
    }
  }

  /** Loads the tokenizer and the ONNX sessions now (otherwise the first call does). */
  async init(): Promise<void> {
    await this.#load()
  }

  /** The ids of the session processes (none when the session runs in this process). */
  sessionPids(): number[] {
    return (this.#loaded?.sessions ?? []).flatMap((s) => (s instanceof SessionProcess && s.pid !== undefined ? [s.pid] : []))
  }

  embedQueries(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]> {
    return this.#embed(texts.map((t) => this.#queryInstruction + t), signal, true)
  }

  embedPassages(texts: readonly string[]): Promise<Float32Array[]> {
    return this.#embed(texts)
  }

  backlog(): EmbeddingBacklog {
    return this.#loaded?.queue.backlog() ?? { queued: 0, oldestWaitMs: 0, expectedWaitMs: 0 }
  }

  health(): Promise<BackendHealth> {
    return probeHealth(BACKEND, async () => {
      // A probe during the load would wait for it; readiness should say at once that the model is not there yet.
      if (this.#loading !== undefined && this.#loaded === undefined) throw new BackendUnavailableError(BACKEND, 'the model is still loading')
      await this.#embed(['健康检查'])
      return this.#weightsUnshared === undefined ? `local ${this.model}` : `local ${this.model}, a copy of the weights per session: ${this.#weightsUnshared}`
    })
  }

  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    const loading = this.#loading
    this.#loading = undefined
    if (loading !== undefined) {
      const loaded = await loading.catch(() => undefined)
      if (loaded !== undefined) {
        await loaded.queue.drained()
        await Promise.all([...loaded.sessions, ...(loaded.own ? [loaded.own] : [])].map((s) => s.dispose()))
      }
    }
  }

  async #embed(texts: readonly string[], signal?: AbortSignal, queries = false): Promise<Float32Array[]> {
    if (texts.length === 0) return []
    const { queue } = await this.#load()
    // A run whose caller gave up while it queued is dropped at its turn: the model's time goes to live requests.
    const check = (): void => {
      if (signal?.aborted) throw abortError(signal, BACKEND)
      if (this.#closed) throw new BackendUnavailableError(BACKEND, 'local embedder is closed')
    }
    const batches: string[][] = []
    for (let start = 0; start < texts.length; start += this.#batchSize) batches.push(texts.slice(start, start + this.#batchSize))
    // One call keeps at most one run per session in the queue, so the runs of other callers (a query during an
    // ingestion) wait behind a few of its runs, never behind all of them.
    const out = new Array<Float32Array[]>(batches.length)
    let next = 0
    const lane = async (): Promise<void> => {
      while (next < batches.length) {
        const index = next++
        try {
          const batch = batches[index]!
          const inline = queries && batch.reduce((chars, text) => chars + text.length, 0) <= INLINE_QUERY_CHARS
          out[index] = await queue.submit(batch, check, inline)
        } catch (error) {
          next = batches.length
          throw this.#providerError(error)
        }
      }
    }
    await Promise.all(Array.from({ length: Math.min(queue.sessions, batches.length) }, lane))
    return out.flat()
  }

  #providerError(error: unknown): unknown {
    if (!(error instanceof OnnxSessionError)) return error
    if (error.kind === 'run') return new UnexpectedResponseError(BACKEND, error.message, { cause: error })
    return this.#loadError(error)
  }

  #loadError(error: OnnxSessionError): BackendUnavailableError {
    if (error.kind === 'missing') {
      return new BackendUnavailableError(
        BACKEND,
        `model ${this.model} not found: ${error.message} is missing; run \`make model\` (npm run model) with MODEL_DIR set to the model folder's parent`
      )
    }
    return new BackendUnavailableError(BACKEND, `cannot load model from ${this.#folder}: ${error.message}`, { cause: error })
  }

  #load(): Promise<Loaded> {
    if (this.#closed) return Promise.reject(new BackendUnavailableError(BACKEND, 'local embedder is closed'))
    if (this.#loading === undefined) {
      const loading = this.#open()
      this.#loading = loading
      loading.then((loaded) => { this.#loaded = loaded }, () => undefined)
      // A failed load is retried on the next call (the model may have been fetched in the meantime).
      loading.catch(() => {
        if (this.#loading === loading) this.#loading = undefined
      })
    }
    return this.#loading
  }

  /** What each session loads: the shared copy of the weights when there will be two sessions or more and a folder for it. */
  async #sessionOptions(): Promise<OnnxSessionOptions> {
    const loaded = this.#sessions === 0 ? 1 : this.#pool === 'processes' ? this.#sessions + 1 : this.#sessions + (this.#queriesHere && this.#sessions > 1 ? 1 : 0)
    if (this.#weightsDir === undefined || loaded < 2) return this.#session
    try {
      return { ...this.#session, modelFile: await sharedWeightsModel(this.#session, this.#weightsDir) }
    } catch (error) {
      // A missing model is reported by the load below; anything else (a read-only folder, a full disk) costs memory only.
      this.#weightsUnshared = error instanceof Error ? error.message : String(error)
      return this.#session
    }
  }

  async #open(): Promise<Loaded> {
    try {
      const session = await this.#sessionOptions()
      try {
        return await this.#start(session)
      } catch (error) {
        if (session.modelFile === undefined || !(error instanceof OnnxSessionError && error.kind === 'load')) throw error
        // A shared copy that does not load (damaged on disk) must not take the embedder down: the source model still does.
        this.#weightsUnshared = `the shared copy ${session.modelFile} did not load: ${error.message}`
        return await this.#start(this.#session)
      }
    } catch (error) {
      if (error instanceof OnnxSessionError) throw this.#loadError(error)
      throw new BackendUnavailableError(BACKEND, `cannot load model from ${this.#folder}: ${String(error)}`, { cause: error })
    }
  }

  /** Loads the sessions from `session`'s model file, into the pool this embedder is set to. */
  async #start(session: OnnxSessionOptions): Promise<Loaded> {
    if (this.#sessions === 0) {
      const sessions = [await loadOnnxSession(session)]
      return { queue: new RunQueue(sessions), sessions }
    }
    if (this.#pool === 'threads') {
      const threads = Array.from({ length: this.#sessions }, () => new SessionThread(session))
      const inThread = this.#queriesHere && this.#sessions > 1 ? [loadOnnxSession(session)] : []
      const started = await Promise.allSettled([...inThread, ...threads.map((t) => t.start())])
      const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected')
      const overflow = inThread.length > 0 && started[0]!.status === 'fulfilled' ? (started[0] as PromiseFulfilledResult<OnnxSession>).value : undefined
      if (failed !== undefined) {
        await Promise.all([...threads.map((t) => t.dispose()), ...(overflow ? [overflow.dispose()] : [])])
        throw failed.reason
      }
      return {
        queue: new RunQueue(threads, undefined, { pipeline: true, ...(overflow ? { overflow } : {}) }),
        sessions: threads,
        ...(overflow ? { own: overflow } : {})
      }
    }
    const processes = Array.from({ length: this.#sessions }, () => new SessionProcess(session))
    const [alone, ...started] = await Promise.allSettled([loadOnnxSession(session), ...processes.map((p) => p.start())])
    const failed = [alone, ...started].find((s): s is PromiseRejectedResult => s.status === 'rejected')
    if (failed !== undefined) {
      await Promise.all([...processes.map((p) => p.dispose()), ...(alone.status === 'fulfilled' ? [alone.value.dispose()] : [])])
      throw failed.reason
    }
    const inProcess = (alone as PromiseFulfilledResult<OnnxSession>).value
    return { queue: new RunQueue(processes, inProcess, { pipeline: true }), sessions: processes, own: inProcess }
  }
}

import { access, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { normalizeL2 } from './vectors.js'

/** Files `npm run model` (`make model`) writes into `<modelDir>/<modelName>/`. */
const MODEL_FILES = ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'onnx/model_quantized.onnx'] as const

/** What one ONNX session needs: plain data, so that a session process can be handed it over IPC. */
export interface OnnxSessionOptions {
  /** The model's folder (`<modelDir>/<modelName>`), absolute. */
  folder: string
  /**
   * The ONNX file to run, absolute. Default the folder's `onnx/model_quantized.onnx`; the pool passes the copy whose
   * packed weights every session maps from one file (./shared-weights.ts).
   */
  modelFile?: string
  /** Tokens per text including `[CLS]` and `[SEP]`; longer texts are cut. */
  maxLength: number
  /** Width the model's output must have (checked against config.json on load). */
  dimensions: number
  /** ONNX Runtime intra-op threads; unset: ONNX Runtime's choice (one per core). */
  threads?: number
  /** With 2 intra-op threads or more: `false` puts a waiting pool thread to sleep at once instead of spinning. Default true (ONNX Runtime's). */
  spinning?: boolean
}

/** One loaded tokenizer and ONNX session; `run` embeds the texts it is given in one ONNX run. */
export interface OnnxSession {
  run(texts: readonly string[]): Promise<Float32Array[]>
  dispose(): Promise<void>
}

/** Why a session could not load (`missing`: a model file is absent) or run; the embedder maps it onto provider errors. */
export class OnnxSessionError extends Error {
  constructor(readonly kind: 'missing' | 'load' | 'run', message: string, options?: ErrorOptions) {
    super(message, options)
  }
}

type Tokenizer = Awaited<ReturnType<typeof import('@huggingface/transformers')['AutoTokenizer']['from_pretrained']>>
type Ort = typeof import('onnxruntime-node')
type Session = Awaited<ReturnType<Ort['InferenceSession']['create']>>
/** A tokenizer output's tensor: transformers.js wraps ONNX Runtime's, and hands that one to the session as it is. */
interface Encoded { ort_tensor: InstanceType<Ort['Tensor']>; dims: number[] }

const message = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/** The file the folder's model loads from unless `modelFile` says otherwise. */
export const modelFileOf = (folder: string): string => join(folder, 'onnx', 'model_quantized.onnx')

/** ONNX Runtime's options for one session of `options`, also used to write the shared-weights copy. */
export function sessionOptionsOf(options: Pick<OnnxSessionOptions, 'threads' | 'spinning'>): import('onnxruntime-node').InferenceSession.SessionOptions {
  return {
    executionProviders: ['cpu'],
    ...(options.threads === undefined ? {} : { intraOpNumThreads: options.threads }),
    // onnxruntime-node hands `extra`'s dotted keys to SessionOptions::AddConfigEntry, values as strings.
    ...(options.spinning === false ? { extra: { session: { intra_op: { allow_spinning: '0' } } } } : {})
  }
}

/**
 * Loads bge-small-zh-v1.5 (int8 ONNX) on onnxruntime-node, CPU only, with transformers.js's tokenizer. A run gives the
 * `[CLS]` vector of the last hidden state of each text, L2-normalised. The session takes the tokenizer's tensors as
 * transformers.js's own model call does (`token_type_ids` zeros when the tokenizer makes none), so the bytes are those
 * of `AutoModel` (bench/results/concurrency.log.md, "One copy of the weights").
 */
export async function loadOnnxSession(options: OnnxSessionOptions): Promise<OnnxSession> {
  for (const file of MODEL_FILES) {
    try {
      await access(join(options.folder, file))
    } catch {
      throw new OnnxSessionError('missing', join(options.folder, file))
    }
  }
  let tokenizer: Tokenizer
  let ort: Ort
  let session: Session
  let width: unknown
  try {
    // Imported here, not at the top: loading onnxruntime costs time and memory the openai backend never needs.
    const { AutoTokenizer } = await import('@huggingface/transformers')
    ort = await import('onnxruntime-node')
    // An absolute path is not a hub id, so transformers.js reads the folder as is and never goes online.
    tokenizer = await AutoTokenizer.from_pretrained(options.folder, { local_files_only: true })
    width = (JSON.parse(await readFile(join(options.folder, 'config.json'), 'utf8')) as { hidden_size?: unknown }).hidden_size
    if (width !== options.dimensions) {
      throw new OnnxSessionError('load', `config.json says hidden_size ${String(width)}, this embedder is set to ${options.dimensions} dimensions`)
    }
    session = await ort.InferenceSession.create(options.modelFile ?? modelFileOf(options.folder), sessionOptionsOf(options))
  } catch (error) {
    if (error instanceof OnnxSessionError) throw error
    throw new OnnxSessionError('load', message(error), { cause: error })
  }
  const output = session.outputNames[0]!

  return {
    async run(texts) {
      let hidden: { dims: number[]; data: Float32Array }
      try {
        const inputs = tokenizer([...texts], { padding: true, truncation: true, max_length: options.maxLength }) as Record<string, Encoded | undefined>
        const ids = inputs.input_ids
        if (ids === undefined) throw new Error('the tokenizer made no input_ids')
        const feeds: Record<string, InstanceType<Ort['Tensor']>> = {}
        for (const name of session.inputNames) {
          const given = inputs[name]
          if (given !== undefined) feeds[name] = given.ort_tensor
          else if (name === 'token_type_ids') feeds[name] = new ort.Tensor('int64', new BigInt64Array(ids.ort_tensor.size), ids.dims)
          else throw new Error(`the model wants an input the tokenizer does not make: ${name}`)
        }
        const outputs = await session.run(feeds)
        const state = outputs[output]
        if (state === undefined) throw new Error(`the model returned no ${output}`)
        hidden = { dims: [...state.dims], data: state.data as Float32Array }
      } catch (error) {
        throw new OnnxSessionError('run', `local model run failed: ${message(error)}`, { cause: error })
      }
      const [batch, tokens, width] = hidden.dims
      if (batch !== texts.length || tokens === undefined || width !== options.dimensions) {
        throw new OnnxSessionError('run', `model output has shape [${hidden.dims.join(', ')}], expected [${texts.length}, n, ${options.dimensions}]`)
      }
      const vectors: Float32Array[] = []
      for (let i = 0; i < batch; i++) {
        // CLS pooling: the first token's hidden state of each sequence.
        const offset = i * tokens * width
        vectors.push(normalizeL2(hidden.data.subarray(offset, offset + width)))
      }
      return vectors
    },
    async dispose() {
      await session.release()
    }
  }
}

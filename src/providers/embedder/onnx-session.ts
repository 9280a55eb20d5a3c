import { access } from 'node:fs/promises'
import { join } from 'node:path'
import { normalizeL2 } from './vectors.js'

/** Files `npm run model` (`make model`) writes into `<modelDir>/<modelName>/`. */
const MODEL_FILES = ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'onnx/model_quantized.onnx'] as const

/** What one ONNX session needs: plain data, so that a session process can be handed it over IPC. */
export interface OnnxSessionOptions {
  /** The model's folder (`<modelDir>/<modelName>`), absolute. */
  folder: string
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

type Transformers = typeof import('@huggingface/transformers')
type Tokenizer = Awaited<ReturnType<Transformers['AutoTokenizer']['from_pretrained']>>
type Model = Awaited<ReturnType<Transformers['AutoModel']['from_pretrained']>>

const message = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/**
 * Loads bge-small-zh-v1.5 (int8 ONNX) through @huggingface/transformers on onnxruntime-node, CPU only. A run gives
 * the `[CLS]` vector of the last hidden state of each text, L2-normalised.
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
  let model: Model
  try {
    // Imported here, not at the top: loading onnxruntime costs time and memory the openai backend never needs.
    const { AutoModel, AutoTokenizer } = await import('@huggingface/transformers')
    // An absolute path is not a hub id, so transformers.js reads the folder as is and never goes online.
    tokenizer = await AutoTokenizer.from_pretrained(options.folder, { local_files_only: true })
    model = await AutoModel.from_pretrained(options.folder, {
      local_files_only: true,
      dtype: 'q8',
      device: 'cpu',
      session_options: {
        ...(options.threads === undefined ? {} : { intraOpNumThreads: options.threads }),
        // onnxruntime-node hands `extra`'s dotted keys to SessionOptions::AddConfigEntry, values as strings.
        ...(options.spinning === false ? { extra: { session: { intra_op: { allow_spinning: '0' } } } } : {})
      }
    })
  } catch (error) {
    throw new OnnxSessionError('load', message(error), { cause: error })
  }
  const width = (model.config as { hidden_size?: unknown }).hidden_size
  if (width !== options.dimensions) {
    await model.dispose()
    throw new OnnxSessionError('load', `config.json says hidden_size ${String(width)}, this embedder is set to ${options.dimensions} dimensions`)
  }

  return {
    async run(texts) {
      let hidden: { dims: number[]; data: Float32Array }
      try {
        const inputs = tokenizer([...texts], { padding: true, truncation: true, max_length: options.maxLength })
        const outputs = (await model(inputs)) as { last_hidden_state?: { dims: number[]; data: Float32Array } }
        if (outputs.last_hidden_state === undefined) throw new Error('the model returned no last_hidden_state')
        hidden = outputs.last_hidden_state
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
      await model.dispose()
    }
  }
}

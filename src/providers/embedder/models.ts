/**
 * The models the local embedder runs, by the name `EMBEDDING_MODEL` gives (also their folder under `MODEL_DIR`).
 * Query instructions are the ones each model card prescribes for retrieval queries; passages get none.
 */
export interface LocalModel {
  /** Width of the `[CLS]` vector. */
  dimensions: number
  /** Put before every query, never before a passage. */
  queryInstruction: string
}

export const LOCAL_MODELS = {
  'bge-small-zh-v1.5': { dimensions: 512, queryInstruction: '为这个句子生成表示以用于检索相关文章：' },
  'bge-small-en-v1.5': { dimensions: 384, queryInstruction: 'Represent this sentence for searching relevant passages: ' }
} as const satisfies Record<string, LocalModel>

export type LocalModelName = keyof typeof LOCAL_MODELS

/** The service's model unless `EMBEDDING_MODEL` names another. */
export const DEFAULT_MODEL: LocalModelName = 'bge-small-zh-v1.5'

export function isLocalModel(name: string): name is LocalModelName {
  return Object.hasOwn(LOCAL_MODELS, name)
}

/**
 * What the names of a model's vector collections add to `COLLECTION_PREFIX`: nothing for the default model (the
 * collections every earlier deployment holds), the model's name otherwise, since a collection has one width and one
 * model's vectors are meaningless beside another's.
 */
export function collectionPart(model: string): string {
  return model === DEFAULT_MODEL ? '' : `${model.replace(/[^A-Za-z0-9]+/g, '_')}_`
}

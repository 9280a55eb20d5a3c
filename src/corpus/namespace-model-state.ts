/**
 * What this service knows of its namespaces' model records (src/corpus/namespace-models.ts): the store and where the
 * records are, and what it learnt of each namespace. `NamespaceModels` holds it under `MODEL_STATE` and reads it; only
 * the writers of the records (src/corpus/appliers/writers/namespace-models.ts) change it otherwise, and the import rule
 * `reader-state-for-the-reader-and-its-writers` (.dependency-cruiser.cjs) lets no other module import this one.
 */
import type { VectorStore } from '../providers/vector-store/port.js'

export const MODEL_STATE: unique symbol = Symbol('namespace models state')

/** The id of a namespace's record in the records collection. */
export const RECORD_ID = 'embedding-model'

export interface NamespaceModelsOptions {
  /** The collection of records (`config.namespaceModels.records`). */
  records: string
  /** The model this service embeds with. */
  model: string
  /** Where a namespace written before records were kept holds the vectors of `model` (config.namespaceModels.legacy). */
  legacy?: { model: string; collections: readonly string[] }
}

export class NamespaceModelState {
  /** Namespaces known to hold this service's model: their reads and writes need no look-up. */
  readonly matching = new Set<string>()
  /** Namespaces whose record this process wrote (a legacy namespace it only read still gets its record on a write). */
  readonly written = new Set<string>()
  /** Namespaces found without a record, until when that answer stands. */
  readonly unrecorded = new Map<string, number>()

  constructor(readonly vectors: VectorStore, readonly options: NamespaceModelsOptions) {}
}

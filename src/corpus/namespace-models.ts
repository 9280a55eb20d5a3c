/**
 * Which embedding model each namespace's vectors were made with, so that a service running another model never
 * mixes its vectors with them (docs/namespaces.md, "The embedding model of a namespace"). One record per namespace in
 * a collection every model shares (a one-dimensional vector beside the payload: the vector store is the one store
 * both back-end families have), written by the first write that embeds, removed with the namespace: by the write path
 * (src/corpus/appliers/writers/namespace-models.ts); this module reads them.
 */
import { Errors } from '../errors.js'
import type { VectorStore } from '../providers/vector-store/port.js'
import { MODEL_STATE, NamespaceModelState, RECORD_ID, type NamespaceModelsOptions } from './namespace-model-state.js'

/** How long a namespace found without a record is taken to have none. */
const UNRECORDED_MS = 5000

/** A read or write of a namespace whose vectors another model made. */
export class ModelMismatchError extends Errors.modelMismatch {
  constructor(readonly namespace: string, readonly recorded: string, readonly running: string) {
    super(`namespace "${namespace}" holds vectors made with ${recorded}, and this service embeds with ${running}; ` +
      `the two are not comparable. Serve it with EMBEDDING_MODEL=${recorded}, or move it to ${running}: re-embed it in place ` +
      `(EMBEDDING_MODEL=${running} npm run reembed -- --namespace ${namespace}), or drop it (DELETE /namespaces/${namespace}, on a service of ` +
      `either model) and ingest its sources again here (docs/namespaces.md, "The embedding model of a namespace")`)
  }
}

export class NamespaceModels {
  readonly #state: NamespaceModelState

  constructor(vectors: VectorStore, options: NamespaceModelsOptions) {
    this.#state = new NamespaceModelState(vectors, options)
  }

  /** What the writers of the records change; reachable only from the modules that may import namespace-model-state.ts. */
  get [MODEL_STATE](): NamespaceModelState { return this.#state }

  get model(): string { return this.#state.options.model }

  /** The model the namespace's vectors were made with; undefined when it holds none (or none recorded by a known model). */
  async recorded(namespace: string): Promise<string | undefined> {
    const { vectors, options } = this.#state
    for await (const { id, payload } of vectors.scroll(options.records, namespace, [RECORD_ID])) {
      if (id === RECORD_ID && typeof payload['model'] === 'string') return payload['model']
    }
    const legacy = options.legacy
    if (legacy) {
      for (const collection of legacy.collections) if (await vectors.count(collection, namespace) > 0) return legacy.model
    }
    return undefined
  }

  /** Throws {@link ModelMismatchError} when the namespace's vectors were made with another model than this service's. */
  async check(namespace: string): Promise<void> {
    const { matching, unrecorded, options } = this.#state
    if (matching.has(namespace)) return
    const unrecordedUntil = unrecorded.get(namespace)
    if (unrecordedUntil !== undefined && unrecordedUntil > Date.now()) return
    const recorded = await this.recorded(namespace)
    if (recorded === undefined) {
      // a namespace that holds nothing (or a default-model namespace written before records) is looked up again only
      // after a while: a query on it then costs no store call, and another process's first write is seen within UNRECORDED_MS
      unrecorded.set(namespace, Date.now() + UNRECORDED_MS)
      return
    }
    if (recorded !== options.model) throw new ModelMismatchError(namespace, recorded, options.model)
    matching.add(namespace)
  }
}

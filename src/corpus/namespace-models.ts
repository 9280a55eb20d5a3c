/**
 * Which embedding model each namespace's vectors were made with, so that a service running another model never
 * mixes its vectors with them (docs/namespaces.md, "The embedding model of a namespace"). One record per namespace in
 * a collection every model shares (a one-dimensional vector beside the payload: the vector store is the one store
 * both back-end families have), written by the first write that embeds, removed with the namespace.
 */
import { Errors } from '../errors.js'
import type { VectorStore } from '../providers/vector-store/port.js'

const RECORD_ID = 'embedding-model'
const UNIT = new Float32Array([1])
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

export interface NamespaceModelsOptions {
  /** The collection of records (`config.namespaceModels.records`). */
  records: string
  /** The model this service embeds with. */
  model: string
  /** Where a namespace written before records were kept holds the vectors of `model` (config.namespaceModels.legacy). */
  legacy?: { model: string; collections: readonly string[] }
}

export class NamespaceModels {
  /** Namespaces known to hold this service's model: their reads and writes need no look-up. */
  readonly #matching = new Set<string>()
  /** Namespaces whose record this process wrote (a legacy namespace it only read still gets its record on a write). */
  readonly #written = new Set<string>()
  /** Namespaces found without a record, until when that answer stands. */
  readonly #unrecorded = new Map<string, number>()

  constructor(private readonly vectors: VectorStore, private readonly options: NamespaceModelsOptions) {}

  get model(): string { return this.options.model }

  /** The model the namespace's vectors were made with; undefined when it holds none (or none recorded by a known model). */
  async recorded(namespace: string): Promise<string | undefined> {
    for await (const { id, payload } of this.vectors.scroll(this.options.records, namespace, [RECORD_ID])) {
      if (id === RECORD_ID && typeof payload['model'] === 'string') return payload['model']
    }
    const legacy = this.options.legacy
    if (legacy) {
      for (const collection of legacy.collections) if (await this.vectors.count(collection, namespace) > 0) return legacy.model
    }
    return undefined
  }

  /** Throws {@link ModelMismatchError} when the namespace's vectors were made with another model than this service's. */
  async check(namespace: string): Promise<void> {
    if (this.#matching.has(namespace)) return
    const unrecordedUntil = this.#unrecorded.get(namespace)
    if (unrecordedUntil !== undefined && unrecordedUntil > Date.now()) return
    const recorded = await this.recorded(namespace)
    if (recorded === undefined) {
      // a namespace that holds nothing (or a default-model namespace written before records) is looked up again only
      // after a while: a query on it then costs no store call, and another process's first write is seen within UNRECORDED_MS
      this.#unrecorded.set(namespace, Date.now() + UNRECORDED_MS)
      return
    }
    if (recorded !== this.options.model) throw new ModelMismatchError(namespace, recorded, this.options.model)
    this.#matching.add(namespace)
  }

  /** Records this service's model as the namespace's (after a write that embedded); idempotent. */
  async record(namespace: string): Promise<void> {
    if (this.#matching.has(namespace) && this.#written.has(namespace)) return
    await this.vectors.ensureCollection(this.options.records, 1)
    await this.vectors.write(this.options.records, namespace, {
      upsert: [{ id: RECORD_ID, vector: UNIT, payload: { doc_id: RECORD_ID, text: this.options.model, model: this.options.model } }]
    })
    this.#matching.add(namespace)
    this.#written.add(namespace)
    this.#unrecorded.delete(namespace)
  }

  /** Forgets the namespace's model (it was dropped). */
  async forget(namespace: string): Promise<void> {
    this.#matching.delete(namespace)
    this.#written.delete(namespace)
    this.#unrecorded.delete(namespace)
    await this.vectors.dropNamespace(this.options.records, namespace)
  }
}

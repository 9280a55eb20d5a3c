/**
 * What a read sees: the generation and index version a read of a mode in a namespace takes (its response cache key,
 * so a write through any replica ends the cached answers of that namespace and of no other), with this replica's
 * document catalog brought up to the shared stores first when other replicas write (docs/scale-out-state.md).
 */
import { StaleReplicaError, type Generations, type ReadState } from '../generations.js'
import { indexKindOf } from '../modes.js'
import type { KnowledgeGraphStore } from '../providers/knowledge-graph/index.js'
import type { Mode } from '../schemas/recall-bundle.js'
import type { DocumentLibraries } from './libraries.js'
import type { NamespaceModels } from './namespace-models.js'
import type { SharedCatalog } from './shared-catalog.js'
import type { StoreViews } from './store-corpus.js'

export interface ReadStatesOptions {
  generations: Generations
  namespaceModels: Pick<NamespaceModels, 'check'>
  documents: DocumentLibraries
  graph: Pick<KnowledgeGraphStore, 'version'>
  /** `REPLICAS`: with more than one, a `minGeneration` needs generations every replica shares. */
  replicas: number
  /** Whether the generations are shared by the replicas (kept in Redis). */
  sharedGenerations: boolean
  /** The catalog kept up to the shared stores (several replicas over Qdrant); none: this process is the only writer. */
  catalog?: SharedCatalog
  /** Where an unfiltered hybrid retrieve reads while a namespace's catalog is first read (the lexical leg on Qdrant). */
  storeViews?: StoreViews
  /** Told of each retrieve answered from the stores meanwhile (metrics). */
  onStoreViewRead?: () => void
}

export class ReadStates {
  readonly #o: ReadStatesOptions

  constructor(options: ReadStatesOptions) {
    this.#o = options
  }

  /**
   * The generation a read of a mode in a namespace sees and the version of the indexes it reads; no version when it
   * cannot be known for sure (the answer is then not cached). With `minGeneration`, waits for it (see
   * `Generations.readState`). graphrag's version also carries its store's. With `read.withoutCatalog` (an unfiltered
   * hybrid retrieve), a namespace this replica has yet to read is not waited for: its retrieves are answered from the
   * shared stores meanwhile (`storeViews`).
   */
  async readState(mode: Mode, namespace: string, minGeneration?: number, read: { withoutCatalog?: boolean } = {}): Promise<ReadState> {
    const { generations, namespaceModels, documents, graph, catalog, storeViews } = this.#o
    if (minGeneration !== undefined && this.#o.replicas > 1 && !this.#o.sharedGenerations) {
      // Each replica counts for itself here: its counter says nothing about another replica's writes.
      throw new StaleReplicaError(`stale_replica: min_generation needs generations shared by the replicas; REPLICAS=${this.#o.replicas} needs REDIS_URL`, 1)
    }
    const kind = indexKindOf(mode)
    // graphrag embeds nothing: it answers from the graph while the vector store is down, whatever model made the vectors
    if (kind !== 'graphrag') await namespaceModels.check(namespace)
    const state = await generations.readState(kind, namespace, minGeneration)
    if (kind === 'hybrid' && catalog) {
      if (read.withoutCatalog && storeViews && !documents.get(namespace) && catalog.neverRead(namespace)) {
        // the first read goes on in the background; the stores hold every write up to `state.version` already
        const firstRead = catalog.catchUp(namespace, state.version)
        firstRead.catch(() => {})
        await storeViews.open(namespace, firstRead)
        this.#o.onStoreViewRead?.()
      } else {
        await catalog.catchUp(namespace, state.version)
      }
    }
    if (kind !== 'graphrag' || state.version === undefined) return state
    const version = await graph.version(namespace).catch(() => undefined)
    return version === undefined ? { ...(state.generation !== undefined ? { generation: state.generation } : {}) } : { ...state, version: `${state.version}|graph:${version}` }
  }

  /**
   * With several replicas over Qdrant, brings this replica's document catalog of a namespace up to the shared stores
   * before it is read or written (`readState('hybrid')` does it too). Otherwise nothing: this process is the only
   * writer, its catalog is current by construction.
   */
  async catchUp(namespace: string): Promise<void> {
    if (this.#o.catalog) await this.readState('hybrid', namespace)
  }
}

/**
 * Where each local model keeps a namespace's vectors and embedded lexical index (docs/namespaces.md, "The embedding
 * model of a namespace"): a service opens only its own model's, so a drop or a re-embed reaches the others' through
 * these (and removes the namespace from them with src/corpus/appliers/writers/model-drops.ts).
 */
import { join } from 'node:path'
import { collectionPart, LOCAL_MODELS } from '../providers/embedder/models.js'
import type { VectorStore } from '../providers/vector-store/port.js'
import { DERIVED_COLLECTION_PREFIX, EPISODIC_COLLECTIONS } from '../providers/episodic-graph/collections.js'
import { entityCollectionOf } from './entity-vectors.js'

/** What of the configuration says where a model's stores are. */
export interface ModelStoresConfig {
  /** `COLLECTION_PREFIX` with this service's model part. */
  collectionPrefix: string
  dataDir: string
  embedder: { backend: 'local' | 'openai'; model: string }
}

export interface ModelStores {
  model: string
  /** The prefix of its collections (`COLLECTION_PREFIX` and its model part). */
  collectionPrefix: string
  /** Its embedded lexical folders: the index, and the lexical leg's local copy (`bm25…`, `bm25-copy…`). */
  lexicalDirs: string[]
}

/** What a re-embed did (appliers/reembed.ts): the models it moved the namespace from, and the records it embedded again. */
export interface Reembedded {
  from: string[]
  chunks: number
  /** Episodic (imported and derived) and entity-name records. */
  others: number
}

/** The chunk collection of a model's collections. */
const chunksOf = (stores: Pick<ModelStores, 'collectionPrefix'>): string => `${stores.collectionPrefix}chunks`

/** Every vector collection of one model that holds a namespace's records: chunks, episodic (imported and derived), entity names. */
export function collectionsOf(stores: Pick<ModelStores, 'collectionPrefix'>): string[] {
  const prefix = stores.collectionPrefix
  return [
    chunksOf(stores),
    ...['', DERIVED_COLLECTION_PREFIX].flatMap((part) => EPISODIC_COLLECTIONS.map((c) => `${prefix}${part}${c}`)),
    entityCollectionOf(prefix)
  ]
}

/**
 * The stores of every local model other than the one this service's collections belong to. With a remote embedder
 * (which keeps the default names) the default local model's collections are its own.
 */
export function otherModelStores(config: ModelStoresConfig): ModelStores[] {
  const own = config.embedder.backend === 'local' ? config.embedder.model : undefined
  const base = config.collectionPrefix.slice(0, config.collectionPrefix.length - (own ? collectionPart(own).length : 0))
  return Object.keys(LOCAL_MODELS)
    .filter((model) => (own !== undefined ? model !== own : collectionPart(model) !== ''))
    .map((model) => {
      // the folder names config.ts gives a model's lexical index (`bm25-bge_small_en_v1_5`; the default model's `bm25`)
      const suffix = collectionPart(model).replace(/_$/, '').replace(/^(.)/, '-$1')
      return {
        model, collectionPrefix: `${base}${collectionPart(model)}`,
        lexicalDirs: [join(config.dataDir, `bm25${suffix}`), join(config.dataDir, `bm25-copy${suffix}`)]
      }
    })
}

/** What a model's chunk collection holds of a namespace: its chunks and their documents. */
export async function heldChunks(vectors: VectorStore, stores: ModelStores, namespace: string): Promise<{ chunks: number; documents: Set<string> }> {
  const documents = new Set<string>()
  let chunks = 0
  for await (const { payload } of vectors.scroll(chunksOf(stores), namespace)) {
    chunks += 1
    documents.add(payload.doc_id)
  }
  return { chunks, documents }
}

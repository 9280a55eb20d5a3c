/**
 * Namespaces across every store: what each holds (`GET /namespaces`). Removing one wholly is a write: the namespace
 * applier (src/corpus/appliers/namespace.ts).
 */
import type { DocumentLibraries } from './libraries.js'
import type { EpisodicGraphStore } from '../providers/episodic-graph/port.js'
import type { KnowledgeGraphStore } from '../providers/knowledge-graph/port.js'
import type { VectorStore } from '../providers/vector-store/port.js'
import { IMAGES_COLLECTION } from './images/image-records.js'
import type { PictureLimits } from './images/pictures.js'
import type { ModelStoresConfig } from './model-stores.js'

/** The stores a namespace lives in (the runtime's services satisfy it). */
export interface NamespaceStores {
  documents: DocumentLibraries
  graph: KnowledgeGraphStore
  episodes: EpisodicGraphStore
  vectors: VectorStore
  config: ModelStoresConfig & { replicas: { count: number }; images?: PictureLimits }
  /** Brings this replica's catalog of a namespace up to the shared stores (nothing for a sole writer). */
  catchUpDocuments(namespace: string): Promise<void>
}

export interface NamespaceCounts {
  namespace: string
  documents: number
  chunks: number
  entities: number
  relations: number
  episodes: number
  /** Pictures of its documents (src/corpus/appliers/images.ts). */
  images: number
}

/** What a namespace holds in each store (all 0 for one that holds nothing). */
export async function countNamespace(services: NamespaceStores, namespace: string): Promise<NamespaceCounts> {
  const library = services.documents.get(namespace)
  const [graph, episodic, images] = await Promise.all([
    services.graph.count(namespace), services.episodes.countByType(namespace),
    services.vectors.count(`${services.config.collectionPrefix}${IMAGES_COLLECTION}`, namespace)
  ])
  return {
    namespace,
    documents: library?.documentCount ?? 0,
    chunks: library?.chunkCount ?? 0,
    entities: graph.entities,
    relations: graph.relations,
    episodes: episodic['Episode'] ?? 0,
    images
  }
}

/**
 * Every namespace that holds anything in any store, ascending, with its counts; `include` leaves others out unread.
 * With `page`, only the first `limit` after the name `after` are counted and answered.
 */
export async function listNamespaces(
  services: NamespaceStores, include: (namespace: string) => boolean = () => true, page?: { after: string | undefined; limit: number }
): Promise<NamespaceCounts[]> {
  const [graph, episodic] = await Promise.all([services.graph.namespaces(), services.episodes.namespaces()])
  // Namespaces another replica wrote documents into (a no-op where this process is the only writer).
  const held = services.vectors.backend === 'qdrant' && services.config.replicas.count > 1
    ? await services.vectors.namespaces(`${services.config.collectionPrefix}chunks`) : []
  for (const ns of [...new Set([...held, ...services.documents.namespaces()])].filter(include)) await services.catchUpDocuments(ns)
  const names = [...new Set([...services.documents.namespaces(), ...graph, ...episodic])].filter(include).sort()
  const listed = page ? names.filter((ns) => page.after === undefined || ns > page.after).slice(0, page.limit) : names
  return Promise.all(listed.map((ns) => countNamespace(services, ns)))
}

/**
 * `mode=graphrag`: a naive entity-neighbour lookup over the knowledge graph (docs/api.md, "Graphrag in detail").
 * The definition below is all the service knows of the mode; the adapter (`adapter.ts`) runs the steps:
 * match (`match.ts`), expand (`expand.ts`), keyword fallback (`keyword.ts`), the fallback over the chunks best matching
 * the question (`passages.ts`, through the namespace's lexical index), render (`render.ts`).
 */
import type { KnowledgeGraphStore } from '../../src/providers/knowledge-graph/port.js'
import type { LexicalIndex } from '../../src/providers/lexical-index/port.js'
import type { Embedder } from '../../src/providers/embedder/port.js'
import type { VectorStore } from '../../src/providers/vector-store/port.js'
import { ENTITY_NAME_COLLECTION } from '../../src/kernel/entity-names.js'
import type { NameSearch } from './meaning.js'
import { defineMode } from '../definition.js'
import { createGraphragAdapter, type GraphragAdapter, type GraphragRequest } from './adapter.js'
import type { PassageSearch } from './passages.js'
import { GRAPHRAG_LEGS, GRAPHRAG_STARTUP, graphragFilter, GraphragMetadataSchema, graphragOptions, type GraphragMetadata } from './spec.js'

export * from './adapter.js'
export * from './spec.js'

/** The service's ports graphrag reads: the graph, and each namespace's lexical index (hybrid's corpus) for its last fallback. */
export interface GraphragModePorts {
  graph: KnowledgeGraphStore
  /** The namespace's corpus; undefined when the namespace holds no documents. Absent: no passage fallback. */
  corpus?(namespace: string): { readonly lexical: Pick<LexicalIndex, 'search'> } | undefined
  /** The entity collections and the question's embedder, for entities found by meaning (with `graphragMeaningFloor`). */
  vectors?: Pick<VectorStore, 'search'>
  embedder?: Pick<Embedder, 'embedQueries'>
}

/** Names and aliases nearest a question read per request, before the floor. */
const MEANING_LIMIT = 5

export const graphragMode = defineMode<'graphrag', GraphragModePorts, GraphragRequest, GraphragMetadata, GraphragAdapter>({
  name: 'graphrag',
  options: graphragOptions,
  queryOptions: {},
  filter: graphragFilter,
  metadata: GraphragMetadataSchema,
  startup: GRAPHRAG_STARTUP,
  legs: GRAPHRAG_LEGS,
  index: 'knowledge-graph',
  fromQuery: () => ({}),
  embedsQuery: () => false,
  adapterRequest: (common, options, filter) => ({
    ...common,
    ...(options.max_relations !== undefined ? { max_relations: options.max_relations as number } : {}),
    ...(filter?.entity_types ? { entity_types: filter.entity_types as string[] } : {})
  }),
  // An entity cites the chunks it was drawn from.
  evidence: (item) => {
    const ids = item.metadata.source_chunk_ids
    return Array.isArray(ids) ? ids.filter((id): id is string => typeof id === 'string') : []
  },
  create: (ports, deployment) => createGraphragAdapter({
    graph: ports.graph,
    ...(ports.corpus ? { passages: passagesOf(ports.corpus.bind(ports)) } : {}),
    ...(ports.vectors && ports.embedder && deployment.graphragMeaningFloor !== undefined
      ? { names: nameSearchOf(ports.vectors, ports.embedder, `${deployment.collectionPrefix}${ENTITY_NAME_COLLECTION}`) } : {})
  }, {
    ...(deployment.graphragMeaningFloor !== undefined ? { meaning: { floor: deployment.graphragMeaningFloor, limit: MEANING_LIMIT } } : {}),
    timeoutMs: deployment.timeouts.graph, backend: deployment.backends.graph,
    ...(deployment.graphragPartialNames === false ? { fragments: false } : {}),
    ...(deployment.graphragEvidenceFallback === false ? { passages: false } : {})
  })
})

/** The names nearest a question in the namespace's entity collection: the question embedded as a query, the names as passages. */
export function nameSearchOf(vectors: Pick<VectorStore, 'search'>, embedder: Pick<Embedder, 'embedQueries'>, collection: string): NameSearch {
  return async (namespace, question, limit, signal) => {
    const [vector] = await embedder.embedQueries([question], signal)
    const hits = await vectors.search(collection, namespace, vector!, limit, undefined, signal)
    return hits.map((h) => ({ text: h.payload.text, similarity: h.score }))
  }
}

/** The passage search over each namespace's lexical index (BM25, the index hybrid's lexical leg reads). */
export function passagesOf(corpus: NonNullable<GraphragModePorts['corpus']>): PassageSearch {
  return async (namespace, query, limit, signal) => (await corpus(namespace)?.lexical.search(query, limit, { signal })) ?? []
}

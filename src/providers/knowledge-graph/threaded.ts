import { backendName } from '../errors.js'
import { foldEntry } from '../embedded/fold-client.js'
import { ThreadedStore } from '../embedded/threaded-store.js'
import type { EmbeddedKnowledgeGraphOptions } from './embedded.js'
import {
  UnknownEntitiesError,
  type KgContribution,
  type KgDerivedWriteResult,
  type KgEntity,
  type KgEntityNames,
  type KgKeywordHit,
  type KgKeywordOptions,
  type KgNeighbourhood,
  type KgNeighbourhoodOptions,
  type KgWrite,
  type KnowledgeGraphStore
} from './port.js'

/**
 * The embedded knowledge graph in a thread of its own (`store-thread.ts`): the same store, its load (at 1M chunks the
 * longest step of a start-up, issue 44) and its work on the second core instead of the event loop's. What it answers
 * is cloned across, never shared; an error crosses as its class (`port-thread.ts`).
 */
export class ThreadedKnowledgeGraphStore extends ThreadedStore implements KnowledgeGraphStore {
  constructor(options: EmbeddedKnowledgeGraphOptions = {}) {
    super(foldEntry('store-thread', import.meta.url), options, backendName('knowledge-graph', 'memory'), 'the knowledge graph', {
      UnknownEntitiesError: ({ fields }) => new UnknownEntitiesError(
        fields?.['missing'] as UnknownEntitiesError['missing'],
        fields?.['references'] as UnknownEntitiesError['references']
      )
    })
  }

  init(): Promise<void> {
    return this.call('init')
  }

  upsert(namespace: string, write: KgWrite): Promise<void> {
    return this.call('upsert', namespace, write)
  }

  deleteEntity(namespace: string, id: string): Promise<boolean> {
    return this.call('deleteEntity', namespace, id)
  }

  getEntities(namespace: string, ids: readonly string[]): Promise<KgEntity[]> {
    return this.call('getEntities', namespace, ids)
  }

  count(namespace: string): Promise<{ entities: number; relations: number }> {
    return this.call('count', namespace)
  }

  version(namespace: string, signal?: AbortSignal): Promise<string> {
    return this.call('version', namespace, signal)
  }

  names(namespace: string, signal?: AbortSignal): Promise<KgEntityNames[]> {
    return this.call('names', namespace, signal)
  }

  namesOf(namespace: string, ids: readonly string[]): Promise<KgEntityNames[]> {
    return this.call('namesOf', namespace, ids)
  }

  neighbourhood(namespace: string, ids: readonly string[], signal?: AbortSignal, options?: KgNeighbourhoodOptions): Promise<KgNeighbourhood> {
    return this.call('neighbourhood', namespace, ids, signal, options)
  }

  searchKeywords(namespace: string, tokens: readonly string[], limit: number, options?: KgKeywordOptions, signal?: AbortSignal): Promise<KgKeywordHit[]> {
    return this.call('searchKeywords', namespace, tokens, limit, options, signal)
  }

  replaceDerived(namespace: string, contributions: ReadonlyMap<string, KgContribution>): Promise<KgDerivedWriteResult> {
    return this.call('replaceDerived', namespace, contributions)
  }

  derivedOf(namespace: string, docIds: readonly string[]): Promise<KgNeighbourhood> {
    return this.call('derivedOf', namespace, docIds)
  }

  derivedPartCounts(namespace: string, docIds: readonly string[]): Promise<Map<string, number>> {
    return this.call('derivedPartCounts', namespace, docIds)
  }

  namespaces(): Promise<string[]> {
    return this.call('namespaces')
  }

  dropNamespace(namespace: string): Promise<void> {
    return this.call('dropNamespace', namespace)
  }
}

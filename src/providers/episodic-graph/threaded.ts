import { backendName } from '../errors.js'
import { foldEntry } from '../embedded/fold-client.js'
import { ThreadedStore } from '../embedded/threaded-store.js'
import type { EmbeddedEpisodicGraphStoreOptions } from './embedded.js'
import type {
  EpisodicGraphChange, EpisodicGraphChangeResult, EpisodicGraphStore, GraphFragment, ProjectionRequest, TimeRangeMs
} from './port.js'

/**
 * The embedded episodic graph in a thread of its own (`store-thread.ts`, `EPISODIC_THREAD`): the same store, its load
 * and its work on another core than the event loop's. Its reads are a few round trips an episodic question (`project`,
 * `describe`, ...), each answer cloned across; an error crosses as its class. Off by default: at 1M chunks it took a
 * start-up to 0.94x for 0.7-0.8 GiB more at the peak, and each question 3-6 ms more (bench/results/memory.log.md).
 */
export class ThreadedEpisodicGraphStore extends ThreadedStore implements EpisodicGraphStore {
  constructor(options: EmbeddedEpisodicGraphStoreOptions = {}) {
    super(foldEntry('store-thread', import.meta.url), options, backendName('episodic-graph', 'memory'), 'the episodic graph')
  }

  apply(namespace: string, change: EpisodicGraphChange): Promise<EpisodicGraphChangeResult> {
    return this.call('apply', namespace, change)
  }

  project(namespace: string, request: ProjectionRequest, signal?: AbortSignal): Promise<GraphFragment> {
    return this.call('project', namespace, request, signal)
  }

  describe(namespace: string, ids: readonly string[], signal?: AbortSignal): Promise<GraphFragment> {
    return this.call('describe', namespace, ids, signal)
  }

  nodeTypes(namespace: string, ids: readonly string[]): Promise<Map<string, string>> {
    return this.call('nodeTypes', namespace, ids)
  }

  facetLabelEpisodes(namespace: string, labels: readonly string[]): Promise<Map<string, string[]>> {
    return this.call('facetLabelEpisodes', namespace, labels)
  }

  episodesInTimeRange(namespace: string, range: TimeRangeMs, signal?: AbortSignal): Promise<string[]> {
    return this.call('episodesInTimeRange', namespace, range, signal)
  }

  countByType(namespace: string): Promise<Record<string, number>> {
    return this.call('countByType', namespace)
  }

  namespaces(): Promise<string[]> {
    return this.call('namespaces')
  }

  dropNamespace(namespace: string): Promise<void> {
    return this.call('dropNamespace', namespace)
  }
}

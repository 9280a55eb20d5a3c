/**
 * What each index of a document holds (docs/api.md, "Index status"): one channel per index a document feeds, each
 * answered by one provider, so that a new index (entity vectors) is one more provider.
 */
import type { DocumentLibraryView } from '../document-views.js'

/**
 * The channels a status reports and a rebuild may name, in the order a status answers them. A rebuild of
 * `entity_vectors` runs the namespace's background entity-names applier and waits for it.
 */
export const CHANNELS = ['vectors', 'lexical', 'derived_graph', 'derived_episodes', 'entity_vectors'] as const

export type Channel = (typeof CHANNELS)[number]

/**
 * `done`: the index holds what the document's stored chunks give; `pending`: it does not yet (or no longer: a rebuild
 * restores it); `failed`: its last derivation failed (`reason` says why); `off`: this service does not build it.
 */
export type ChannelState = 'done' | 'pending' | 'failed' | 'off'

export interface ChannelStatus {
  state: ChannelState
  /** Why it is not `done`. */
  reason?: string
  /** Chunk indexes: the document's chunks the index holds, of those the catalog stores. */
  chunks?: { indexed: number; expected: number }
  /** Derived indexes: what the document contributes there now, and what its last derivation wrote. */
  items?: { derived: number; expected: number }
}

/** One channel's status of some documents of a namespace. */
export interface ChannelStatusProvider {
  readonly channel: string
  /** The status of each of `docIds` the library holds (the others are left out). */
  statusOf(namespace: string, library: DocumentLibraryView, docIds: readonly string[]): Promise<Map<string, ChannelStatus>>
}

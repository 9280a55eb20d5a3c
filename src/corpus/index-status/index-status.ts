/**
 * Each document's status in every channel, and a namespace's sums (docs/api.md, "Index status"): read from the shared
 * stores and the derivation records, after this replica caught up, so that every replica answers alike.
 */
import type { DocumentLibraryView } from '../document-views.js'
import type { ChannelState, ChannelStatus, ChannelStatusProvider } from './channels.js'

/** A document's status: channel -> its status, in the providers' order. */
export type DocumentIndexStatus = Record<string, ChannelStatus>

/** One channel over a namespace: its documents by state, and the sums of their counts. */
export interface ChannelSums {
  documents: Record<ChannelState, number>
  chunks?: { indexed: number; expected: number }
  items?: { derived: number; expected: number }
}

export interface IndexStatusCatalog {
  catchUp(namespace: string): Promise<void>
  get(namespace: string): DocumentLibraryView | undefined
}

/** Documents read per provider call when a namespace is summed. */
const SUM_PAGE = 500

export class IndexStatus {
  constructor(private readonly providers: readonly ChannelStatusProvider[], private readonly catalog: IndexStatusCatalog) {}

  /** This status with one more channel reported after the others. */
  with(provider: ChannelStatusProvider): IndexStatus {
    return new IndexStatus([...this.providers, provider], this.catalog)
  }

  /** The channels reported, in order. */
  get channels(): string[] {
    return this.providers.map((p) => p.channel)
  }

  /** The status of each of `docIds` the namespace holds (the others are left out). */
  async ofDocuments(namespace: string, docIds: readonly string[]): Promise<Map<string, DocumentIndexStatus>> {
    await this.catalog.catchUp(namespace)
    const library = this.catalog.get(namespace)
    return library ? this.#of(namespace, library, docIds) : new Map()
  }

  /** Every channel summed over the namespace's documents (none: every count 0). */
  async ofNamespace(namespace: string): Promise<Record<string, ChannelSums>> {
    await this.catalog.catchUp(namespace)
    const library = this.catalog.get(namespace)
    const sums: Record<string, ChannelSums> = Object.fromEntries(this.providers.map((p) => [p.channel, { documents: { done: 0, pending: 0, failed: 0, off: 0 } }]))
    if (!library) return sums
    for (let after: string | undefined, page = library.page(undefined, SUM_PAGE); page.length > 0; after = page.at(-1)!.id, page = library.page(after, SUM_PAGE)) {
      for (const status of (await this.#of(namespace, library, page.map((d) => d.id))).values()) {
        for (const [channel, s] of Object.entries(status)) add(sums[channel]!, s)
      }
    }
    return sums
  }

  async #of(namespace: string, library: DocumentLibraryView, docIds: readonly string[]): Promise<Map<string, DocumentIndexStatus>> {
    const held = docIds.filter((id) => library.has(id))
    const answers = await Promise.all(this.providers.map((p) => p.statusOf(namespace, library, held)))
    return new Map(held.map((docId) => [docId, Object.fromEntries(this.providers.map((p, i) => [p.channel, answers[i]!.get(docId)!]))]))
  }
}

function add(sums: ChannelSums, status: ChannelStatus): void {
  sums.documents[status.state] += 1
  if (status.chunks) {
    sums.chunks ??= { indexed: 0, expected: 0 }
    sums.chunks.indexed += status.chunks.indexed
    sums.chunks.expected += status.chunks.expected
  }
  if (status.items) {
    sums.items ??= { derived: 0, expected: 0 }
    sums.items.derived += status.items.derived
    sums.items.expected += status.items.expected
  }
}

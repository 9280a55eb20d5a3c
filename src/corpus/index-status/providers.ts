/** The providers of the four channels a document's chunks feed (channels.ts). */
import type { LexicalIndex } from '../../providers/lexical-index/port.js'
import type { VectorStore } from '../../providers/vector-store/port.js'
import type { DocumentLibraryView } from '../document-views.js'
import { fingerprintOf } from '../write-journal.js'
import type { ChannelStatus, ChannelStatusProvider } from './channels.js'
import { derivationInputOf, type DerivationRecords, type DerivedChannel } from './records.js'
import type { EntityVectorStatus } from '../entity-vectors.js'

/** A chunk index's status from how many of each document's chunks it holds. */
function chunkStatus(channel: string, indexed: number, expected: number): ChannelStatus {
  const chunks = { indexed, expected }
  if (indexed >= expected) return { state: 'done', chunks }
  return { state: 'pending', reason: `${expected - indexed} of ${expected} chunk(s) are not in the ${channel} index; rebuild "${channel}" restores them`, chunks }
}

/** Counts, per document of `docIds` the library holds, the chunks `held` (the ids an index holds) has. */
async function perDocument(
  channel: string, library: DocumentLibraryView, docIds: readonly string[], held: (chunkIds: string[]) => Promise<Set<string>>
): Promise<Map<string, ChannelStatus>> {
  const chunkIds = new Map(docIds.filter((id) => library.has(id)).map((id) => [id, [...library.storedChunks(id).keys()]]))
  const holding = await held([...chunkIds.values()].flat())
  return new Map([...chunkIds].map(([docId, ids]) => [docId, chunkStatus(channel, ids.filter((id) => holding.has(id)).length, ids.length)]))
}

/** The dense vectors of the document's chunks in the vector store. */
export function vectorsChannel(vectors: VectorStore): ChannelStatusProvider {
  return {
    channel: 'vectors',
    statusOf: (namespace, library, docIds) => perDocument('vectors', library, docIds, async (ids) => {
      const held = new Set<string>()
      // a page at a time: a vector is 2 KiB on the wire
      for (let i = 0; i < ids.length; i += 256) for (const id of (await vectors.vectorsOf(library.collection, namespace, ids.slice(i, i + 256))).keys()) held.add(id)
      return held
    })
  }
}

/** The document's chunks in the namespace's lexical index (this replica's, or Qdrant's points with `LEXICAL_BACKEND=qdrant`). */
export function lexicalChannel(lexicalOf: (namespace: string) => LexicalIndex): ChannelStatusProvider {
  return {
    channel: 'lexical',
    statusOf: (namespace, library, docIds) => perDocument('lexical', library, docIds, (ids) => lexicalOf(namespace).holding(ids))
  }
}

export interface DerivedChannelOptions {
  records: DerivationRecords
  /** What each document contributes to the channel's index now (derived-items.ts). */
  items: (namespace: string, docIds: readonly string[]) => Promise<Map<string, number>>
  /** Why this service does not derive the channel; undefined when it does. */
  off?: string
}

/**
 * A derived channel: the document's last derivation as recorded (done or failed, of which stored chunks), checked
 * against what the index holds of it now.
 */
export function derivedChannel(channel: DerivedChannel, options: DerivedChannelOptions): ChannelStatusProvider {
  return {
    channel,
    async statusOf(namespace, library, docIds) {
      const held = docIds.filter((id) => library.has(id))
      const { off } = options
      if (off !== undefined) return new Map(held.map((id) => [id, { state: 'off', reason: off }]))
      const [records, items] = await Promise.all([options.records.get(namespace, held), options.items(namespace, held)])
      return new Map(held.map((docId) => {
        const record = records.get(docId)?.[channel]
        const derived = items.get(docId) ?? 0
        if (!record) {
          return [docId, { state: 'pending', reason: 'no derivation is recorded for it: one is under way, or it was written before statuses were kept (rebuild it)', items: { derived, expected: derived } }]
        }
        const status: ChannelStatus = { state: record.state, items: { derived, expected: record.items }, ...(record.reason ? { reason: record.reason } : {}) }
        // a title or heading path rewritten alone leaves the chunk texts as they were: `input` sees it
        const written = record.input !== undefined ? record.input !== derivationInputOf(library, docId) : record.chunks !== fingerprintOf(library.storedChunks(docId))
        if (written) {
          return [docId, { ...status, state: 'pending', reason: 'the document was written again since its last derivation, which is under way or failed to run' }]
        }
        if (record.state === 'done' && derived < record.items) {
          return [docId, { ...status, state: 'pending', reason: `${record.items - derived} of the ${record.items} item(s) its last derivation wrote are missing; rebuild "${channel}" restores them` }]
        }
        return [docId, status]
      }))
    }
  }
}

/**
 * The vectors of the names and aliases of the entities derived from the document (`ENTITY_VECTORS`), embedded by the
 * background applier after each graph write: `pending` while some wait, `failed` when its last attempt failed.
 */
export function entityVectorsChannel(status: EntityVectorStatus | undefined): ChannelStatusProvider {
  return {
    channel: 'entity_vectors',
    async statusOf(namespace, library, docIds) {
      const held = docIds.filter((id) => library.has(id))
      if (!status) return new Map(held.map((id) => [id, { state: 'off', reason: 'this service embeds no entity names: ENTITY_VECTORS=false (docs/derivation.md)' }]))
      const counts = await status.documents(namespace, held)
      return new Map(held.map((docId): [string, ChannelStatus] => {
        const c = counts.get(docId) ?? { pending: 0, done: 0, failed: 0 }
        const items = { derived: c.done, expected: c.done + c.pending }
        if (c.failed > 0) return [docId, { state: 'failed', reason: `${c.failed} of ${items.expected} name(s) failed to embed at the last attempt: ${c.reason ?? 'no reason kept'}; the next graph write tries again, or rebuild "entity_vectors"`, items }]
        if (c.pending > 0) return [docId, { state: 'pending', reason: `${c.pending} of ${items.expected} name(s) wait for the background applier; rebuild "entity_vectors" runs it now`, items }]
        return [docId, { state: 'done', items }]
      }))
    }
  }
}

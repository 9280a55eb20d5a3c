/**
 * The writer of the derivation records (src/corpus/index-status/records.ts): the write path records each document's
 * derivation on a channel, and forgets the records of a document deleted or a namespace dropped.
 */
import type { VectorStore } from '../../../providers/vector-store/port.js'
import type { DerivationRecord, DerivedChannel } from '../../index-status/records.js'

const UNIT = new Float32Array([1])

export class DerivationRecordWriter {
  #ensured = false

  constructor(private readonly vectors: VectorStore, private readonly collection: string) {}

  /** Records each document's outcome on `channel`, replacing its last. */
  async put(namespace: string, channel: DerivedChannel, records: ReadonlyMap<string, DerivationRecord>): Promise<void> {
    if (records.size === 0) return
    if (!this.#ensured) {
      await this.vectors.ensureCollection(this.collection, 1)
      this.#ensured = true
    }
    await this.vectors.write(this.collection, namespace, {
      upsert: [...records].map(([docId, r]) => ({
        id: `${channel}:${docId}`, vector: UNIT,
        payload: { doc_id: docId, text: '', channel, chunks: r.chunks, state: r.state, items: r.items, ...(r.reason ? { reason: r.reason } : {}), ...(r.input ? { input: r.input } : {}) }
      }))
    })
  }

  /** Forgets these documents' records (they were deleted). */
  async forget(namespace: string, docIds: readonly string[]): Promise<void> {
    if (docIds.length === 0 || await this.vectors.count(this.collection, namespace) === 0) return
    await this.vectors.write(this.collection, namespace, { deleteDocIds: docIds })
  }

  async drop(namespace: string): Promise<void> {
    await this.vectors.dropNamespace(this.collection, namespace)
  }
}

/**
 * The outcome of each document's last derivation, per derived channel (docs/api.md, "Index status"), kept in the
 * vector store (the one store both back-end families have, shared by replicas, kept over a restart): one record per
 * document and channel, a one-dimensional vector beside the payload, removed with the document or the namespace.
 */
import { createHash } from 'node:crypto'
import type { VectorStore } from '../../providers/vector-store/port.js'
import type { DocumentLibraryView } from '../document-views.js'

const UNIT = new Float32Array([1])

/** The derived channels whose derivations are recorded. */
export type DerivedChannel = 'derived_graph' | 'derived_episodes'

export interface DerivationRecord {
  /** Of the stored chunks it derived from (`fingerprintOf`): a document written since is `pending`. */
  chunks: string
  state: 'done' | 'failed'
  reason?: string
  /** What it wrote: derived entities and relations, or derived Episodes, Facets and FacetPoints. */
  items: number
  /**
   * Of everything a derivation reads of the stored chunks (`derivationInputOf`): their texts, and their title and
   * heading path, which a rewrite may change alone. Absent in records written before it was kept.
   */
  input?: string
}

/**
 * What a derivation reads of a document's stored chunks, hashed: ids, texts, titles and heading paths in chunk order;
 * null for a document the library does not hold.
 */
export function derivationInputOf(library: DocumentLibraryView, docId: string): string | null {
  const ids = [...library.storedChunks(docId).keys()]
  if (ids.length === 0) return null
  const chunks = ids.map((id) => library.chunk(id)).filter((c) => c !== undefined).sort((a, b) => a.chunk_index - b.chunk_index)
  const read = chunks.map((c) => [c.id, c.text, c.title ?? null, c.heading_path ?? null])
  return createHash('sha256').update(JSON.stringify(read), 'utf8').digest('hex')
}

export class DerivationRecords {
  #ensured = false

  constructor(private readonly vectors: VectorStore, readonly collection: string) {}

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

  /** The records of these documents: document id -> channel -> its last outcome. */
  async get(namespace: string, docIds: readonly string[]): Promise<Map<string, Partial<Record<DerivedChannel, DerivationRecord>>>> {
    const out = new Map<string, Partial<Record<DerivedChannel, DerivationRecord>>>()
    if (docIds.length === 0) return out
    for await (const { payload } of this.vectors.scroll(this.collection, namespace, docIds)) {
      const channel = payload['channel'] as DerivedChannel
      const record: DerivationRecord = {
        chunks: String(payload['chunks']), state: payload['state'] === 'failed' ? 'failed' : 'done', items: Number(payload['items'] ?? 0),
        ...(typeof payload['reason'] === 'string' ? { reason: payload['reason'] } : {}),
        ...(typeof payload['input'] === 'string' ? { input: payload['input'] } : {})
      }
      out.set(payload.doc_id, { ...out.get(payload.doc_id), [channel]: record })
    }
    return out
  }
}

/**
 * The outcome of each document's last derivation, per derived channel (docs/api.md, "Index status"), kept in the
 * vector store (the one store both back-end families have, shared by replicas, kept over a restart): one record per
 * document and channel, a one-dimensional vector beside the payload, removed with the document or the namespace.
 * Written by the write path alone (src/corpus/appliers/writers/derivation-records.ts).
 */
import { createHash } from 'node:crypto'
import type { VectorStore } from '../../providers/vector-store/port.js'
import type { DocumentLibraryView } from '../document-views.js'

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

/** The records as the index status reads them; the write path writes them (src/corpus/appliers/writers/derivation-records.ts). */
export class DerivationRecords {
  constructor(private readonly vectors: VectorStore, readonly collection: string) {}

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

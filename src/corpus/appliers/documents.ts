/**
 * The documents applier: an upsert or delete of documents written to the namespace's library (vectors, catalog,
 * lexical index) under the `documents:` lock the write path hands it, marked in the write window first.
 */
import type { ChunkRecord } from '../../kernel/chunk-payload.js'
import type { Change } from '../changes.js'
import type { IngestSummary } from '../documents/ingest-summary.js'
import type { DocumentLibraries } from '../libraries.js'
import type { Exclusive } from '../write-lock.js'
import { deleteDocument, ingestDocuments } from './writers/documents.js'

type DocumentsChange = Extract<Change, { kind: 'documents' }>

export interface DocumentsApplyOptions {
  /** The `documents:` lock, within which these documents are first marked as being written. */
  exclusive: (docIds: readonly string[]) => Exclusive
  /** Told what an upsert stored (not the documents it found unchanged), within the lock; and the ids a delete removed. */
  onWritten?: (docIds: readonly string[], chunks: readonly ChunkRecord[]) => void
  /** How many chunks of an upsert are embedded so far. */
  onProgress?: (embedded: number, total: number) => void
}

export function applyDocuments(libraries: DocumentLibraries, namespace: string, change: Extract<DocumentsChange, { op: 'upsert' }>, options: DocumentsApplyOptions): Promise<IngestSummary>
export function applyDocuments(libraries: DocumentLibraries, namespace: string, change: Extract<DocumentsChange, { op: 'delete' }>, options: DocumentsApplyOptions): Promise<{ deleted: string[] }>
export function applyDocuments(libraries: DocumentLibraries, namespace: string, change: DocumentsChange, options: DocumentsApplyOptions): Promise<IngestSummary | { deleted: string[] }>
export async function applyDocuments(libraries: DocumentLibraries, namespace: string, change: DocumentsChange, options: DocumentsApplyOptions): Promise<IngestSummary | { deleted: string[] }> {
  const { exclusive, onWritten, onProgress } = options
  if (change.op === 'upsert') {
    return ingestDocuments(await libraries.forWrite(namespace), change.documents, {
      exclusive: exclusive(change.documents.map((d) => d.id)),
      ...(onWritten ? { onWritten } : {}),
      ...(onProgress ? { onProgress } : {})
    })
  }
  const deleted: string[] = []
  for (const id of change.ids) {
    const library = libraries.get(namespace)
    if (library && await deleteDocument(library, id, exclusive([id]))) deleted.push(id)
  }
  // a document not found here is not proven absent from the store (a write of it may not be recorded yet): no state
  onWritten?.(deleted, [])
  return { deleted }
}

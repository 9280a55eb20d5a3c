/**
 * What one namespace's document library holds in memory (its chunk catalog and documents), the stores it reads them
 * from, and the turns its reads of the stores and its writes take. The library (library.ts) reads it and reads it anew
 * from the vector store; only the writers (src/corpus/appliers/writers/documents.ts, document-catch-up.ts) change it
 * otherwise. The library holds it under `STATE`, and the import rule `reader-state-for-the-reader-and-its-writers`
 * (.dependency-cruiser.cjs) lets no other module import this one, so no other module can reach it.
 */
import type { ChunkRecord } from '../../kernel/chunk-payload.js'
import { lexicalText } from '../../kernel/lexical-text.js'
import type { Embedder } from '../../providers/embedder/port.js'
import type { LexicalDocument, LexicalIndexes } from '../../providers/lexical-index/port.js'
import type { VectorStore } from '../../providers/vector-store/port.js'
import type { DocumentSummary } from '../document-views.js'
import { TaskQueue } from '../../providers/embedded/task-queue.js'
import { ChunkCatalog } from './chunk-catalog.js'

export const STATE: unique symbol = Symbol('document library state')

export interface DocumentLibraryPorts {
  vectors: VectorStore
  embedder: Embedder
  /** The library uses its own namespace's index. */
  lexical: LexicalIndexes
}

export interface DocumentLibraryPlace {
  collection: string
  namespace: string
  embedBatchSize?: number
  /** The file the catalog is kept in between runs (catalog-checkpoint.ts); none when the vector store is shared. */
  checkpointFile?: string
}

export class LibraryState {
  catalog = new ChunkCatalog()
  docs = new Map<string, DocumentSummary>()
  /** The document ids in order, for pages; dropped whenever a document comes or goes. */
  sortedIds: string[] | undefined
  /** Moves on every successful write (the library's `version`). */
  changes = 0
  /** The vector store's stamp the catalog's checkpoint file was made at, when the file holds this catalog. */
  checkpointed: string | undefined
  /** Chunks tracked and documents forgotten since the state was made (a read's own reset counts too). */
  edits = 0
  /** `edits` when the catalog was last read whole from the stores (its order then is a scroll's). */
  editsAtRead = 0
  /** A lexical write failed: the next write syncs the index with the catalog whole. */
  lexicalBehind = false
  readonly #queue = new TaskQueue('catalog')

  constructor(readonly ports: DocumentLibraryPorts, readonly place: DocumentLibraryPlace) {}

  /** Runs `task` after every task queued before it, whether they failed or not. */
  serialise<T>(task: () => Promise<T>): Promise<T> {
    return this.#queue.run(task)
  }

  /** Runs a compaction step (the catalog's copy for its checkpoint) in turn: the tasks behind it count its time as waited for compaction. */
  serialiseCompaction<T>(task: () => Promise<T>): Promise<T> {
    return this.#queue.runCompaction(task)
  }

  /** Holds these chunks and nothing else. */
  reset(chunks: Iterable<ChunkRecord>): void {
    const draft = new CatalogDraft()
    for (const c of chunks) draft.track(c)
    this.adopt(draft)
  }

  /** Holds what `draft` holds and nothing else. */
  adopt(draft: CatalogDraft): void {
    this.edits += 1
    this.catalog = draft.catalog
    this.docs = draft.docs
    this.sortedIds = undefined
    this.edits += draft.catalog.size
  }

  /** Holds this catalog (read from its checkpoint) and nothing else. */
  restore(catalog: ChunkCatalog): void {
    this.catalog = catalog
    this.docs = new Map()
    this.sortedIds = undefined
    for (const { id, source, title, chunks } of catalog.documents()) this.docs.set(id, { id, source, chunks, ...(title ? { title } : {}) })
  }

  /** The ids of a document's chunks held (none when it is not). */
  chunkIdsOf(docId: string): string[] {
    return this.catalog.idsOf(docId) ?? []
  }

  track(c: ChunkRecord): void {
    this.edits += 1
    if (trackIn(this, c)) this.sortedIds = undefined
  }

  forget(docIds: readonly string[]): void {
    this.edits += 1
    this.catalog.deleteDocuments(docIds)
    for (const docId of docIds) if (this.docs.delete(docId)) this.sortedIds = undefined
  }
}

/**
 * A namespace's chunks read whole (`DocumentLibrary.open`), held as they are read and taken at once by `adopt`: the
 * read keeps no record of its own per chunk until the end, so that what it leaves is young garbage (issue 44: a
 * follower's first read of 30k chunks held every decoded record to its end, and paused in old-space collections).
 */
export class CatalogDraft {
  readonly catalog = new ChunkCatalog()
  readonly docs = new Map<string, DocumentSummary>()

  track(c: ChunkRecord): void {
    trackIn(this, c)
  }
}

/** Holds `c` in `held`; answers whether its document was not held before. */
function trackIn(held: { catalog: ChunkCatalog; docs: Map<string, DocumentSummary> }, c: ChunkRecord): boolean {
  if (!held.catalog.add(c)) return false
  const d = held.docs.get(c.doc_id)
  if (d) {
    d.chunks += 1
    return false
  }
  held.docs.set(c.doc_id, { id: c.doc_id, source: c.source, chunks: 1, ...(c.title ? { title: c.title } : {}) })
  return true
}

export function lexicalDocuments(chunks: Iterable<ChunkRecord>): LexicalDocument[] {
  const out: LexicalDocument[] = []
  for (const c of chunks) out.push({ id: c.id, text: lexicalText(c) })
  return out
}

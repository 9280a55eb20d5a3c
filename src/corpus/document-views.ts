/**
 * What a reader sees of the documents: the catalog of one namespace and of all of them, with no method that writes.
 * The runtime hands these to the routes, the MCP tools and /context; the writers (`ingestDocuments`, `deleteDocument`,
 * `dropDocuments` in src/corpus/appliers/writers/documents.ts) are reached only through the write path
 * (docs/write-path.md), so a route that tries to write through a view does not compile (test/architecture/write-door.test.ts).
 */
import type { ChunkRecord, IndexVersions } from '../kernel/chunk-payload.js'

/** One document as the catalog lists it. */
export interface DocumentSummary {
  id: string
  title?: string
  source: string
  chunks: number
}

/** One namespace's documents as this replica's catalog holds them. */
export interface DocumentLibraryView {
  readonly collection: string
  readonly namespace: string
  /** Changes on every successful ingest or delete; part of response cache keys. */
  readonly version: number
  readonly chunkCount: number
  readonly documentCount: number
  /** The versions of the chunker, analyzer and model chunks are written with now. */
  readonly versions: IndexVersions
  chunk(id: string): ChunkRecord | undefined
  /** The documents in id order. */
  list(): DocumentSummary[]
  /** Up to `limit` documents in id order after the id `after`. */
  page(after: string | undefined, limit: number): DocumentSummary[]
  /** The chunks the catalog holds of a document: chunk id -> text. */
  storedChunks(docId: string): Map<string, string>
  has(docId: string): boolean
  /** The document as `list` gives it; undefined when it is not held. */
  summary(docId: string): DocumentSummary | undefined
  docIdsWithSourcePrefix(prefix: string): string[]
  /**
   * The number of chunks of a document when it is held made from the input of this fingerprint with the running
   * versions; undefined when it is not (absent, changed, other versions, or written before fingerprints were kept).
   */
  heldUnchanged(docId: string, fingerprint: string): number | undefined
}

/** Every namespace's documents as this replica's catalog holds them. */
export interface DocumentCatalogView {
  /** The namespace's library when this replica has one (it may be empty after deletes). */
  get(namespace: string): DocumentLibraryView | undefined
  /** A namespace's documents in id order; none for a namespace without a library. */
  list(namespace: string): DocumentSummary[]
  /** Up to `limit` of a namespace's documents in id order after the id `after`. */
  page(namespace: string, after: string | undefined, limit: number): DocumentSummary[]
}

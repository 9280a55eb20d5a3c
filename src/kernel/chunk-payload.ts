/**
 * A stored chunk and the payload of its point in the vector store: the one codec that the document library, the
 * hybrid adapter (a chunk the vector leg returned) and the lexical leg on Qdrant (the text it indexes) read a chunk
 * point with, so that all of them see the same chunk.
 */
import type { DocumentMetadata } from './document-fields.js'

/** A stored chunk as every leg knows it; `id` is {@link chunkId}`(doc_id, chunk_index)`. */
export interface ChunkRecord {
  id: string
  doc_id: string
  /** Position of the chunk in its document, from 0. */
  chunk_index: number
  text: string
  /** The document's source; its id when it was ingested without one. */
  source: string
  title?: string
  /** The headings above the chunk in its document, outermost first (absent before the first heading). */
  heading_path?: string[]
  /** The anchor of the chunk's section: the heading's explicit `{#id}`, else its GitHub-style slug. */
  anchor?: string
  /** `lines` when the chunk holds part of a code block, table, list item or other block cut at line ends. */
  split?: 'lines'
  /** The page the chunk starts on, from 1, in a paged document (a PDF: its text holds a form feed between pages). */
  page?: number
  /** The page it ends on, when that is a later one. */
  page_end?: number
  /** What the chunk was made and indexed with; a chunk whose versions differ from the running ones is indexed again. */
  versions?: IndexVersions
  /**
   * The fingerprint of the document input the chunk was made from (src/corpus/fingerprint.ts), the same on every chunk of
   * one write; absent on chunks written before fingerprints were kept.
   */
  fingerprint?: string
  metadata?: DocumentMetadata
}

/** The versions of the chunker, the lexical analyzer and the embedding model a chunk was written with. */
export interface IndexVersions {
  chunker: string
  analyzer: string
  model: string
}

/** Whether two chunks were written with the same versions (absent versions match nothing). */
export const sameVersions = (a: IndexVersions | undefined, b: IndexVersions | undefined): boolean =>
  a !== undefined && b !== undefined && a.chunker === b.chunker && a.analyzer === b.analyzer && a.model === b.model

/**
 * A chunk point's payload as recall writes it (the vector store adds its own keys beside these: the record id and
 * namespace on Qdrant, the lexical leg's `lex_` keys).
 */
export type ChunkPayload = Omit<ChunkRecord, 'id'>

/** What a reader hands the decoder: any stored payload, of which only the chunk's fields are read. */
export type StoredChunkPayload = { doc_id: string; text: string; [key: string]: unknown }

/** A chunk's id: its document's id (which holds no `#`), `#`, its index. */
export const chunkId = (docId: string, index: number): string => `${docId}#${index}`

/** The index a chunk id ends with (`<doc_id>#<index>`); undefined when the id is not of that form. */
export function chunkIndexOf(id: string): number | undefined {
  const match = /#(\d+)$/.exec(id)
  return match ? Number(match[1]) : undefined
}

/** The document a chunk id belongs to: what precedes its last `#`. */
export function documentOfChunk(id: string): string {
  return id.slice(0, id.lastIndexOf('#'))
}

export function encodeChunk(chunk: ChunkRecord): ChunkPayload {
  return {
    doc_id: chunk.doc_id, text: chunk.text, chunk_index: chunk.chunk_index, source: chunk.source,
    ...(chunk.title ? { title: chunk.title } : {}), ...(chunk.metadata ? { metadata: chunk.metadata } : {}),
    ...(chunk.heading_path ? { heading_path: chunk.heading_path } : {}), ...(chunk.anchor ? { anchor: chunk.anchor } : {}),
    ...(chunk.split ? { split: chunk.split } : {}),
    ...(chunk.page ? { page: chunk.page } : {}), ...(chunk.page_end ? { page_end: chunk.page_end } : {}),
    ...(chunk.versions ? { versions: chunk.versions } : {}),
    ...(chunk.fingerprint ? { fingerprint: chunk.fingerprint } : {})
  }
}

/**
 * The chunk a point holds, from its id and payload; the payload's other keys are left out. Fallbacks, the same for
 * every reader: a `chunk_index` that is missing (or not a whole number from 0) is the index the id ends with (a
 * point written without it still gets its title in its lexical text when it is not its document's first chunk); a
 * missing `source` is the doc id; a `title` that is not a string, or `metadata` that is not an object, is absent.
 *
 * @throws RangeError when neither the payload nor the id gives the chunk's index (the point is not a chunk).
 */
export function decodeChunk(id: string, payload: StoredChunkPayload): ChunkRecord {
  const index = isChunkIndex(payload.chunk_index) ? payload.chunk_index : chunkIndexOf(id)
  if (index === undefined) throw new RangeError(`point ${id}: no chunk_index in its payload, and the id is not <doc_id>#<index>`)
  const { metadata } = payload
  return {
    id, doc_id: payload.doc_id, chunk_index: index, text: payload.text,
    source: typeof payload.source === 'string' ? payload.source : payload.doc_id,
    ...(typeof payload.title === 'string' ? { title: payload.title } : {}),
    ...(Array.isArray(payload.heading_path) ? { heading_path: payload.heading_path.map(String) } : {}),
    ...(typeof payload.anchor === 'string' ? { anchor: payload.anchor } : {}),
    ...(payload.split === 'lines' ? { split: 'lines' as const } : {}),
    ...(isPage(payload.page) ? { page: payload.page } : {}), ...(isPage(payload.page_end) ? { page_end: payload.page_end } : {}),
    ...(isVersions(payload.versions) ? { versions: { chunker: payload.versions.chunker, analyzer: payload.versions.analyzer, model: payload.versions.model } } : {}),
    ...(typeof payload.fingerprint === 'string' ? { fingerprint: payload.fingerprint } : {}),
    ...(metadata && typeof metadata === 'object' && !Array.isArray(metadata) ? { metadata: metadata as DocumentMetadata } : {})
  }
}

const isChunkIndex = (value: unknown): value is number => typeof value === 'number' && Number.isInteger(value) && value >= 0
const isPage = (value: unknown): value is number => typeof value === 'number' && Number.isInteger(value) && value >= 1

const isVersions = (value: unknown): value is IndexVersions => {
  if (!value || typeof value !== 'object') return false
  const v = value as Record<string, unknown>
  return typeof v.chunker === 'string' && typeof v.analyzer === 'string' && typeof v.model === 'string'
}

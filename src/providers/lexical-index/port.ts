import type { BackendHealth } from '../errors.js'

export interface LexicalDocument {
  id: string
  text: string
}

export interface LexicalHit {
  id: string
  /** BM25 score; higher is better. */
  score: number
}

/**
 * An in-process BM25 index over the CJK analyzer's tokens.
 *
 * - `rebuild` replaces the whole index with one built from `documents`, built off to the side and swapped
 *   in at the end: searches made while it runs see the previous index, and a failed rebuild keeps it.
 * - `search` returns at most `limit` hits with a positive score, best first, equal scores by id ascending.
 *   An empty index, or a query with no indexed token, gives `[]`.
 * - Any number of documents works, including 0, 1 and 2.
 * - `version` changes whenever a rebuild is swapped in.
 */
export interface LexicalIndex {
  rebuild(documents: readonly LexicalDocument[]): Promise<void>
  search(query: string, limit: number): Promise<LexicalHit[]>
  readonly size: number
  readonly version: number
  health(): Promise<BackendHealth>
  close(): Promise<void>
}

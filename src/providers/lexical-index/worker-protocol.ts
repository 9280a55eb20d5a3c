import type { AnalyzerName } from '../../kernel/analyzers.js'
import type { SegmentData } from './segment.js'

/** The commit point of an index folder: which segment files make the index, and what was removed from each. */
export interface Manifest {
  format: 1
  /** `<analyzer name>@<ANALYZER_VERSION>`; another value means the files are rebuilt. */
  analyzer: string
  nextSegment: number
  segments: { name: string; deleted: number[] }[]
}

export type WorkerRequest = { id: number } & (
  | { op: 'load'; args: { dir: string; analyzer: string } }
  | {
      op: 'write'
      args: {
        dir: string
        manifest: Manifest
        build?: { name: string; analyzer: AnalyzerName; docs: { id: string; text: string }[] }
        deletions: { segment: string; ordinals: number[] }[]
      }
    }
  | { op: 'merge'; args: { dir: string; name: string; inputs: { segment: string; deleted: Uint8Array | null }[] } }
  | { op: 'terms'; args: { dir: string; segment: string; ordinals: number[] } }
  | { op: 'commit'; args: { dir: string; manifest: Manifest; drop: string[] } }
)

export type WorkerResponse = { id: number; ok: true; result: unknown } | { id: number; ok: false; error: string }

export interface LoadResult {
  manifest: Manifest | null
  segments: SegmentData[]
  /** Per segment, the term ids of the documents its tombstones remove, concatenated. */
  deletedTerms: Uint32Array[]
}

export interface WriteResult {
  segment?: SegmentData
  /** Per deletion, the term ids of its removed documents, concatenated. */
  deletedTerms: Uint32Array[]
}

export interface MergeResult {
  segment: SegmentData
  maps: Int32Array[]
}

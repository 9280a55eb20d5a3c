import type { ImagesReport } from '../images/images-report.js'

export interface IngestSummary {
  documents: number
  chunks: number
  replaced: number
  /** Documents the namespace already held exactly as sent: neither embedded nor written again. */
  unchanged: number
  /** Their ids, in the order sent. */
  unchanged_ids: string[]
  /**
   * Documents that give nothing to index (no chunk: front matter, scripts or HTML components only), with the reason:
   * not written, and not counted in `documents` (a version the namespace held before stays as it was). Absent when none.
   */
  skipped?: SkippedDocument[]
  took_ms: number
  /** What the write did with the documents' pictures; absent when they had none and held none. */
  images?: ImagesReport
}

/** A document of a write that was not written, and why. */
export interface SkippedDocument {
  id: string
  reason: string
}

/** Why a document whose text gives no chunk is skipped. */
export const NO_TEXT_REASON = 'no text to index: it holds only front matter, or blocks without prose (scripts, styles, HTML-only ' +
  'components, rules, link definitions), which are not indexed; not written (a version held before is kept)'

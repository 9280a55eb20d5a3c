/** What a write did with its documents' pictures (the ingest answer's `images`). */
export interface ImagesReport {
  /** Pictures stored by this write (new, or with a new text). */
  written: number
  /** Pictures the namespace held already as sent: not embedded or written again. */
  unchanged: number
  /** Pictures under the size floor (icons, spacers): not stored. */
  small: number
  /** Pictures held before that the written or deleted documents no longer have. */
  removed: number
  /** Pictures that could not be read, each with its document, its place in `images` and the reason; the document is written. */
  refused: Array<{ document: string; index: number; reason: string }>
}

/**
 * A picture of a document as a client sends it (`documents[].images` of `POST /ingest/documents`, what the file
 * readers find): its bytes and what the document says about it. The server sniffs, hashes, thumbnails and embeds it
 * (src/corpus/images/image-records.ts).
 */
export interface ImageInput {
  /** The picture's bytes, base64. */
  data: string
  /** The alt text (`![alt](…)`, `<img alt>`, a Word picture's description). */
  alt?: string
  /** A caption: a `<figcaption>`, a Markdown image title, or a paragraph beside it that opens like one (`图 1`, `Figure 2`). */
  caption?: string
  /** The headings above the picture, outermost first. */
  heading_path?: string[]
  /** The sentences around the picture. */
  context?: string
  /** The PDF page it is on, from 1. */
  page?: number
  /**
   * Text recognised in it by OCR: set by the file readers (an image file's own text; a picture that holds text), not
   * by a client (the request schema has no such field).
   */
  ocr_text?: string
}

/** Why a picture a file names was not taken (unreadable, a remote URL, a missing file); the file's report lists them. */
export interface ImageProblem {
  /** Where the file named it: the path or URL, `data:` URIs shortened, or `page N`. */
  src: string
  reason: string
}

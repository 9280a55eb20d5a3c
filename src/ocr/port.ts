/** One line of recognised text, in reading order, with its box in pixels of the image recognised. */
export interface OcrLine {
  text: string
  /** Mean confidence of its words, 0 to 1, each word weighted by its characters. */
  confidence: number
  box: { left: number; top: number; width: number; height: number }
}

/** A block of lines the engine found together (a column's paragraph, a caption), in reading order. */
export interface OcrBlock {
  lines: OcrLine[]
}

export interface OcrResult {
  /** The blocks' lines, a line break between lines and a blank line between blocks; empty when nothing was read. */
  text: string
  /** Mean confidence of every recognised character, 0 to 1; 0 when nothing was read. */
  confidence: number
  blocks: OcrBlock[]
  /** Width and height in pixels of the image recognised. */
  width: number
  height: number
}

export interface RecogniseOptions {
  /** The image's resolution in dots per inch when the caller knows it (a rendered PDF page); else read from the image. */
  dpi?: number
  /** The page (from 0) of a multi-page image (TIFF) to recognise. Default 0. */
  page?: number
  signal?: AbortSignal
}

/**
 * Recognises the text of one image. The work runs outside the service's event loop (a child process), and an
 * engine runs at most its configured number of recognitions at once; a call waits its turn.
 */
export interface OcrEngine {
  /**
   * The text of the image in `bytes` (PNG, JPEG, WebP, TIFF, GIF, BMP; of a multi-page TIFF, the page `options.page`). Throws an {@link OcrError}
   * whose `reason` says why when the bytes are not such an image, are cut short, name more pixels than the limit
   * (refused from the header, before any decoding), or when recognition runs over its time limit or is aborted.
   */
  recognise(bytes: Uint8Array, options?: RecogniseOptions): Promise<OcrResult>
  /** Whether the engine can run here, and if not, why. */
  health(): Promise<{ ok: true; engine: string } | { ok: false; reason: string }>
  close(): Promise<void>
}

export type OcrFailure = 'unsupported' | 'unreadable' | 'too-large' | 'timeout' | 'aborted' | 'engine'

/** Why an image could not be recognised; `reason` is a sentence for a per-file or per-page report. */
export class OcrError extends Error {
  constructor(readonly failure: OcrFailure, readonly reason: string) {
    super(reason)
    this.name = 'OcrError'
  }
}

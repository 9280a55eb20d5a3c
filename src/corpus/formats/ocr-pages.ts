import type { OcrConfig } from '../../config.js'
import { createOcrEngine, OcrError, type OcrEngine } from '../../ocr/index.js'
import { Slots } from '../../ocr/slots.js'

/** What a file reader needs to recognise pages: the engine and the settings (src/config.ts, `OCR_*`). */
export interface OcrReader {
  engine: OcrEngine
  /** Resolution PDF pages are rendered at. */
  dpi: number
  /** Pages below this mean confidence (0 to 1) are kept and flagged. */
  minConfidence: number
  /** Pages in progress at once within one file (render and recognise); the engine bounds the recognitions. */
  concurrency: number
  maxImagePixels: number
  pageTimeoutMs: number
  /** Called as each page ends, recognised or failed. */
  onPage?: (progress: { file?: string; page: number; done: number; total: number }) => void
}

/** What OCR did to a file: pages (from 1) recognised, flagged below the floor, failed with their reason. */
export interface OcrReport {
  pages: number[]
  lowConfidence: number[]
  failed: Array<{ page: number; reason: string }>
  /** Each recognised page's mean confidence, in the order of `pages`. */
  pageConfidence: number[]
  /** Mean confidence over the recognised pages, each weighted by its characters. */
  confidence: number
}

export interface PageText { page: number; text: string; confidence: number }

/**
 * Recognises the given pages (from 1), each from the image `imageOf(page)` gives, at most `reader.concurrency` at a
 * time. A page that fails (an image that cannot be read, too large, over its time) is reported with its reason; the
 * others are still read.
 */
export async function recognisePages(
  pages: readonly number[], imageOf: (page: number) => Promise<{ bytes: Uint8Array; dpi?: number; page?: number }>, reader: OcrReader
): Promise<{ texts: Map<number, PageText>; report: OcrReport }> {
  const slots = new Slots(Math.max(1, reader.concurrency))
  const texts = new Map<number, PageText>()
  const failed: Array<{ page: number; reason: string }> = []
  let done = 0
  await Promise.all(pages.map((page) => slots.run(async () => {
    try {
      const image = await imageOf(page)
      const result = await reader.engine.recognise(image.bytes, { ...(image.dpi ? { dpi: image.dpi } : {}), ...(image.page !== undefined ? { page: image.page } : {}) })
      texts.set(page, { page, text: result.text, confidence: result.confidence })
    } catch (error) {
      if (!(error instanceof OcrError)) throw error
      failed.push({ page, reason: error.reason })
    }
    reader.onPage?.({ page, done: ++done, total: pages.length })
  })))
  const recognised = [...texts.values()].sort((a, b) => a.page - b.page)
  const chars = recognised.reduce((n, t) => n + t.text.length, 0)
  return {
    texts,
    report: {
      pages: recognised.map((t) => t.page),
      pageConfidence: recognised.map((t) => t.confidence),
      lowConfidence: recognised.filter((t) => t.confidence < reader.minConfidence).map((t) => t.page),
      failed: failed.sort((a, b) => a.page - b.page),
      confidence: chars > 0 ? recognised.reduce((s, t) => s + t.confidence * t.text.length, 0) / chars : 0
    }
  }
}

/** The document metadata of an OCR report (flat, as metadata must be); none when no page was recognised or failed. */
export function ocrMetadata(report: OcrReport): Record<string, boolean | number | string[]> {
  if (report.pages.length === 0 && report.failed.length === 0) return {}
  return {
    ocr: report.pages.length > 0,
    ocr_pages: report.pages.map(String),
    ocr_page_confidence: report.pageConfidence.map((c) => c.toFixed(3)),
    ocr_confidence: Math.round(report.confidence * 1000) / 1000,
    ...(report.lowConfidence.length > 0 ? { ocr_low_confidence_pages: report.lowConfidence.map(String) } : {}),
    ...(report.failed.length > 0 ? { ocr_failed_pages: report.failed.map((f) => String(f.page)) } : {})
  }
}

/** The reader the settings describe, or why OCR cannot run here (no tesseract, a language's data missing). */
export async function openOcrReader(config: OcrConfig, onPage?: OcrReader['onPage']): Promise<OcrReader | string> {
  const engine = createOcrEngine({ languages: config.languages, concurrency: config.concurrency, timeoutMs: config.pageTimeoutMs, maxPixels: config.maxImagePixels })
  const health = await engine.health()
  if (!health.ok) return health.reason
  return {
    engine, dpi: config.dpi, minConfidence: config.minConfidence, concurrency: config.concurrency, maxImagePixels: config.maxImagePixels,
    pageTimeoutMs: config.pageTimeoutMs, ...(onPage ? { onPage } : {})
  }
}

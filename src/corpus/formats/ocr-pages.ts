import type { OcrConfig } from '../../config.js'
import { createOcrEngine, OcrError, type OcrEngine } from '../../ocr/index.js'
import { MachineSlots } from '../../ocr/machine-slots.js'
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
  /** Whether the pictures of PDF, DOCX, HTML and Markdown files are recognised too (`OCR_PICTURES`); default yes. */
  pictures?: boolean
  /**
   * Pages in progress (render and recognise) across every reading that shares this reader, e.g. a service's ingest
   * jobs: at most `concurrency` at once in the process (the recognitions themselves are bounded by the engine,
   * machine-wide when it was opened by {@link openOcrReader}). Without it, each reading bounds its own.
   */
  pageSlots?: Slots
  /** Aborts the reading: no page starts after it, the recognitions running are ended, and the reading throws its reason. */
  signal?: AbortSignal
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
 * others are still read. When `reader.signal` aborts, it throws (after the pages running have stopped).
 */
export async function recognisePages(
  pages: readonly number[], imageOf: (page: number) => Promise<{ bytes: Uint8Array; dpi?: number; page?: number }>, reader: OcrReader
): Promise<{ texts: Map<number, PageText>; report: OcrReport }> {
  const slots = reader.pageSlots ?? new Slots(Math.max(1, reader.concurrency))
  const texts = new Map<number, PageText>()
  const failed: Array<{ page: number; reason: string }> = []
  let done = 0
  const { signal } = reader
  const settled = await Promise.allSettled(pages.map((page) => slots.run(async () => {
    signal?.throwIfAborted()
    try {
      const image = await imageOf(page)
      const result = await reader.engine.recognise(image.bytes, { ...(image.dpi ? { dpi: image.dpi } : {}), ...(image.page !== undefined ? { page: image.page } : {}), ...(signal ? { signal } : {}) })
      texts.set(page, { page, text: result.text, confidence: result.confidence })
    } catch (error) {
      // a page stopped by the abort is no failed page: the whole reading stops
      if (!(error instanceof OcrError) || signal?.aborted) throw error
      failed.push({ page, reason: error.reason })
    }
    reader.onPage?.({ page, done: ++done, total: pages.length })
  }, signal)))
  // every page has ended (its process and slot with it) before a failure or an abort is thrown
  const thrown = settled.find((r) => r.status === 'rejected')
  if (thrown) throw thrown.reason
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

/** Most page ranges one metadata list holds; the pages past them are counted in `<list>_more`. */
const MAX_RANGES = 100

/**
 * The document metadata of an OCR report (flat, as metadata must be), compact whatever the page count so that a
 * 1,000-page scan stays under the 8,192-byte metadata limit: pages as ranges (`["1-40", "42"]`), the mean and the
 * lowest page confidence, the low-confidence and failed pages as ranges (at most {@link MAX_RANGES} each, the rest
 * counted). None when no page was recognised or failed.
 */
export function ocrMetadata(report: OcrReport): Record<string, boolean | number | string[]> {
  if (report.pages.length === 0 && report.failed.length === 0) return {}
  const round = (n: number) => Math.round(n * 1000) / 1000
  return {
    ocr: report.pages.length > 0,
    ...rangeList('ocr_pages', report.pages, true),
    ocr_page_count: report.pages.length,
    ocr_confidence: round(report.confidence),
    ...(report.pageConfidence.length > 0 ? { ocr_confidence_min: round(Math.min(...report.pageConfidence)) } : {}),
    ...rangeList('ocr_low_confidence_pages', report.lowConfidence),
    ...rangeList('ocr_failed_pages', report.failed.map((f) => f.page))
  }
}

/** `{[name]: ranges}` (and `{name}_more`: pages past the ranges kept); nothing for no pages unless `always`. */
function rangeList(name: string, pages: readonly number[], always = false): Record<string, string[] | number> {
  if (pages.length === 0) return always ? { [name]: [] } : {}
  const ranges = pageRanges(pages)
  if (ranges.length <= MAX_RANGES) return { [name]: ranges.map(([a, b]) => (a === b ? String(a) : `${a}-${b}`)) }
  const kept = ranges.slice(0, MAX_RANGES)
  const more = ranges.slice(MAX_RANGES).reduce((n, [a, b]) => n + b - a + 1, 0)
  return { [name]: kept.map(([a, b]) => (a === b ? String(a) : `${a}-${b}`)), [`${name}_more`]: more }
}

/** Sorted distinct pages as runs of consecutive pages, `[first, last]` each. */
function pageRanges(pages: readonly number[]): Array<[number, number]> {
  const sorted = [...new Set(pages)].sort((a, b) => a - b)
  const out: Array<[number, number]> = []
  for (const p of sorted) {
    const last = out.at(-1)
    if (last && p === last[1] + 1) last[1] = p
    else out.push([p, p])
  }
  return out
}

/**
 * The reader the settings describe, or why OCR cannot run here (no tesseract, a language's data missing). Its
 * recognitions share `config.concurrency` slots with every process of the machine naming `config.slotsDir`
 * (src/ocr/machine-slots.ts).
 */
export async function openOcrReader(config: OcrConfig, onPage?: OcrReader['onPage']): Promise<OcrReader | string> {
  const slots = new MachineSlots(config.slotsDir, Math.max(1, config.concurrency))
  const engine = createOcrEngine({ languages: config.languages, concurrency: config.concurrency, timeoutMs: config.pageTimeoutMs, maxPixels: config.maxImagePixels, slots })
  const health = await engine.health()
  if (!health.ok) return health.reason
  const lockable = await slots.health()
  if (!lockable.ok) return lockable.reason
  return {
    engine, dpi: config.dpi, minConfidence: config.minConfidence, concurrency: config.concurrency, maxImagePixels: config.maxImagePixels,
    pageTimeoutMs: config.pageTimeoutMs, pageSlots: new Slots(Math.max(1, config.concurrency)), pictures: config.pictures, ...(onPage ? { onPage } : {})
  }
}

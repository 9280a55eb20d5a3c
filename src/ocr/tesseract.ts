import { pageAsPng, readImageHeader } from './image-header.js'
import { OcrError, type OcrEngine, type OcrResult, type RecogniseOptions } from './port.js'
import { runProcess } from './run-process.js'
import type { SlotBound } from './machine-slots.js'
import { Slots } from './slots.js'
import { parseTesseractTsv } from './tesseract-tsv.js'

const HEALTH_TIMEOUT_MS = 10_000

export interface TesseractOptions {
  /** Tesseract's `-l`: trained languages joined by `+`. Default `chi_sim+eng`. */
  languages?: string
  /** Recognitions run at once, each in a `tesseract` process of one thread. Default 1. */
  concurrency?: number
  /** Time allowed to one image's recognition, in milliseconds, its wait for a turn not counted. Default 60,000. */
  timeoutMs?: number
  /** Largest image, in pixels (width × height), read from its header before decoding. Default 100,000,000. */
  maxPixels?: number
  /** The executable. Default `tesseract` on PATH. */
  command?: string
  /** The bound recognitions run within (machine-wide: MachineSlots); default `concurrency` slots of this engine. */
  slots?: SlotBound
}

/**
 * Tesseract 5 (Debian's `tesseract-ocr`), one child process per image: the image is decoded to a grayscale PNG by
 * libvips (sharp), piped to `tesseract stdin stdout … tsv` with page segmentation 3 (automatic layout, so columns
 * come out one after the other), and its TSV read into lines and blocks. `OMP_THREAD_LIMIT=1` keeps each process on
 * one core, so `concurrency` is the number of cores OCR takes.
 */
export class TesseractEngine implements OcrEngine {
  private readonly languages: string
  private readonly timeoutMs: number
  private readonly maxPixels: number
  private readonly command: string
  private readonly slots: SlotBound

  constructor(options: TesseractOptions = {}) {
    this.languages = options.languages ?? 'chi_sim+eng'
    this.timeoutMs = options.timeoutMs ?? 60_000
    this.maxPixels = options.maxPixels ?? 100_000_000
    this.command = options.command ?? 'tesseract'
    this.slots = options.slots ?? new Slots(Math.max(1, options.concurrency ?? 1))
  }

  async recognise(bytes: Uint8Array, options: RecogniseOptions = {}): Promise<OcrResult> {
    const header = await readImageHeader(bytes, this.maxPixels)
    const page = options.page ?? 0
    if (page >= header.pages) throw new OcrError('unreadable', `the image has ${header.pages} page(s); page ${page + 1} was asked for`)
    const png = await pageAsPng(bytes, page, this.maxPixels)
    const dpi = options.dpi ?? header.dpi
    return this.slots.run(async () => parseTesseractTsv(await this.run(png, dpi, options.signal)), options.signal)
  }

  async health(): Promise<{ ok: true; engine: string } | { ok: false; reason: string }> {
    const listed = await this.exec(['--list-langs']).catch((error: Error) => error)
    if (listed instanceof Error) return { ok: false, reason: `${this.command} cannot run: ${listed.message}` }
    const have = new Set(listed.split('\n').slice(1).map((l) => l.trim()))
    const missing = this.languages.split('+').filter((l) => !have.has(l))
    if (missing.length > 0) return { ok: false, reason: `tesseract lacks the language data ${missing.join(', ')} (Debian: tesseract-ocr-${missing[0]!.replace('_', '-')})` }
    const version = (await this.exec(['--version'])).split('\n')[0]!.trim()
    return { ok: true, engine: `${version} (${this.languages})` }
  }

  async close(): Promise<void> {}

  private run(png: Buffer, dpi: number | undefined, signal?: AbortSignal): Promise<string> {
    const args = ['stdin', 'stdout', '-l', this.languages, '--psm', '3', ...(dpi ? ['--dpi', String(dpi)] : []), 'tsv']
    return this.exec(args, png, signal)
  }

  private async exec(args: string[], input?: Buffer, signal?: AbortSignal): Promise<string> {
    const env = { ...process.env, OMP_THREAD_LIMIT: '1' }
    // the health questions (versions, languages) answer at once: the page limit is for recognitions
    const timeoutMs = input ? this.timeoutMs : HEALTH_TIMEOUT_MS
    const out = await runProcess(this.command, args, { timeoutMs, limitName: 'OCR_PAGE_TIMEOUT_MS', env, ...(input ? { input } : {}), ...(signal ? { signal } : {}) })
    return out.toString('utf8')
  }
}

/**
 * Scanned PDFs and image files read into documents by OCR. The files are made by real tools
 * (test/fixtures/ocr/make.sh: poppler renders the LibreOffice PDFs, img2pdf wraps the images as an image-only PDF,
 * ImageMagick writes the TIFF and WebP); what is expected comes from poppler's text layer of the same pages.
 */
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { readFileByFormat } from '../../src/corpus/formats/index.js'
import { openOcrReader, type OcrReader } from '../../src/corpus/formats/ocr-pages.js'
import { charAccuracy } from '../helpers/char-accuracy.js'

const OCR = join(import.meta.dirname, '../fixtures/ocr')
const FILES = join(import.meta.dirname, '../fixtures/files')
const text = (path: string) => readFileSync(path, 'utf8')
const pagesOf = (t: string) => t.split('\n\f\n')

const languages = spawnSync('tesseract', ['--list-langs'], { encoding: 'utf8' })
const hasOcr = languages.status === 0 && /^chi_sim$/m.test(languages.stdout) && spawnSync('pdftoppm', ['-v']).status === 0
if (!hasOcr) console.warn('corpus/ocr-files.test.ts skipped (but for the no-OCR cases): no tesseract with chi_sim, or no pdftoppm (scripts/setup.sh installs them)')

const reader = async (overrides: Partial<OcrReader> = {}): Promise<OcrReader> => {
  const opened = await openOcrReader(loadConfig({}).ocr)
  if (typeof opened === 'string') throw new Error(opened)
  return { ...opened, ...overrides }
}

describe.skipIf(!hasOcr)('files read by OCR', () => {
  it('reads an image-only PDF (img2pdf, 150 dpi) page by page, each page close to the text layer it was made from', async () => {
    const progress: Array<{ file?: string; page: number; done: number; total: number }> = []
    const reading = await readFileByFormat(join(OCR, 'handbook-scanned.pdf'), { ocr: await reader({ onPage: (p) => progress.push(p) }) })
    expect(reading.outcome).toBe('read')
    if (reading.outcome !== 'read') return
    const pages = pagesOf(reading.text)
    expect(pages).toHaveLength(4)
    for (let n = 1; n <= 4; n++) expect(charAccuracy(pages[n - 1]!, text(join(FILES, `handbook.page-${n}.txt`))), `page ${n}`).toBeGreaterThan(0.95)
    expect(reading.metadata).toMatchObject({ format: 'pdf', pages: 4, ocr: true, ocr_pages: ['1-4'], ocr_page_count: 4 })
    expect(reading.ocr?.pageConfidence).toHaveLength(4)
    for (const c of reading.ocr!.pageConfidence) expect(c).toBeGreaterThan(0.6)
    expect(reading.metadata.ocr_confidence_min).toBe(Math.round(Math.min(...reading.ocr!.pageConfidence) * 1000) / 1000)
    expect(reading.metadata.ocr_confidence).toBeGreaterThan(0.6)
    expect(reading.metadata.ocr_low_confidence_pages).toBeUndefined()
    expect(progress.map((p) => p.done)).toEqual([1, 2, 3, 4])
    expect(progress.every((p) => p.total === 4 && p.file?.endsWith('handbook-scanned.pdf'))).toBe(true)
  }, 180_000)

  it('recognises only the page without text of a PDF that has both, keeping the text layer of the other', async () => {
    const reading = await readFileByFormat(join(OCR, 'manual-mixed.pdf'), { ocr: await reader() })
    if (reading.outcome !== 'read') throw new Error(JSON.stringify(reading))
    const [first, second] = pagesOf(reading.text)
    expect(first!.replace(/\s+/g, '')).toBe(text(join(OCR, 'manual-p1.pdftotext.txt')).replace(/\s+/g, ''))
    expect(charAccuracy(second!, text(join(OCR, 'manual-p2.pdftotext.txt')))).toBeGreaterThan(0.9)
    expect(reading.metadata).toMatchObject({ ocr: true, ocr_pages: ['2'], pages: 2 })
  }, 120_000)

  it('reads every page of a multi-page TIFF, and PNG, JPEG and WebP files', async () => {
    const ocr = await reader()
    const tiff = await readFileByFormat(join(OCR, 'handbook-p2-3.tiff'), { ocr })
    if (tiff.outcome !== 'read') throw new Error(JSON.stringify(tiff))
    expect(tiff.metadata).toMatchObject({ format: 'tiff', pages: 2, ocr: true, ocr_pages: ['1-2'] })
    expect(pagesOf(tiff.text)).toHaveLength(2)
    expect(charAccuracy(tiff.text, text(join(OCR, 'handbook-p2-3.pdftotext.txt')))).toBeGreaterThan(0.95)
    for (const [name, format, reference] of [['handbook-p1.png', 'png', 'handbook-p1'], ['manual-p1.jpg', 'jpeg', 'manual-p1'], ['manual-p1.webp', 'webp', 'manual-p1']] as const) {
      const reading = await readFileByFormat(join(OCR, name), { ocr })
      if (reading.outcome !== 'read') throw new Error(`${name}: ${JSON.stringify(reading)}`)
      expect(reading.metadata, name).toMatchObject({ format, ocr: true, ocr_pages: ['1'] })
      expect(reading.metadata.pages, name).toBeUndefined()
      expect(charAccuracy(reading.text, text(join(OCR, `${reference}.pdftotext.txt`))), name).toBeGreaterThan(0.9)
    }
  }, 180_000)

  it('flags pages below the confidence floor, keeping them', async () => {
    const reading = await readFileByFormat(join(OCR, 'handbook-p2-3.tiff'), { ocr: await reader({ minConfidence: 0.999 }) })
    if (reading.outcome !== 'read') throw new Error(JSON.stringify(reading))
    expect(reading.metadata.ocr_low_confidence_pages).toEqual(['1-2'])
    expect(reading.ocr?.lowConfidence).toEqual([1, 2])
    expect(pagesOf(reading.text)).toHaveLength(2)
  }, 120_000)

  it('refuses an image bomb, a truncated image and a mislabelled format, each with its reason', async () => {
    const ocr = await reader()
    expect(await readFileByFormat(join(OCR, 'bomb.png'), { ocr })).toEqual({ outcome: 'refused', reason: expect.stringMatching(/^9922x14032 pixels .* over the limit of 100\.0 MP \(OCR_MAX_IMAGE_PIXELS\); refused before decoding$/) })
    expect(await readFileByFormat(join(OCR, 'truncated.png'), { ocr })).toEqual({ outcome: 'refused', reason: expect.stringMatching(/^the image cannot be decoded/) })
    expect(await readFileByFormat(join(OCR, 'mislabelled.png'), { ocr })).toEqual({ outcome: 'refused', reason: expect.stringMatching(/^(not an image recall can read|unsupported image format)/) })
  }, 60_000)

  it('reports a page over its time limit and keeps the rest of the PDF', async () => {
    const reading = await readFileByFormat(join(OCR, 'manual-mixed.pdf'), { ocr: await reader({ engine: (await openOcrReaderWithTimeout(50)) }) })
    if (reading.outcome !== 'read') throw new Error(JSON.stringify(reading))
    expect(pagesOf(reading.text)[0]!.replace(/\s+/g, '')).toBe(text(join(OCR, 'manual-p1.pdftotext.txt')).replace(/\s+/g, ''))
    expect(pagesOf(reading.text)[1]).toBe('')
    expect(reading.metadata).toMatchObject({ ocr: false, ocr_pages: [], ocr_failed_pages: ['2'] })
    expect(reading.ocr?.failed).toEqual([{ page: 2, reason: expect.stringMatching(/over 0\.05 s \(OCR_PAGE_TIMEOUT_MS\)/) }])
  }, 60_000)
})

describe('files that need OCR where it cannot run', () => {
  it('skips a scanned PDF and refuses an image, saying why', async () => {
    const why = 'tesseract-not-installed cannot run: spawn tesseract-not-installed ENOENT'
    expect(await readFileByFormat(join(OCR, 'handbook-scanned.pdf'), { ocr: why })).toEqual({ outcome: 'skipped', reason: `no text in its 4 pages (a scanned PDF needs OCR, which cannot run here: ${why})` })
    expect(await readFileByFormat(join(OCR, 'handbook-p1.png'), { ocr: why })).toEqual({ outcome: 'refused', reason: `an image needs OCR, which cannot run here: ${why}` })
  })
})

async function openOcrReaderWithTimeout(timeoutMs: number) {
  const opened = await openOcrReader({ ...loadConfig({}).ocr, pageTimeoutMs: timeoutMs })
  if (typeof opened === 'string') throw new Error(opened)
  return opened.engine
}

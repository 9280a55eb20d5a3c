/**
 * A 1,000-page scan goes in: made in this test's setup by real tools (ImageMagick draws each page, img2pdf wraps the
 * pages as an image-only PDF, as test/fixtures/ocr/make.sh makes the short one), read by OCR, and checked as
 * `POST /ingest/documents` checks a document (its metadata under 8,192 bytes). Per-page OCR metadata passed that limit
 * near 600 pages. Tesseract reads English only here (`eng`), the pages are small: a few minutes on two cores.
 */
import { spawnSync } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { readDocumentFile, type FileDocument } from '../../src/corpus/files.js'
import { openOcrReader } from '../../src/corpus/formats/ocr-pages.js'

const PAGES = 1000
const font = '/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf'
const tools = spawnSync('tesseract', ['--list-langs'], { encoding: 'utf8' }).stdout?.split('\n').includes('eng') &&
  spawnSync('pdftoppm', ['-v']).status === 0 && spawnSync('convert', ['-version']).status === 0 && spawnSync('img2pdf', ['--version']).status === 0
if (!tools) console.warn('corpus/ocr-long-scan.test.ts skipped: it needs tesseract (eng), pdftoppm, ImageMagick and img2pdf (scripts/setup.sh installs them)')

describe.skipIf(!tools)(`a ${PAGES}-page scan`, () => {
  let dir: string
  let read: FileDocument
  let seconds: number

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'recall-long-scan-'))
    const args = ['-density', '150', '-units', 'PixelsPerInch']
    for (let n = 1; n <= PAGES; n++) {
      args.push('(', '-size', '640x120', 'xc:white', '-font', font, '-pointsize', '26', '-fill', 'black', '-draw', `text 40,70 'Ledger page ${n}'`, ')')
    }
    const tiff = join(dir, 'pages.tif')
    const drawn = spawnSync('convert', [...args, '-alpha', 'off', '-type', 'Grayscale', '-depth', '8', '-compress', 'zip', tiff], { encoding: 'utf8', maxBuffer: 1 << 24 })
    if (drawn.status !== 0) throw new Error(`convert: ${drawn.stderr}`)
    const wrapped = spawnSync('img2pdf', [tiff, '-o', join(dir, 'ledger.pdf')], { encoding: 'utf8' })
    if (wrapped.status !== 0) throw new Error(`img2pdf: ${wrapped.stderr}`)
    const ocr = await openOcrReader({ ...loadConfig({}).ocr, languages: 'eng', concurrency: 2 })
    if (typeof ocr === 'string') throw new Error(ocr)
    const started = performance.now()
    read = await readDocumentFile(join(dir, 'ledger.pdf'), dir, ocr)
    seconds = (performance.now() - started) / 1000
  }, 3_600_000)
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true })
  })

  it('is read whole, every page recognised, its OCR metadata a few ranges under the metadata limit', () => {
    if (read.outcome !== 'read') throw new Error(`${read.outcome}: ${read.reason}`)
    const { metadata } = read.document
    console.info(`${PAGES}-page scan read by OCR in ${seconds.toFixed(1)} s (${(seconds / PAGES * 1000).toFixed(0)} ms a page)`)
    expect(metadata).toMatchObject({ format: 'pdf', pages: PAGES, ocr: true, ocr_pages: [`1-${PAGES}`], ocr_page_count: PAGES })
    expect(metadata?.ocr_failed_pages).toBeUndefined()
    expect(Buffer.byteLength(JSON.stringify(metadata))).toBeLessThan(8192)
    const pages = read.document.text.split('\n\f\n')
    expect(pages).toHaveLength(PAGES)
    // each page says its own number (what ImageMagick drew on it)
    const numbered = pages.filter((p, i) => p.replace(/\s+/g, ' ').includes(`page ${i + 1}`)).length
    expect(numbered / PAGES).toBeGreaterThan(0.95)
  })
})

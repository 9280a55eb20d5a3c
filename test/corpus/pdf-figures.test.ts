/**
 * A PDF page is told a scan or a page with figures by where its images are drawn, not by how much text it has. The
 * files are made by real tools (test/fixtures/pdf-figures/make.sh: LibreOffice from flat ODT with ImageMagick's
 * pictures, poppler and img2pdf for the scans, Tesseract for a scan with a text layer); what is expected comes from
 * their construction (each picture's size in centimetres, the captions written, the page rendered) and from poppler's
 * text layer of the page the scans were made from.
 */
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import sharp from 'sharp'
import { getDocumentProxy } from 'unpdf'
import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { readFileByFormat, type FileReading } from '../../src/corpus/formats/index.js'
import { openOcrReader, type OcrReader } from '../../src/corpus/formats/ocr-pages.js'
import { readPdf } from '../../src/corpus/formats/pdf.js'
import { placePageImages, type PageImages } from '../../src/corpus/images/pdf-pictures.js'
import { charAccuracy } from '../helpers/char-accuracy.js'

const FIGURES = join(import.meta.dirname, '../fixtures/pdf-figures')
const reference = readFileSync(join(FIGURES, 'figure-pages-p1.pdftotext.txt'), 'utf8')
const pagesOf = (text: string) => text.split('\n\f\n')
const cm = (n: number) => (n / 2.54) * 72
const A4 = cm(21) * cm(29.7)

async function layouts(name: string): Promise<PageImages[]> {
  const pdf = await getDocumentProxy(new Uint8Array(readFileSync(join(FIGURES, name))))
  try {
    return await Promise.all(Array.from({ length: pdf.numPages }, (_, i) => placePageImages(pdf, i + 1)))
  } finally {
    await pdf.loadingTask.destroy()
  }
}

const read = (reading: FileReading) => {
  if (reading.outcome !== 'read') throw new Error(JSON.stringify(reading))
  return reading
}

describe('where a PDF page draws its images', () => {
  it('a figure is placed at the size LibreOffice was given (12 x 7.5 cm, 15 x 5.5 cm) and is no scan', async () => {
    const [text, screenshot, diagram] = await layouts('figure-pages.pdf')
    expect(text).toEqual({ scan: false, coverage: 0, figures: [] })
    for (const [page, [w, h]] of [[screenshot!, [12, 7.5]], [diagram!, [15, 5.5]]] as const) {
      expect(page.scan).toBe(false)
      expect(page.figures).toHaveLength(1)
      const [x0, y0, x1, y1] = page.figures[0]!.box
      expect(x1 - x0).toBeCloseTo(cm(w), 0)
      expect(y1 - y0).toBeCloseTo(cm(h), 0)
      // 2 cm from the left edge: the page margin
      expect(x0).toBeCloseTo(cm(2), 0)
      expect(page.coverage).toBeCloseTo((cm(w) * cm(h)) / A4, 3)
    }
  })

  it('a scan covers its page (img2pdf, and a full-page photo behind text); one fitted onto Letter covers 0.915; the largest figure of A4 with 2 cm margins 0.681', async () => {
    for (const name of ['scanned-page.pdf', 'photo-page.pdf', 'scan-with-text-layer.pdf']) {
      const [page] = await layouts(name)
      expect(page, name).toMatchObject({ scan: true, figures: [] })
      expect(page!.coverage, name).toBeCloseTo(1, 2)
    }
    const [letter] = await layouts('scan-on-letter.pdf')
    expect(letter!.scan).toBe(true)
    expect(letter!.coverage).toBeCloseTo(((27.94 / 29.7) * 21) / 21.59, 2)
    const [largest] = await layouts('largest-figure.pdf')
    expect(largest!.scan).toBe(false)
    expect(largest!.coverage).toBeCloseTo((17 * 25) / (21 * 29.7), 2)
  })
})

describe('a page with a figure and a short caption, without OCR', () => {
  it('keeps each figure as a picture of its page with its caption, and the caption as the page text', async () => {
    const reading = read(await readFileByFormat(join(FIGURES, 'figure-pages.pdf')))
    const pages = pagesOf(reading.text)
    expect(pages.slice(1)).toEqual(['图 3', 'Fig. 2'])
    expect(reading.images?.map((i) => ({ page: i.page, caption: i.caption }))).toEqual([{ page: 2, caption: '图 3' }, { page: 3, caption: 'Fig. 2' }])
    const sizes = await Promise.all(reading.images!.map(async (i) => {
      const { width, height } = await sharp(Buffer.from(i.data, 'base64')).metadata()
      return [width, height]
    }))
    // the pictures ImageMagick drew (test/fixtures/images/make.sh)
    expect(sizes).toEqual([[480, 300], [600, 220]])
  })
})

const languages = spawnSync('tesseract', ['--list-langs'], { encoding: 'utf8' })
const hasOcr = languages.status === 0 && /^chi_sim$/m.test(languages.stdout) && spawnSync('pdftoppm', ['-v']).status === 0
if (!hasOcr) console.warn('corpus/pdf-figures.test.ts: the OCR cases skipped: no tesseract with chi_sim, or no pdftoppm (scripts/setup.sh installs them)')

async function reader(): Promise<OcrReader> {
  const opened = await openOcrReader(loadConfig({}).ocr)
  if (typeof opened === 'string') throw new Error(opened)
  return opened
}

describe.skipIf(!hasOcr)('scans and figures with OCR', () => {
  it('a page with a figure and a caption under 10 characters is not recognised: the figure is a picture with its caption and its own text', async () => {
    const reading = read(await readFileByFormat(join(FIGURES, 'figure-pages.pdf'), { ocr: await reader() }))
    expect(reading.ocr).toBeUndefined()
    expect(reading.metadata.ocr).toBeUndefined()
    expect(pagesOf(reading.text).slice(1)).toEqual(['图 3', 'Fig. 2'])
    const [screenshot, diagram] = reading.images!
    expect(screenshot).toMatchObject({ page: 2, caption: '图 3' })
    expect(diagram).toMatchObject({ page: 3, caption: 'Fig. 2' })
    // the words ImageMagick wrote in each picture, read from the picture itself
    expect(screenshot!.ocr_text).toMatch(/Dark\s*mode/)
    expect(diagram!.ocr_text).toMatch(/Gateway/)
  }, 300_000)

  it('read without pictures, the same pages are still not recognised', async () => {
    const reading = read(await readPdf(new Uint8Array(readFileSync(join(FIGURES, 'figure-pages.pdf'))), await reader(), { pictures: false }))
    expect(reading.ocr).toBeUndefined()
    expect(reading.images).toBeUndefined()
  })

  it('a scanned page (img2pdf of the rendered page) is recognised as before, and its picture is not a picture of the document', async () => {
    const reading = read(await readFileByFormat(join(FIGURES, 'scanned-page.pdf'), { ocr: await reader() }))
    expect(reading.metadata).toMatchObject({ ocr: true, ocr_pages: ['1'] })
    expect(charAccuracy(reading.text, reference)).toBeGreaterThan(0.9)
    expect(reading.images).toBeUndefined()
  }, 300_000)

  it('a full-page photo under a text layer of a few characters ("- 7 -") is a scan: recognised, its photo not a picture', async () => {
    const reading = read(await readFileByFormat(join(FIGURES, 'photo-page.pdf'), { ocr: await reader() }))
    expect(reading.metadata).toMatchObject({ ocr: true, ocr_pages: ['1'] })
    // the page as rendered: the scanned text, and the "- 7 -" drawn on it
    expect(charAccuracy(reading.text, reference)).toBeGreaterThan(0.9)
    expect(reading.images).toBeUndefined()
  }, 300_000)

  it('a scan with a whole text layer (Tesseract\'s PDF) keeps its text layer, unrecognised, and its page image is not a picture', async () => {
    const reading = read(await readFileByFormat(join(FIGURES, 'scan-with-text-layer.pdf'), { ocr: await reader() }))
    expect(reading.ocr).toBeUndefined()
    expect(charAccuracy(reading.text, readFileSync(join(FIGURES, 'scan-with-text-layer.pdftotext.txt'), 'utf8'))).toBeGreaterThan(0.98)
    expect(reading.images).toBeUndefined()
  })
})

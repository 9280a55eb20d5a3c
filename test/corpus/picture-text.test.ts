/**
 * The pictures of a document hold text read by OCR (`ocr_text`, embedded into their image records). The pictures are
 * real files (test/fixtures/images/make.sh: ImageMagick drew the settings window's labels, so they are what OCR must read).
 */
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { readFileByFormat } from '../../src/corpus/formats/index.js'
import { openOcrReader } from '../../src/corpus/formats/ocr-pages.js'

const FILES = join(import.meta.dirname, '../fixtures/images')
const hasOcr = spawnSync('tesseract', ['--list-langs'], { encoding: 'utf8' }).stdout?.split('\n').includes('chi_sim') ?? false
if (!hasOcr) console.warn('corpus/picture-text.test.ts skipped: no tesseract with chi_sim (scripts/setup.sh installs it)')

describe.skipIf(!hasOcr)('text in pictures', () => {
  it('the screenshot of a Markdown file gets the labels drawn on it; the 16 px icon is not recognised', async () => {
    const ocr = await openOcrReader(loadConfig({}).ocr)
    if (typeof ocr === 'string') throw new Error(ocr)
    const reading = await readFileByFormat(join(FILES, 'guide.md'), { ocr })
    if (reading.outcome !== 'read') throw new Error(JSON.stringify(reading))
    const settings = reading.images!.find((i) => i.caption?.startsWith('图 1'))!
    for (const label of ['Display settings', 'Dark mode', 'Font size', 'Auto refresh']) expect(settings.ocr_text).toContain(label)
    const icon = reading.images!.find((i) => Buffer.from(i.data, 'base64').length < 1024)
    expect(icon?.ocr_text).toBeUndefined()
  }, 120_000)

  it('with OCR_PICTURES=false the pictures keep their alt text and caption but no text of their own; a scanned page is still recognised', async () => {
    const ocr = await openOcrReader(loadConfig({ OCR_PICTURES: 'false' }).ocr)
    if (typeof ocr === 'string') throw new Error(ocr)
    let recognitions = 0
    const counted = { ...ocr, engine: { ...ocr.engine, recognise: (...args: Parameters<typeof ocr.engine.recognise>) => (recognitions++, ocr.engine.recognise(...args)) } }
    const guide = await readFileByFormat(join(FILES, 'guide.md'), { ocr: counted })
    if (guide.outcome !== 'read') throw new Error(JSON.stringify(guide))
    const settings = guide.images!.find((i) => i.caption?.startsWith('图 1'))!
    expect(settings.alt).toBe('显示设置窗口')
    expect(guide.images!.every((i) => i.ocr_text === undefined)).toBe(true)
    expect(recognitions).toBe(0)
    // one page with a text layer, one page that is a picture of text (test/fixtures/ocr/make.sh): the second is recognised
    const mixed = await readFileByFormat(join(FILES, '../ocr/manual-mixed.pdf'), { ocr: counted })
    if (mixed.outcome !== 'read') throw new Error(JSON.stringify(mixed))
    expect(mixed.ocr?.pages).toEqual([2])
    expect(recognitions).toBe(1)
  }, 300_000)

  it('without OCR the pictures keep no text', async () => {
    const reading = await readFileByFormat(join(FILES, 'guide.md'))
    if (reading.outcome !== 'read') throw new Error(JSON.stringify(reading))
    expect(reading.images!.every((i) => i.ocr_text === undefined)).toBe(true)
  })
})

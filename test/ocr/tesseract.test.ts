/**
 * The OCR engine on real images (test/fixtures/ocr/make.sh renders them from the LibreOffice PDFs with poppler and
 * ImageMagick), each recognised text compared with poppler's text layer of the same page.
 */
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { afterAll, describe, expect, it } from 'vitest'
import { createOcrEngine, OcrError } from '../../src/ocr/index.js'
import { charAccuracy } from '../helpers/char-accuracy.js'

const fixture = (name: string) => readFileSync(new URL(`../fixtures/ocr/${name}`, import.meta.url))
const text = (name: string) => fixture(name).toString('utf8')

const languages = spawnSync('tesseract', ['--list-langs'], { encoding: 'utf8' })
const hasTesseract = languages.status === 0 && /^chi_sim$/m.test(languages.stdout) && /^eng$/m.test(languages.stdout)
if (!hasTesseract) console.warn('ocr/tesseract.test.ts skipped: no tesseract with chi_sim and eng (Debian: apt-get install -y tesseract-ocr tesseract-ocr-chi-sim tesseract-ocr-eng; scripts/setup.sh does)')

describe.skipIf(!hasTesseract)('the Tesseract OCR engine', () => {
  const engine = createOcrEngine({ concurrency: 2 })
  afterAll(() => engine.close())

  it('reports itself healthy with its version and languages', async () => {
    const health = await engine.health()
    expect(health).toMatchObject({ ok: true })
    expect(health.ok && health.engine).toMatch(/^tesseract 5\..*\(chi_sim\+eng\)$/)
  })

  it('reads a 150 dpi grayscale PNG of a Chinese page close to its text layer, with a high confidence', async () => {
    const result = await engine.recognise(fixture('handbook-p1.png'))
    expect(charAccuracy(result.text, text('handbook-p1.pdftotext.txt'))).toBeGreaterThan(0.95)
    expect(result.confidence).toBeGreaterThan(0.8)
    expect(result.confidence).toBeLessThanOrEqual(1)
    expect([result.width, result.height]).toEqual([1241, 1754]) // A4 (210 x 297 mm) at 150 dpi, as poppler rounds it
    // Chinese comes out without Tesseract's spaces between characters
    expect(result.text).toContain('激光打印机用户手册')
    const lines = result.blocks.flatMap((b) => b.lines)
    expect(lines.map((l) => l.text).join('\n')).toBe(result.text.replace(/\n\n/g, '\n'))
    for (let i = 1; i < lines.length; i++) expect(lines[i]!.box.top).toBeGreaterThan(lines[i - 1]!.box.top)
  }, 120_000)

  it('reads JPEG and WebP alike', async () => {
    const reference = text('manual-p1.pdftotext.txt')
    for (const name of ['manual-p1.jpg', 'manual-p1.webp']) {
      expect(charAccuracy((await engine.recognise(fixture(name))).text, reference), name).toBeGreaterThan(0.9)
    }
  }, 120_000)

  it('reads a page of two columns column by column, as the text layer reads it', async () => {
    const result = await engine.recognise(fixture('two-columns.png'))
    expect(charAccuracy(result.text, text('two-columns.pdftotext.txt'))).toBeGreaterThan(0.9)
    const flat = result.text.replace(/\s+/g, '')
    // the left column ends with the sentence on the placing of the printer; the right one starts on the toner drum
    const leftEnd = flat.indexOf('空调出风口的正下方')
    const rightStart = flat.indexOf('一体式硒鼓')
    expect(leftEnd).toBeGreaterThan(0)
    expect(rightStart).toBeGreaterThan(leftEnd)
    // and a line of the left column is never joined to the line beside it in the right one
    expect(flat.indexOf('按下电源键')).toBeLessThan(flat.indexOf('如果自检'))
  }, 120_000)

  it('refuses an image bomb from its header, before decoding, naming its size and the limit', async () => {
    const started = performance.now()
    const error = await engine.recognise(fixture('bomb.png')).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(OcrError)
    expect(error).toMatchObject({ failure: 'too-large' })
    expect((error as OcrError).reason).toMatch(/9922x14032 pixels \(139\.2 MP\).*100\.0 MP \(OCR_MAX_IMAGE_PIXELS\)/)
    expect(performance.now() - started).toBeLessThan(2_000) // decoding 139 MP would take far longer
  })

  it('refuses a truncated PNG as unreadable', async () => {
    await expect(engine.recognise(fixture('truncated.png'))).rejects.toMatchObject({ failure: 'unreadable', reason: expect.stringMatching(/cannot be decoded/) })
  })

  it('refuses a format it does not read (JPEG 2000) and bytes that are no image', async () => {
    await expect(engine.recognise(fixture('manual-p1.jp2'))).rejects.toMatchObject({ failure: 'unsupported' })
    await expect(engine.recognise(fixture('handbook-p1.pdftotext.txt'))).rejects.toMatchObject({ failure: 'unsupported', reason: expect.stringMatching(/not an image/) })
  })

  it('stops a recognition over its time limit and says so', async () => {
    const hasty = createOcrEngine({ timeoutMs: 50 })
    await expect(hasty.recognise(fixture('handbook-p1.png'))).rejects.toMatchObject({ failure: 'timeout', reason: expect.stringMatching(/over 0.05 s/) })
  })

  it('stops when its signal is aborted', async () => {
    const controller = new AbortController()
    const pending = engine.recognise(fixture('handbook-p1.png'), { signal: controller.signal })
    setTimeout(() => controller.abort(), 100)
    await expect(pending).rejects.toMatchObject({ failure: 'aborted' })
  }, 60_000)

  it('says why it cannot run when the executable is missing', async () => {
    const missing = createOcrEngine({ command: 'tesseract-not-installed' })
    const health = await missing.health()
    expect(health).toMatchObject({ ok: false, reason: expect.stringMatching(/tesseract-not-installed cannot run/) })
    await expect(missing.recognise(fixture('manual-p1.jpg'))).rejects.toMatchObject({ failure: 'engine' })
  })

  it('keeps the event loop free while it recognises', async () => {
    let ticks = 0
    const timer = setInterval(() => ticks++, 10)
    const started = performance.now()
    await engine.recognise(fixture('handbook-p1.png'))
    clearInterval(timer)
    const elapsed = performance.now() - started
    // a loop held by the recognition would tick only a few times; a free one ticks about every 10 ms
    expect(ticks).toBeGreaterThan(elapsed / 10 / 3)
  }, 120_000)
})

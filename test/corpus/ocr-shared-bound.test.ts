/**
 * One OCR reader shared by several readings (the service's upload jobs) holds OCR_CONCURRENCY across all of them: two
 * multi-page TIFFs (test/fixtures/ocr/make.sh, ImageMagick) read at once with a bound of 1 never have two pages in
 * recognition together. The real engine runs; a wrapper only counts the calls in progress.
 */
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { readFileByFormat } from '../../src/corpus/formats/index.js'
import { openOcrReader, type OcrReader } from '../../src/corpus/formats/ocr-pages.js'

const OCR = join(import.meta.dirname, '../fixtures/ocr')
const hasOcr = spawnSync('tesseract', ['--list-langs'], { encoding: 'utf8' }).stdout?.split('\n').includes('chi_sim') ?? false
if (!hasOcr) console.warn('corpus/ocr-shared-bound.test.ts skipped: no tesseract with chi_sim (scripts/setup.sh installs it)')

async function counted(concurrency: number): Promise<{ reader: OcrReader; most: () => number }> {
  const opened = await openOcrReader({ ...loadConfig({}).ocr, concurrency })
  if (typeof opened === 'string') throw new Error(opened)
  let now = 0
  let most = 0
  const engine = opened.engine
  const reader: OcrReader = {
    ...opened,
    engine: {
      ...engine,
      health: () => engine.health(),
      close: () => engine.close(),
      recognise: async (bytes, options) => {
        most = Math.max(most, ++now)
        try {
          return await engine.recognise(bytes, options)
        } finally {
          now--
        }
      }
    }
  }
  return { reader, most: () => most }
}

describe.skipIf(!hasOcr)('OCR_CONCURRENCY across readings that share a reader', () => {
  it('two files read at once with a bound of 1: one page in recognition at a time, both read whole', async () => {
    const { reader, most } = await counted(1)
    const [a, b] = await Promise.all([
      readFileByFormat(join(OCR, 'handbook-p2-3.tiff'), { ocr: reader }),
      readFileByFormat(join(OCR, 'handbook-p2-3.tiff'), { ocr: reader })
    ])
    expect(a.outcome).toBe('read')
    expect(b.outcome).toBe('read')
    expect(most()).toBe(1)
  }, 300_000)

  it('with a bound of 2 the same two files do overlap (the count sees concurrency when it is allowed)', async () => {
    const { reader, most } = await counted(2)
    await Promise.all([
      readFileByFormat(join(OCR, 'handbook-p2-3.tiff'), { ocr: reader }),
      readFileByFormat(join(OCR, 'handbook-p2-3.tiff'), { ocr: reader })
    ])
    expect(most()).toBe(2)
  }, 300_000)
})

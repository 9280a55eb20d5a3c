/**
 * Scanned copies of real text PDFs read back (docs/formats.md, "OCR"): each PDF's pages rendered by poppler
 * (`pdftoppm -gray`) at 150 and 300 dpi and wrapped by img2pdf as an image-only PDF (a "scan"), then read through
 * the file reader as `npm run ingest` reads it (pages without text rendered at OCR_DPI and recognised by
 * Tesseract). Per page: character accuracy against `pdftotext` of the original page (1 − edit distance / reference
 * length, NFKC, whitespace removed) and the seconds the whole file took divided by its pages.
 *
 *   nice -n 5 npx tsx bench/ocr-scans.ts [--out bench/results/ocr-scans.json]
 */
import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { loadConfig } from '../src/config.js'
import { readFileByFormat } from '../src/corpus/formats/index.js'
import { openOcrReader } from '../src/corpus/formats/ocr-pages.js'
import { charAccuracy } from '../test/helpers/char-accuracy.js'

const { values } = parseArgs({ options: { out: { type: 'string' } } })
const files = new URL('../test/fixtures/files/', import.meta.url).pathname
const ALL: Array<{ name: string; pdf: string; pages: [number, number] }> = [
  { name: 'handbook', pdf: join(files, 'handbook.pdf'), pages: [1, 4] },
  { name: 'manual', pdf: join(files, 'manual.pdf'), pages: [1, 2] },
  { name: 'libtasn1', pdf: '/usr/share/doc/libtasn1-doc/libtasn1.pdf', pages: [5, 6] },
  { name: 'shared-mime-info', pdf: '/usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf', pages: [2, 3] }
]
const SOURCES = ALL.filter((s) => existsSync(s.pdf))
const config = loadConfig()
const ocr = await openOcrReader(config.ocr)
if (typeof ocr === 'string') throw new Error(ocr)
const work = mkdtempSync(join(tmpdir(), 'ocr-scans-'))
const rows: Array<Record<string, unknown>> = []
const load = [loadavg()[0]!]
try {
  for (const dpi of [150, 300]) {
    for (const source of SOURCES) {
      const root = join(work, `${source.name}-${dpi}`)
      execFileSync('pdftoppm', ['-r', String(dpi), '-gray', '-png', '-f', String(source.pages[0]), '-l', String(source.pages[1]), source.pdf, root])
      const images = readdirSync(work).filter((f) => f.startsWith(`${source.name}-${dpi}-`) && f.endsWith('.png')).sort().map((f) => join(work, f))
      const scan = `${root}.pdf`
      execFileSync('img2pdf', [...images, '-o', scan])
      const started = performance.now()
      const reading = await readFileByFormat(scan, { ocr })
      const seconds = (performance.now() - started) / 1000
      if (reading.outcome !== 'read') throw new Error(`${scan}: ${reading.reason}`)
      const pages = reading.text.split('\n\f\n')
      for (let i = 0; i < pages.length; i++) {
        const n = source.pages[0] + i
        const reference = execFileSync('pdftotext', ['-enc', 'UTF-8', '-f', String(n), '-l', String(n), source.pdf, '-'], { encoding: 'utf8' })
        const row = { scan_dpi: dpi, source: source.name, page: n, accuracy: Math.round(charAccuracy(pages[i]!, reference) * 1e4) / 1e4, confidence: Number((reading.metadata.ocr_page_confidence as string[])[i]), seconds_per_page: Math.round(seconds / pages.length * 100) / 100 }
        rows.push(row)
        console.log(JSON.stringify(row))
      }
      load.push(loadavg()[0]!)
    }
  }
} finally {
  rmSync(work, { recursive: true, force: true })
}
const summary = [150, 300].map((dpi) => {
  const of = rows.filter((r) => r.scan_dpi === dpi)
  const mean = (k: string) => Math.round(of.reduce((s, r) => s + (r[k] as number), 0) / of.length * 1000) / 1000
  return { scan_dpi: dpi, pages: of.length, accuracy: mean('accuracy'), min_accuracy: Math.min(...of.map((r) => r.accuracy as number)), seconds_per_page: mean('seconds_per_page') }
})
console.log(JSON.stringify(summary))
const result = { command: 'npx tsx bench/ocr-scans.ts', ocr_dpi: config.ocr.dpi, languages: config.ocr.languages, concurrency: config.ocr.concurrency, load_1min: { min: Math.min(...load), max: Math.max(...load) }, summary, pages: rows }
if (values.out) writeFileSync(values.out, `${JSON.stringify(result, null, 2)}\n`)

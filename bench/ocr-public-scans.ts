/**
 * Character accuracy of the service's OCR on real scans from a public repository with ground truth: the page images
 * of scribeocr/ocr-benchmark (`img/<name>.png`, English: court depositions, filings, multi-column pages), each read as
 * `npm run ingest` reads an image file (Tesseract, the configured OCR_LANGUAGES), against the words of its hand-checked
 * hOCR (`ground_truth/<name>.truth.hocr`, every `ocrx_word` in file order). Accuracy as bench/ocr-scans.ts: 1 − edit
 * distance / reference length, NFKC, whitespace removed; a multi-column page also pays for any reading-order
 * difference. The repository is read in place (a checkout or a bare git directory), never copied into this one.
 *
 *   nice -n 5 npx tsx bench/ocr-public-scans.ts --repo DIR [--pages deposition_01,filing_01] [--out bench/results/ocr-public-scans.json]
 */
import { execFileSync } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { loadConfig } from '../src/config.js'
import { readFileByFormat } from '../src/corpus/formats/index.js'
import { openOcrReader } from '../src/corpus/formats/ocr-pages.js'
import { charAccuracy } from '../test/helpers/char-accuracy.js'

const { values } = parseArgs({
  options: { repo: { type: 'string' }, pages: { type: 'string', default: 'deposition_01,deposition_02,filing_01,filing_03,multicol_01,multicol_02' }, out: { type: 'string' } }
})
if (!values.repo) throw new Error('--repo DIR: a checkout (or bare git directory) of scribeocr/ocr-benchmark')
const bare = !existsSync(join(values.repo, 'img'))
const show = (path: string) => bare
  ? execFileSync('git', ['--git-dir', values.repo!, 'show', `HEAD:${path}`], { maxBuffer: 64 * 1024 * 1024 })
  : execFileSync('cat', [join(values.repo!, path)], { maxBuffer: 64 * 1024 * 1024 })
const commit = bare ? execFileSync('git', ['--git-dir', values.repo, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim() : undefined
const decode = (s: string) => s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;|&apos;/g, "'").replace(/&amp;/g, '&')
const truthWords = (hocr: string) => [...hocr.matchAll(/<span[^>]*class=['"]ocrx_word['"][^>]*>([\s\S]*?)<\/span>/g)].map((m) => decode(m[1]!.replace(/<[^>]+>/g, '')))

const config = loadConfig()
const ocr = await openOcrReader(config.ocr)
if (typeof ocr === 'string') throw new Error(ocr)
const work = mkdtempSync(join(tmpdir(), 'ocr-public-'))
const rows: Array<Record<string, unknown>> = []
const load = [loadavg()[0]!]
try {
  for (const name of values.pages.split(',')) {
    const image = join(work, `${name}.png`)
    writeFileSync(image, show(`img/${name}.png`))
    const reference = truthWords(show(`ground_truth/${name}.truth.hocr`).toString('utf8')).join(' ')
    const started = performance.now()
    const reading = await readFileByFormat(image, { ocr })
    const seconds = (performance.now() - started) / 1000
    if (reading.outcome !== 'read') {
      // a page refused (e.g. over OCR_PAGE_TIMEOUT_MS on a busy machine) is a row of its own, not the end of the run
      rows.push({ page: name, refused: reading.reason, seconds: Math.round(seconds * 10) / 10 })
      console.error(JSON.stringify(rows.at(-1)))
      continue
    }
    const row = { page: name, reference_chars: reference.replace(/\s+/g, '').length, accuracy: Math.round(charAccuracy(reading.text, reference) * 1e4) / 1e4, confidence: reading.metadata.ocr_confidence, seconds: Math.round(seconds * 10) / 10 }
    rows.push(row)
    console.error(JSON.stringify(row))
    load.push(loadavg()[0]!)
  }
} finally {
  rmSync(work, { recursive: true, force: true })
}
const read = rows.filter((r) => r.accuracy !== undefined)
const mean = (k: string) => Math.round(read.reduce((s, r) => s + (r[k] as number), 0) / read.length * 1000) / 1000
const result = {
  command: `nice -n 5 npx tsx bench/ocr-public-scans.ts ${process.argv.slice(2).join(' ')}`, repository: 'scribeocr/ocr-benchmark', ...(commit ? { commit } : {}),
  languages: config.ocr.languages, pages: rows.length, refused: rows.length - read.length, accuracy: mean('accuracy'), min_accuracy: Math.min(...read.map((r) => r.accuracy as number)), seconds_per_page: mean('seconds'),
  load_1min: { min: Math.round(Math.min(...load) * 100) / 100, max: Math.round(Math.max(...load) * 100) / 100 }, rows, node: process.version, date: new Date().toISOString()
}
console.log(JSON.stringify(result, null, 2))
if (values.out) writeFileSync(values.out, `${JSON.stringify(result, null, 2)}\n`)

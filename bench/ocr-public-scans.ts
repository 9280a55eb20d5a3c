/**
 * Character accuracy of the service's OCR on real scans from a public repository with ground truth: the page images
 * of scribeocr/ocr-benchmark (`img/<name>.png`, English: court depositions, filings, multi-column pages), each read as
 * `npm run ingest` reads an image file (Tesseract, the configured OCR_LANGUAGES), against the words of its hand-checked
 * hOCR (`ground_truth/<name>.truth.hocr`, every `ocrx_word` in file order). Accuracy as bench/ocr-scans.ts: 1 − edit
 * distance / reference length, NFKC, whitespace removed; a multi-column page also pays for any reading-order
 * difference. Two more columns tell reading order from recognition: `accuracy_in_rows` is the same measure against the
 * reference's words put in rows across the page (what an engine reading each row through every column gives), and
 * `words_found` the share of the reference's words (as a multiset) found among the recognised ones, in any order.
 * The repository is read in place (a checkout or a bare git directory), never copied here.
 *
 *   nice -n 19 npx tsx bench/ocr-public-scans.ts --repo DIR [--pages deposition_01,filing_01] [--out bench/results/ocr-public-scans.json]
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
/**
 * The reference's words in rows across the whole page, as an engine that reads each row through every column does:
 * words sorted by their vertical centre, a new row where a centre lies more than half the median word height below the
 * row's first, each row left to right (the words' hOCR `bbox`).
 */
function truthInRows(hocr: string): string {
  const words = [...hocr.matchAll(/<span[^>]*class=['"]ocrx_word['"][^>]*title=['"][^'"]*bbox (\d+) (\d+) (\d+) (\d+)[^'"]*['"][^>]*>([\s\S]*?)<\/span>/g)]
    .map((m) => ({ x: Number(m[1]), y: (Number(m[2]) + Number(m[4])) / 2, h: Number(m[4]) - Number(m[2]), text: decode(m[5]!.replace(/<[^>]+>/g, '')) }))
    .sort((a, b) => a.y - b.y)
  const half = (words.map((w) => w.h).sort((a, b) => a - b)[words.length >> 1] ?? 0) / 2
  const rows: Array<typeof words> = []
  for (const w of words) {
    const row = rows.at(-1)
    if (row && Math.abs(w.y - row[0]!.y) <= half) row.push(w)
    else rows.push([w])
  }
  return rows.map((r) => r.sort((a, b) => a.x - b.x).map((w) => w.text).join(' ')).join('\n')
}
/** The share of `reference`'s words (a multiset, NFKC) that are among `recognised`'s. */
function wordsFound(recognised: string, reference: string): number {
  const words = (t: string) => t.normalize('NFKC').split(/\s+/).filter((w) => w !== '')
  const held = new Map<string, number>()
  for (const w of words(recognised)) held.set(w, (held.get(w) ?? 0) + 1)
  const wanted = words(reference)
  let found = 0
  for (const w of wanted) {
    const n = held.get(w) ?? 0
    if (n > 0) { found++; held.set(w, n - 1) }
  }
  return wanted.length === 0 ? 1 : found / wanted.length
}

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
    const hocr = show(`ground_truth/${name}.truth.hocr`).toString('utf8')
    const reference = truthWords(hocr).join(' ')
    const started = performance.now()
    const reading = await readFileByFormat(image, { ocr })
    const seconds = (performance.now() - started) / 1000
    if (reading.outcome !== 'read') {
      // a page refused (e.g. over OCR_PAGE_TIMEOUT_MS on a busy machine) is a row of its own, not the end of the run
      rows.push({ page: name, refused: reading.reason, seconds: Math.round(seconds * 10) / 10 })
      console.error(JSON.stringify(rows.at(-1)))
      continue
    }
    const row = { page: name, reference_chars: reference.replace(/\s+/g, '').length, accuracy: Math.round(charAccuracy(reading.text, reference) * 1e4) / 1e4,
      accuracy_in_rows: Math.round(charAccuracy(reading.text, truthInRows(hocr)) * 1e4) / 1e4,
      words_found: Math.round(wordsFound(reading.text, reference) * 1e4) / 1e4, confidence: reading.metadata.ocr_confidence, seconds: Math.round(seconds * 10) / 10 }
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
  command: `nice -n 19 npx tsx bench/ocr-public-scans.ts ${process.argv.slice(2).join(' ')}`, repository: 'scribeocr/ocr-benchmark', ...(commit ? { commit } : {}),
  languages: config.ocr.languages, pages: rows.length, refused: rows.length - read.length, accuracy: mean('accuracy'), min_accuracy: Math.min(...read.map((r) => r.accuracy as number)), seconds_per_page: mean('seconds'),
  load_1min: { min: Math.round(Math.min(...load) * 100) / 100, max: Math.round(Math.max(...load) * 100) / 100 }, rows, node: process.version, date: new Date().toISOString()
}
console.log(JSON.stringify(result, null, 2))
if (values.out) writeFileSync(values.out, `${JSON.stringify(result, null, 2)}\n`)

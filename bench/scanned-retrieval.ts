/**
 * Retrieval over scanned copies against the same questions over text copies (issue 42, docs/formats.md "Scanned
 * copies: retrieval"). The ten regulations under `--public` (default /work/relcorpus, Markdown) are made into text PDFs
 * by LibreOffice (Markdown → HTML by micromark, HTML → PDF by `soffice`); each PDF's pages are rendered by poppler
 * (`pdftoppm -gray`) at 150 and 300 dpi and wrapped by img2pdf as image-only PDFs. Each copy is read as `npm run
 * ingest` reads a file (the PDF reader, OCR on at the configured OCR_DPI) and ingested into a corpus of its own (the
 * embedded stores, the real model); the 61 questions of bench/judged/relations.jsonl are asked of every corpus
 * (hybrid, top 10).
 *
 * The questions are judged by chunk of the Markdown corpus, whose chunk ids the PDF copies do not share: a retrieved
 * chunk is judged by its text. It finds a judged chunk when at least half of that chunk's character bigrams are in it
 * (it holds the passage) or at least half of its own are in the judged chunk (it is a piece of the passage, cut at a
 * page break); NFKC, whitespace and punctuation removed. The rule is checked on the Markdown corpus itself, where ids
 * judge too (`judge_check`). Ratios scanned ÷ text of R@5 and MRR@10 with 95% paired bootstrap intervals (1,000
 * resamples of the questions, seed 42, the ratio of means per resample).
 *
 *   nice -n 5 npx tsx bench/scanned-retrieval.ts [--public DIR] [--work DIR] [--out bench/results/scanned-retrieval.json]
 *
 * `--work DIR` keeps the PDFs and each copy's reading (`reading-<copy>.json`), so a second run asks again without OCR;
 * `--read-only scan-300` only reads that copy into `--work` (run beside another process reading another copy).
 */
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { parseArgs } from 'node:util'
import { micromark } from 'micromark'
import { loadConfig } from '../src/config.js'
import type { DocumentInput } from '../src/corpus/documents/input.js'
import { readDocumentFile, readDocuments } from '../src/corpus/files.js'
import { openOcrReader } from '../src/corpus/formats/ocr-pages.js'
import { parseJudgedSet } from '../src/evaluation/judged-set.js'
import { bootstrapMean, resamples } from '../src/evaluation/statistics.js'
import { buildHybridCorpus } from './lib/corpus.js'
import { evaluate } from './lib/metrics.js'

const { values } = parseArgs({ options: { public: { type: 'string', default: '/work/relcorpus' }, work: { type: 'string' }, out: { type: 'string' }, 'read-only': { type: 'string' } } })
const work = values.work ?? join(tmpdir(), `scanned-retrieval-${process.pid}`)
mkdirSync(work, { recursive: true })
const load: number[] = [loadavg()[0]!]
const round = (x: number, d = 1000) => Math.round(x * d) / d

// 1. text PDFs by LibreOffice, then the scans
const sources = readdirSync(values.public).filter((f) => f.endsWith('.md')).sort()
const pdfDir = join(work, 'text')
if (!existsSync(pdfDir)) {
  const htmlDir = join(work, 'html')
  mkdirSync(htmlDir, { recursive: true })
  for (const f of sources) {
    const name = basename(f, '.md')
    const body = micromark(readFileSync(join(values.public, f), 'utf8'))
    writeFileSync(join(htmlDir, `${name}.html`), `<!doctype html><html><head><meta charset="utf-8"><title>${name}</title></head><body>${body}</body></html>\n`)
  }
  execFileSync('soffice', ['--headless', '--writer', '--convert-to', 'pdf', '--outdir', pdfDir, ...sources.map((f) => join(htmlDir, `${basename(f, '.md')}.html`))], { stdio: 'ignore' })
}
const texts = readdirSync(pdfDir).filter((f) => f.endsWith('.pdf')).sort()
if (texts.length !== sources.length) throw new Error(`LibreOffice made ${texts.length} PDFs of ${sources.length} files`)
const pageCount = (pdf: string) => Number(/Pages:\s+(\d+)/.exec(execFileSync('pdfinfo', [pdf], { encoding: 'utf8' }))![1])
const DPIS = [150, 300]
for (const dpi of DPIS) {
  const dir = join(work, `scan-${dpi}`)
  if (existsSync(dir)) continue
  mkdirSync(join(dir, 'pages'), { recursive: true })
  for (const f of texts) {
    const root = join(dir, 'pages', basename(f, '.pdf'))
    execFileSync('pdftoppm', ['-r', String(dpi), '-gray', '-png', join(pdfDir, f), root])
    const pages = readdirSync(join(dir, 'pages')).filter((p) => p.startsWith(`${basename(f, '.pdf')}-`) && p.endsWith('.png')).sort().map((p) => join(dir, 'pages', p))
    execFileSync('img2pdf', [...pages, '-o', join(dir, f)])
  }
}

// 2. each copy read as the CLI reads it (OCR on), kept in --work
const config = loadConfig()
const ocr = await openOcrReader(config.ocr)
if (typeof ocr === 'string') throw new Error(ocr)
const copies = [{ name: 'text', dir: pdfDir }, ...DPIS.map((dpi) => ({ name: `scan-${dpi}`, dir: join(work, `scan-${dpi}`) }))]
const readings: Record<string, DocumentInput[]> = {}
const readSeconds: Record<string, { seconds: number; pages: number }> = {}
for (const copy of copies) {
  // --read-only COPY reads that copy into --work and stops (a second process can read one copy while another reads the next)
  if (values['read-only'] && copy.name !== values['read-only']) continue
  const kept = join(work, `reading-${copy.name}.json`)
  if (existsSync(kept)) {
    const kept_ = JSON.parse(readFileSync(kept, 'utf8')) as { documents: DocumentInput[]; seconds: number; pages: number }
    readings[copy.name] = kept_.documents
    readSeconds[copy.name] = { seconds: kept_.seconds, pages: kept_.pages }
    continue
  }
  const started = performance.now()
  const documents: DocumentInput[] = []
  let pages = 0
  for (const f of texts) {
    const read = await readDocumentFile(join(copy.dir, f), copy.dir, ocr)
    if (read.outcome !== 'read') throw new Error(`${copy.name}/${f}: ${read.outcome} ${read.reason}`)
    documents.push(read.document)
    pages += pageCount(join(copy.dir, f))
    console.error(`${copy.name} ${f} read (${Math.round((performance.now() - started) / 1000)} s so far)`)
  }
  readings[copy.name] = documents
  readSeconds[copy.name] = { seconds: round((performance.now() - started) / 1000, 10), pages }
  writeFileSync(kept, JSON.stringify({ documents, ...readSeconds[copy.name] }))
  load.push(loadavg()[0]!)
}

if (values['read-only']) process.exit(0)

// 3. the judge: by text, against the Markdown corpus's judged chunks
const comparable = (s: string) => s.normalize('NFKC').replace(/[\s\p{P}\p{S}]+/gu, '')
const bigrams = (s: string) => {
  const c = comparable(s)
  const out = new Set<string>()
  for (let i = 0; i + 1 < c.length; i++) out.add(c.slice(i, i + 2))
  return out
}
const shared = (a: Set<string>, b: Set<string>) => {
  let n = 0
  for (const x of a) if (b.has(x)) n++
  return n
}
const questions = parseJudgedSet(readFileSync('bench/judged/relations.jsonl', 'utf8'))
const markdown = await buildHybridCorpus(await readDocuments([values.public]))
const judged = new Map<string, Set<string>>()
for (const q of questions) {
  for (const id of q.relevant.ids ?? []) {
    const chunk = markdown.library.chunk(id)
    if (!chunk) throw new Error(`judged chunk ${id} is not in the Markdown corpus`)
    judged.set(id, bigrams(chunk.text))
  }
}
/** The judged chunks a retrieved text finds (see the header). */
const finds = (text: string, candidates: readonly string[]) => {
  const own = bigrams(text)
  return candidates.filter((id) => {
    const passage = judged.get(id)!
    const n = shared(passage, own)
    return n >= 0.5 * passage.size || (own.size > 0 && n >= 0.5 * own.size)
  })
}
type Corpus = Awaited<ReturnType<typeof buildHybridCorpus>>
async function ask(corpus: Corpus, byText: boolean) {
  const runs: Array<{ ranked: string[]; relevant: string[] }> = []
  for (const q of questions) {
    const relevant = q.relevant.ids ?? []
    const { items } = await corpus.adapter.retrieve({ query: q.query, top_k: 10 })
    const ranked: string[] = []
    for (const item of items) {
      const ids = byText ? finds(item.text, relevant) : relevant.includes(item.id) ? [item.id] : []
      // a retrieved chunk that finds no judged chunk not found before holds a place of its own
      const fresh = ids.filter((id) => !ranked.includes(id))
      ranked.push(...(fresh.length > 0 ? fresh : [`other:${item.id}`]))
    }
    runs.push({ ranked, relevant })
  }
  return runs
}
const perQuestion = (runs: ReadonlyArray<{ ranked: string[]; relevant: string[] }>) => runs.map((r) => evaluate([r]))
const judgeCheck = { by_id: evaluate(await ask(markdown, false)), by_text: evaluate(await ask(markdown, true)) }
await markdown.close()
console.error('judge check on the Markdown corpus', JSON.stringify(judgeCheck))

const results: Record<string, { figures: ReturnType<typeof evaluate>; per: ReturnType<typeof evaluate>[]; chunks: number; ingest_seconds: number }> = {}
for (const copy of copies) {
  const corpus = await buildHybridCorpus(readings[copy.name]!)
  const runs = await ask(corpus, true)
  results[copy.name] = { figures: evaluate(runs), per: perQuestion(runs), chunks: corpus.library.chunkCount, ingest_seconds: round(corpus.ingestSeconds, 10) }
  await corpus.close()
  load.push(loadavg()[0]!)
  console.error(copy.name, JSON.stringify(results[copy.name]!.figures))
}

// 4. ratios scanned ÷ text with paired bootstrap intervals
const samples = resamples(questions.length, 1000, 42)
const ratio = (scan: string, metric: 'recall_at_5' | 'mrr_at_10') => {
  const s = results[scan]!.per.map((p) => p[metric])
  const t = results.text!.per.map((p) => p[metric])
  const ratios = samples.map((idx) => {
    let a = 0, b = 0
    for (const i of idx) { a += s[i]!; b += t[i]! }
    return b === 0 ? 0 : a / b
  }).sort((x, y) => x - y)
  const mean = (xs: number[]) => xs.reduce((u, v) => u + v, 0) / xs.length
  return { scanned: round(mean(s), 10000), text: round(mean(t), 10000), ratio: round(mean(s) / mean(t)), ci_low: round(ratios[24]!), ci_high: round(ratios[974]!), difference: bootstrapMean(s.map((x, i) => x - t[i]!), samples) }
}
const report = {
  command: `nice -n 5 npx tsx bench/scanned-retrieval.ts ${process.argv.slice(2).join(' ')}`.trim(),
  corpus: `${sources.length} regulations (${values.public}), LibreOffice PDFs`, questions: questions.length,
  judged: 'by text: a retrieved chunk finds a judged Markdown chunk when ≥ 50% of either one\'s character bigrams are in the other',
  ocr: { dpi: config.ocr.dpi, languages: config.ocr.languages, concurrency: config.ocr.concurrency },
  judge_check: judgeCheck,
  copies: Object.fromEntries(copies.map((c) => [c.name, { ...results[c.name]!.figures, chunks: results[c.name]!.chunks, ingest_seconds: results[c.name]!.ingest_seconds, read: readSeconds[c.name] }])),
  scanned_over_text: Object.fromEntries(DPIS.map((dpi) => [`${dpi}_dpi`, { recall_at_5: ratio(`scan-${dpi}`, 'recall_at_5'), mrr_at_10: ratio(`scan-${dpi}`, 'mrr_at_10') }])),
  load_1min: { min: round(Math.min(...load), 100), max: round(Math.max(...load), 100) }, node: process.version, date: new Date().toISOString()
}
console.log(JSON.stringify(report, null, 2))
if (values.out) writeFileSync(values.out, `${JSON.stringify(report, null, 2)}\n`)

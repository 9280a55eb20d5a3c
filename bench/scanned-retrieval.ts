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
 * Each scanned page's character accuracy against the same page of the text PDF (`pdftotext`; NFKC, whitespace removed,
 * as bench/ocr-scans.ts), and seconds per page (each file's reading time over its pages), are reported beside.
 *
 *   nice -n 19 npx tsx bench/scanned-retrieval.ts [--public DIR] [--work DIR] [--out bench/results/scanned-retrieval.json]
 *
 * `--partial` (a machine too busy to OCR every page in time): a scanned copy not wholly read answers with the files read so
 * far scanned and the others as text, and its ratio is taken over the questions whose judged chunks are all in its
 * scanned files (both copies over those questions, in corpora of the same ten documents).
 * `--work DIR` keeps the PDFs and each file's reading (`reading-<copy>/<file>.json`), so a second run asks again without
 * OCR; `--read-only scan-300` only reads that copy into `--work`, and several such processes share its files (each file
 * claimed by one), so that the OCR of a copy can take more than one process.
 */
import { execFileSync } from 'node:child_process'
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
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
import { charAccuracy } from '../test/helpers/char-accuracy.js'
import { buildHybridCorpus } from './lib/corpus.js'
import { evaluate } from './lib/metrics.js'

const { values } = parseArgs({ options: { public: { type: 'string', default: '/work/relcorpus' }, work: { type: 'string' }, out: { type: 'string' }, 'read-only': { type: 'string' }, partial: { type: 'boolean', default: false } } })
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
/** Each file's reading time and pages, for a copy read file by file. */
const fileSeconds: Record<string, Array<{ file: string; seconds: number; pages: number }>> = {}
/** The files a copy read with `--partial` when it was not wholly read (the others are their text copies). */
const scannedFiles: Record<string, string[]> = {}
for (const copy of copies) {
  // --read-only COPY reads that copy into --work and stops: several processes can read one copy, each file claimed by one
  if (values['read-only'] && copy.name !== values['read-only']) continue
  const kept = join(work, `reading-${copy.name}.json`)
  if (existsSync(kept)) {
    const whole = JSON.parse(readFileSync(kept, 'utf8')) as { documents: DocumentInput[]; seconds: number; pages: number }
    readings[copy.name] = whole.documents
    readSeconds[copy.name] = { seconds: whole.seconds, pages: whole.pages }
    continue
  }
  const files = join(work, `reading-${copy.name}`)
  mkdirSync(files, { recursive: true })
  type FileReading = { document: DocumentInput; seconds: number; pages: number }
  const done = (f: string) => existsSync(join(files, `${f}.json`))
  for (const f of texts) {
    if (done(f)) continue
    try {
      closeSync(openSync(join(files, `${f}.claim`), 'wx'))
    } catch {
      continue // another process reads it
    }
    const started = performance.now()
    const read = await readDocumentFile(join(copy.dir, f), copy.dir, ocr)
    if (read.outcome !== 'read') throw new Error(`${copy.name}/${f}: ${read.outcome} ${read.reason}`)
    const reading: FileReading = { document: read.document, seconds: (performance.now() - started) / 1000, pages: pageCount(join(copy.dir, f)) }
    writeFileSync(join(files, `${f}.json`), JSON.stringify(reading))
    console.error(`${copy.name} ${f} read in ${Math.round(reading.seconds)} s`)
    load.push(loadavg()[0]!)
  }
  if (values.partial && !values['read-only']) {
    // a copy not wholly read: the files read so far stand in for their text copies, the rest stay text (see the header)
    const read = texts.filter(done)
    scannedFiles[copy.name] = read
    const each = read.map((f) => JSON.parse(readFileSync(join(files, `${f}.json`), 'utf8')) as FileReading)
    readings[copy.name] = texts.map((f, i) => (done(f) ? each[read.indexOf(f)]!.document : readings.text![i]!))
    readSeconds[copy.name] = { seconds: round(each.reduce((t, r) => t + r.seconds, 0), 10), pages: each.reduce((t, r) => t + r.pages, 0) }
    continue
  }
  while (!texts.every(done)) await new Promise((r) => setTimeout(r, 5000))
  const each = texts.map((f) => JSON.parse(readFileSync(join(files, `${f}.json`), 'utf8')) as FileReading)
  readings[copy.name] = each.map((r) => r.document)
  fileSeconds[copy.name] = each.map((r, i) => ({ file: texts[i]!, seconds: round(r.seconds, 10), pages: r.pages }))
  readSeconds[copy.name] = { seconds: round(each.reduce((t, r) => t + r.seconds, 0), 10), pages: each.reduce((t, r) => t + r.pages, 0) }
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
/** The questions a copy answers from its scans: all, or with `--partial` those whose judged chunks are all in scanned files. */
const askedOf = (scan: string) => {
  const files = scannedFiles[scan]
  if (!files) return questions.map((_, i) => i)
  const docs = new Set(files.map((f) => basename(f, '.pdf')))
  return questions.flatMap((q, i) => ((q.relevant.ids ?? []).every((id) => docs.has(id.slice(0, id.lastIndexOf('#')))) ? [i] : []))
}
const ratio = (scan: string, metric: 'recall_at_5' | 'mrr_at_10') => {
  const asked = askedOf(scan)
  const s = asked.map((i) => results[scan]!.per[i]![metric])
  const t = asked.map((i) => results.text!.per[i]![metric])
  const samples = resamples(asked.length, 1000, 42)
  const ratios = samples.map((idx) => {
    let a = 0, b = 0
    for (const i of idx) { a += s[i]!; b += t[i]! }
    return b === 0 ? 0 : a / b
  }).sort((x, y) => x - y)
  const mean = (xs: number[]) => xs.reduce((u, v) => u + v, 0) / xs.length
  return { scanned: round(mean(s), 10000), text: round(mean(t), 10000), ratio: round(mean(s) / mean(t)), ci_low: round(ratios[24]!), ci_high: round(ratios[974]!), difference: bootstrapMean(s.map((x, i) => x - t[i]!), samples) }
}
// 5. each scanned page's character accuracy against the text PDF's own page (pdftotext), as bench/ocr-scans.ts measures it
/** A recognised line the reader escaped for Markdown (src/corpus/formats/recognised-text.ts) compared as recognised. */
const unescaped = (t: string) => t.split('\n').map((l) => l.replace(/^\\(?=[#=*_`~<[-])/, '')).join('\n')
const pageAccuracy = Object.fromEntries(DPIS.filter((dpi) => !scannedFiles[`scan-${dpi}`]).map((dpi) => {
  const copy = `scan-${dpi}`
  const rows = texts.flatMap((f, i) => {
    const pages = readings[copy]![i]!.text.split('\f')
    const count = pageCount(join(pdfDir, f))
    if (pages.length !== count) throw new Error(`${copy}/${f}: ${pages.length} pages of text, the PDF has ${count}`)
    return pages.map((text, p) => {
      const reference = execFileSync('pdftotext', ['-f', String(p + 1), '-l', String(p + 1), '-enc', 'UTF-8', join(pdfDir, f), '-'], { encoding: 'utf8' })
      return { file: basename(f, '.pdf'), page: p + 1, chars: reference.replace(/\s+/g, '').length, accuracy: round(charAccuracy(unescaped(text), reference), 10000) }
    })
  })
  const accuracies = rows.map((r) => r.accuracy)
  const perFile = fileSeconds[copy]?.map((r) => ({ file: basename(r.file, '.pdf'), pages: r.pages, seconds_per_page: round(r.seconds / r.pages, 10) }))
  return [`${dpi}_dpi`, {
    mean: round(accuracies.reduce((a, b) => a + b, 0) / rows.length, 10000), min: Math.min(...accuracies), pages: rows.length,
    seconds_per_page: round(readSeconds[copy]!.seconds / readSeconds[copy]!.pages, 10), ...(perFile ? { seconds_per_page_by_file: perFile } : {}), rows
  }]
}))
const report = {
  command: `nice -n 19 npx tsx bench/scanned-retrieval.ts ${process.argv.slice(2).join(' ')}`.trim(),
  corpus: `${sources.length} regulations (${values.public}), LibreOffice PDFs`, questions: questions.length,
  judged: 'by text: a retrieved chunk finds a judged Markdown chunk when ≥ 50% of either one\'s character bigrams are in the other',
  ocr: { dpi: config.ocr.dpi, languages: config.ocr.languages, concurrency: config.ocr.concurrency, page_timeout_ms: config.ocr.pageTimeoutMs },
  judge_check: judgeCheck,
  copies: Object.fromEntries(copies.map((c) => [c.name, { ...results[c.name]!.figures, chunks: results[c.name]!.chunks, ingest_seconds: results[c.name]!.ingest_seconds, read: readSeconds[c.name] }])),
  scanned_over_text: Object.fromEntries(DPIS.map((dpi) => [`${dpi}_dpi`, {
    questions: askedOf(`scan-${dpi}`).length, ...(scannedFiles[`scan-${dpi}`] ? { scanned_files: scannedFiles[`scan-${dpi}`] } : {}),
    recall_at_5: ratio(`scan-${dpi}`, 'recall_at_5'), mrr_at_10: ratio(`scan-${dpi}`, 'mrr_at_10')
  }])),
  page_accuracy: pageAccuracy,
  ocr_failed_pages: Object.fromEntries(copies.map((c) => [c.name, readings[c.name]!.flatMap((d) => ((d.metadata?.ocr_failed_pages as unknown[] | undefined) ?? []).length > 0 ? [`${d.id}: ${JSON.stringify(d.metadata!.ocr_failed_pages)}`] : [])])),
  load_1min: { min: round(Math.min(...load), 100), max: round(Math.max(...load), 100) }, node: process.version, date: new Date().toISOString()
}
console.log(JSON.stringify(report, null, 2))
if (values.out) writeFileSync(values.out, `${JSON.stringify(report, null, 2)}\n`)

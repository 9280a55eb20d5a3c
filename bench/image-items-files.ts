/**
 * `image_items` over pictures inside HTML, DOCX and PDF files, with questions only a picture's own text answers (issue
 * 42, docs/formats.md "Pictures in HTML, DOCX and PDF"). The six manuals of bench/image-items/files.json: their pictures
 * made by real tools as the bench runs (bench/lib/pictures.ts: ImageMagick flow diagrams, chromium screenshots of
 * administration pages), each manual written as HTML naming its pictures; the DOCX and PDF manuals are that HTML with
 * the pictures inline, converted by LibreOffice (`soffice --convert-to docx|pdf`), and checked with `unzip -l` and
 * poppler's `pdfimages -list` to hold their four pictures. Before anything is read, each `ocr_only` section's terms are
 * checked to be drawn in its picture and absent from every manual's text.
 *
 * Each file is read as `npm run ingest` reads it, three times: with the OCR reader (each picture recognised into
 * `ocr_text`), with it and `OCR_PICTURES=false` (pictures keep caption, alt text, headings and surrounding sentences;
 * scanned pages are still recognised), and with no OCR reader at all; each reading is
 * written through the write path into a namespace of its own (embedded stores, the real model), and the 24 questions of
 * bench/judged/image-items-files.jsonl (written before any run) are asked by `POST /retrieve` (hybrid,
 * `include_images: true`, top_k 10). Judged by picture: every returned picture's bytes (`GET /images/{id}`) are matched
 * to the source image of its document by pixels (both scaled to 64x64 grey, mean absolute difference), so a caption
 * the reader got wrong cannot pass. R@1, R@5, MRR@10 with 95% bootstrap intervals (1,000 resamples, seed 42), for all
 * questions and for the `ocr_only` ones, and the paired differences of OCR on against the other two.
 *
 *   nice -n 19 npx tsx bench/image-items-files.ts [--work DIR] [--out bench/results/image-items-files.json]
 */
import { execFileSync } from 'node:child_process'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { chromium } from 'playwright-core'
import sharp from 'sharp'
import type { DocumentInput } from '../src/corpus/documents/input.js'
import { checkedDocuments } from '../src/corpus/documents-body.js'
import { loadConfig } from '../src/config.js'
import { readDocumentFile } from '../src/corpus/files.js'
import { openOcrReader } from '../src/corpus/formats/ocr-pages.js'
import { parseJudgedSet } from '../src/evaluation/judged-set.js'
import { bootstrapMean, resamples } from '../src/evaluation/statistics.js'
import { type AdminPage, drawDiagram, openPictureBenchService, screenshotAdminPage } from './lib/pictures.js'

interface Section {
  heading: string; text: string; caption: string; alt: string
  diagram?: string[]; screenshot?: Omit<AdminPage, 'system' | 'menu'>
  ocr_only?: boolean; terms?: string[]
}
interface Manual { id: string; format: 'html' | 'docx' | 'pdf'; title: string; intro: string; system?: string; menu?: string[]; sections: Section[] }

const { values } = parseArgs({ options: { work: { type: 'string' }, out: { type: 'string' } } })
const work = values.work ?? join(tmpdir(), `image-items-files-${process.pid}`)
const manuals = (JSON.parse(readFileSync('bench/image-items/files.json', 'utf8')) as { documents: Manual[] }).documents
const questions = parseJudgedSet(readFileSync('bench/judged/image-items-files.jsonl', 'utf8'))
const round = (x: number, d = 10000) => Math.round(x * d) / d
const load = [loadavg()[0]!]
const key = (m: Manual, i: number) => `${m.id}/${i + 1}`
const drawnText = (m: Manual, s: Section) => (s.diagram ?? [m.system ?? '', ...(m.menu ?? []), s.screenshot!.group, ...s.screenshot!.rows.flat()]).join('\n')

// 0. the set itself: an ocr_only section's terms are in its picture and in no manual's text; each question names one picture
const allText = manuals.flatMap((m) => [m.title, m.intro, ...m.sections.flatMap((s) => [s.heading, s.text, s.caption, s.alt])]).join('\n')
const sectionOf = new Map(manuals.flatMap((m) => m.sections.map((s, i) => [key(m, i), { manual: m, section: s }] as const)))
for (const [k, { manual, section }] of sectionOf) {
  if (!section.ocr_only) continue
  for (const t of section.terms ?? []) {
    if (!drawnText(manual, section).includes(t)) throw new Error(`${k}: term ${t} is not drawn in its picture`)
    if (allText.includes(t)) throw new Error(`${k}: term ${t} is in a manual's text`)
  }
}
for (const q of questions) {
  const target = q.relevant.ids?.[0]
  const s = target ? sectionOf.get(target) : undefined
  if (!s || q.relevant.ids!.length !== 1) throw new Error(`${q.id}: names no single picture of the set`)
  if (s.section.ocr_only && !s.section.terms!.some((t) => q.query.includes(t))) throw new Error(`${q.id}: asks by none of ${target}'s terms`)
}

// 1. the pictures, the HTML manuals, and LibreOffice's DOCX and PDF of them
const pictures = join(work, 'pictures'), files = join(work, 'files'), office = join(work, 'office')
for (const d of [pictures, files, office]) mkdirSync(d, { recursive: true })
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'] })
try {
  const page = await browser.newPage()
  for (const m of manuals) {
    for (const [i, s] of m.sections.entries()) {
      const file = join(pictures, `${m.id}-${i + 1}.png`)
      if (s.diagram) drawDiagram(s.diagram, file)
      else await screenshotAdminPage(page, { system: m.system!, menu: m.menu!, ...s.screenshot! }, file)
    }
  }
} finally {
  await browser.close()
}
const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/"/g, '&quot;')
async function manualHtml(m: Manual, src: (i: number) => string): Promise<string> {
  const parts = [`<!doctype html><html><head><meta charset="utf-8"><title>${esc(m.title)}</title></head><body>`, `<h1>${esc(m.title)}</h1>`, `<p>${esc(m.intro)}</p>`]
  for (const [i, s] of m.sections.entries()) {
    const { width = 0, height = 0 } = await sharp(join(pictures, `${m.id}-${i + 1}.png`)).metadata()
    const shown = Math.min(width, 560) // the width LibreOffice lays it out at: within an A4 page's text
    parts.push(`<h2>${esc(s.heading)}</h2>`, `<p>${esc(s.text)}</p>`,
      `<figure><img src="${src(i)}" alt="${esc(s.alt)}" width="${shown}" height="${Math.round((height * shown) / width)}"><figcaption>${esc(s.caption)}</figcaption></figure>`)
  }
  return `${parts.join('\n')}\n</body></html>\n`
}
const paths: string[] = []
for (const m of manuals) {
  if (m.format === 'html') {
    for (const i of m.sections.keys()) execFileSync('cp', [join(pictures, `${m.id}-${i + 1}.png`), files])
    writeFileSync(join(files, `${m.id}.html`), await manualHtml(m, (i) => `${m.id}-${i + 1}.png`))
  } else {
    const inline = (i: number) => `data:image/png;base64,${readFileSync(join(pictures, `${m.id}-${i + 1}.png`)).toString('base64')}`
    writeFileSync(join(office, `${m.id}.html`), await manualHtml(m, inline))
    const target = m.format === 'docx' ? 'docx:MS Word 2007 XML' : 'pdf'
    execFileSync('soffice', ['--headless', '--writer', '--convert-to', target, '--outdir', files, join(office, `${m.id}.html`)], { stdio: 'ignore' })
    const held = m.format === 'docx'
      ? execFileSync('unzip', ['-l', join(files, `${m.id}.docx`)], { encoding: 'utf8' }).split('\n').filter((l) => /word\/media\//.test(l)).length
      : execFileSync('pdfimages', ['-list', join(files, `${m.id}.pdf`)], { encoding: 'utf8' }).split('\n').slice(2).filter((l) => l.trim().split(/\s+/)[2] === 'image').length // smask rows are alpha channels
    if (held !== m.sections.length) throw new Error(`${m.id}.${m.format} holds ${held} pictures, not ${m.sections.length}`)
  }
  paths.push(join(files, `${m.id}.${m.format}`))
}

// 2. each manual read with and without OCR of its pictures
const config = loadConfig({ LOG_LEVEL: 'silent' })
const ocr = await openOcrReader(config.ocr)
if (typeof ocr === 'string') throw new Error(ocr)
// `ocr_pictures_off`: the OCR reader with OCR_PICTURES=false (scanned pages still recognised); `no_ocr`: no OCR reader at all
const ARMS = ['ocr', 'ocr_pictures_off', 'no_ocr'] as const
type Arm = (typeof ARMS)[number]
const arms: Record<Arm, DocumentInput[]> = { ocr: [], ocr_pictures_off: [], no_ocr: [] }
const reading: Record<Arm, number> = { ocr: 0, ocr_pictures_off: 0, no_ocr: 0 }
const pictureText: Record<string, { ocr_text: string | null; labels_read: string; terms_read?: string[] }> = {}
for (const file of paths) {
  for (const arm of ARMS) {
    const started = performance.now()
    const read = await readDocumentFile(file, files, arm === 'ocr' ? ocr : arm === 'ocr_pictures_off' ? { ...ocr, pictures: false } : undefined)
    reading[arm] += (performance.now() - started) / 1000
    if (read.outcome !== 'read') throw new Error(`${file}: ${read.outcome} ${read.reason}`)
    arms[arm].push(read.document)
  }
  load.push(loadavg()[0]!)
}

// 3. the source picture a returned one is, by pixels (within its document)
const thumb = async (bytes: Buffer | string) => sharp(bytes).greyscale().resize(64, 64, { fit: 'fill' }).raw().toBuffer()
const sources = new Map<string, Array<{ key: string; pixels: Buffer }>>()
for (const m of manuals) sources.set(m.id, await Promise.all(m.sections.map(async (_, i) => ({ key: key(m, i), pixels: await thumb(join(pictures, `${m.id}-${i + 1}.png`)) }))))
const distance = (a: Buffer, b: Buffer) => { let d = 0; for (let i = 0; i < a.length; i++) d += Math.abs(a[i]! - b[i]!); return d / a.length }
const matches: Array<{ best: number; next: number }> = []
async function nearest(document: string, bytes: Buffer): Promise<{ key: string; best: number; next: number }> {
  const own = await thumb(bytes)
  const ranked = (sources.get(document) ?? []).map((s) => ({ key: s.key, d: distance(own, s.pixels) })).sort((a, b) => a.d - b.d)
  if (ranked.length < 2) throw new Error(`a picture of document ${document}, which has fewer than two`)
  return { key: ranked[0]!.key, best: ranked[0]!.d, next: ranked[1]!.d }
}
async function pictureOf(document: string, bytes: Buffer): Promise<string> {
  const found = await nearest(document, bytes)
  matches.push(found)
  return found.key
}

// 4. written through the write path, asked through POST /retrieve
const { dir, services, app } = await openPictureBenchService('recall-image-items-files-')
type Answer = { id: string; ocr_only: boolean; rank: number | null; top: string[] }
const answers: Record<Arm, Answer[]> = { ocr: [], ocr_pictures_off: [], no_ocr: [] }
const stored: Record<string, number> = {}
try {
  await app.ready()
  for (const arm of ARMS) {
    const namespace = arm.replace(/_/g, '-')
    const written = await services.writePath.write(namespace, { kind: 'documents', op: 'upsert', documents: checkedDocuments({ documents: arms[arm], namespace }) })
    stored[arm] = (written as { images?: { written: number } }).images?.written ?? -1
    for (const q of questions) {
      const r = await app.inject({ method: 'POST', url: '/retrieve', payload: { mode: 'hybrid', namespace, query: q.query, top_k: 10, include_images: true } })
      if (r.statusCode !== 200) throw new Error(`${q.id}: ${r.statusCode} ${r.body}`)
      const keys: string[] = []
      for (const item of (r.json() as { image_items: Array<{ document: string; url: string }> }).image_items) {
        const bytes = await app.inject({ method: 'GET', url: item.url })
        if (bytes.statusCode !== 200) throw new Error(`${item.url}: ${bytes.statusCode}`)
        keys.push(await pictureOf(item.document, bytes.rawPayload))
      }
      const target = q.relevant.ids![0]!
      const at = keys.indexOf(target)
      answers[arm].push({ id: q.id, ocr_only: !!sectionOf.get(target)!.section.ocr_only, rank: at >= 0 ? at + 1 : null, top: keys.slice(0, 3) })
    }
  }
} finally {
  await app.close()
  await rm(dir, { recursive: true, force: true })
}
load.push(loadavg()[0]!)

// what OCR read of each picture, and whether it read an ocr_only section's terms
for (const d of arms.ocr) {
  for (const image of d.images ?? []) {
    const k = (await nearest(d.id, Buffer.from(image.data, 'base64'))).key
    const s = sectionOf.get(k)!.section
    const text = image.ocr_text ?? null
    const flat = (text ?? '').normalize('NFKC').replace(/\s+/g, '')
    const read = (t: string) => flat.includes(t.normalize('NFKC').replace(/\s+/g, ''))
    // the labels drawn for this picture alone: a diagram's steps, a page's group, setting names and values
    const labels = s.diagram ?? [s.screenshot!.group, ...s.screenshot!.rows.flat()]
    pictureText[k] = { ocr_text: text, labels_read: `${labels.filter(read).length}/${labels.length}`, ...(s.ocr_only ? { terms_read: s.terms!.filter(read) } : {}) }
  }
}

// 5. figures with bootstrap intervals, and the paired difference OCR − no OCR
function figures(per: readonly Answer[]) {
  const samples = resamples(per.length, 1000, 42)
  const metric = (f: (rank: number | null) => number) => {
    const i = bootstrapMean(per.map((p) => f(p.rank)), samples)
    return { mean: round(i.mean), ci_low: round(i.ci_low), ci_high: round(i.ci_high) }
  }
  return {
    questions: per.length, recall_at_1: metric((r) => (r === 1 ? 1 : 0)), recall_at_5: metric((r) => (r !== null && r <= 5 ? 1 : 0)),
    mrr_at_10: metric((r) => (r !== null && r <= 10 ? 1 / r : 0))
  }
}
function difference(other: Arm, pick: (a: Answer) => boolean, f: (rank: number | null) => number) {
  const a = answers.ocr.filter(pick), b = answers[other].filter(pick)
  const i = bootstrapMean(a.map((x, j) => f(x.rank) - f(b[j]!.rank)), resamples(a.length, 1000, 42))
  return { mean: round(i.mean), ci_low: round(i.ci_low), ci_high: round(i.ci_high) }
}
const r5 = (r: number | null) => (r !== null && r <= 5 ? 1 : 0)
const mrr = (r: number | null) => (r !== null && r <= 10 ? 1 / r : 0)
const groups = { all: () => true, ocr_only: (a: Answer) => a.ocr_only, captioned: (a: Answer) => !a.ocr_only }
const report = {
  command: `nice -n 19 npx tsx bench/image-items-files.ts ${process.argv.slice(2).join(' ')}`.trim(),
  manuals: manuals.map((m) => `${m.id}.${m.format}`), pictures: sectionOf.size, questions: questions.length,
  ocr: { languages: config.ocr.languages, min_confidence: config.ocr.minConfidence }, pictures_stored: stored,
  reading_seconds: Object.fromEntries(ARMS.map((arm) => [arm, round(reading[arm], 10)])),
  judged_by_pixels: { returned: matches.length, worst_match: round(Math.max(...matches.map((m) => m.best)), 100), closest_other: round(Math.min(...matches.map((m) => m.next)), 100) },
  with_ocr: Object.fromEntries(Object.entries(groups).map(([g, pick]) => [g, figures(answers.ocr.filter(pick))])),
  ocr_pictures_off: Object.fromEntries(Object.entries(groups).map(([g, pick]) => [g, figures(answers.ocr_pictures_off.filter(pick))])),
  without_ocr: Object.fromEntries(Object.entries(groups).map(([g, pick]) => [g, figures(answers.no_ocr.filter(pick))])),
  ocr_minus_pictures_off: Object.fromEntries(Object.entries(groups).map(([g, pick]) => [g, { recall_at_5: difference('ocr_pictures_off', pick, r5), mrr_at_10: difference('ocr_pictures_off', pick, mrr) }])),
  ocr_minus_no_ocr: Object.fromEntries(Object.entries(groups).map(([g, pick]) => [g, { recall_at_5: difference('no_ocr', pick, r5), mrr_at_10: difference('no_ocr', pick, mrr) }])),
  per_question: questions.map((q, i) => ({ id: q.id, target: q.relevant.ids![0], ocr_only: answers.ocr[i]!.ocr_only, rank_ocr: answers.ocr[i]!.rank, rank_pictures_off: answers.ocr_pictures_off[i]!.rank, rank_no_ocr: answers.no_ocr[i]!.rank, top_ocr: answers.ocr[i]!.top })),
  labels_read: (() => {
    const [read, drawn] = Object.values(pictureText).reduce(([r, d], p) => { const [a, b] = p.labels_read.split('/').map(Number); return [r + a!, d + b!] }, [0, 0])
    return { read, drawn, pictures_with_text: Object.values(pictureText).filter((p) => p.ocr_text !== null).length, pictures_recognised: Object.keys(pictureText).length }
  })(),
  picture_text: pictureText,
  load_1min: { min: round(Math.min(...load), 100), max: round(Math.max(...load), 100) }, node: process.version, date: new Date().toISOString()
}
console.log(JSON.stringify(report, null, 2))
if (values.out) writeFileSync(values.out, `${JSON.stringify(report, null, 2)}\n`)

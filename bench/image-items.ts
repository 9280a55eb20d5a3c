/**
 * `image_items` over documents with pictures (issue 42, docs/formats.md "Pictures: image_items R@5"): the Markdown
 * documents of bench/image-items/documents.json, each section with one picture under it and its caption paragraph
 * (`图 n：…`) after it, the pictures made by real tools as the bench runs — a `diagram` is a flow of boxes and arrows
 * drawn by ImageMagick from MVG with the WenQuanYi font, a `screenshot` an HTML settings page (the group, the setting in
 * the state named, two other settings) rendered by Debian's chromium through playwright-core. The documents are read as
 * `npm run ingest` reads a folder (pictures and captions by the Markdown reader), written through the write path on the
 * embedded stores with the real model, and the 30 questions of bench/judged/image-items.jsonl (written before any
 * system answered) are asked by `POST /retrieve` (hybrid, `include_images: true`, top_k 10). A question is judged by
 * its picture's caption (`relevant.answers`): R@1, R@5, MRR@10 of `image_items`, with 95% bootstrap intervals (1,000
 * resamples of the questions, seed 42).
 *
 *   nice -n 5 npx tsx bench/image-items.ts [--work DIR] [--out bench/results/image-items.json]
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { chromium } from 'playwright-core'
import { checkedDocuments } from '../src/corpus/documents-body.js'
import { readDocuments } from '../src/corpus/files.js'
import { parseJudgedSet } from '../src/evaluation/judged-set.js'
import { bootstrapMean, resamples } from '../src/evaluation/statistics.js'
import { drawDiagram, openPictureBenchService } from './lib/pictures.js'

interface Section { heading: string; text: string; caption: string; diagram?: string[]; screenshot?: { group: string; setting: string; value: string; others: string[] } }
interface Spec { documents: Array<{ id: string; title: string; intro: string; sections: Section[] }> }

const { values } = parseArgs({ options: { work: { type: 'string' }, out: { type: 'string' } } })
const work = values.work ?? join(tmpdir(), `image-items-${process.pid}`)
mkdirSync(work, { recursive: true })
const spec = JSON.parse(readFileSync('bench/image-items/documents.json', 'utf8')) as Spec
const round = (x: number, d = 10000) => Math.round(x * d) / d
const load = [loadavg()[0]!]

// 1. the pictures and the Markdown that names them
const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;')
const settingsPage = (s: NonNullable<Section['screenshot']>) => `<!doctype html><html lang="zh-CN"><head><meta charset="utf-8"><style>
body { font-family: 'WenQuanYi Micro Hei', sans-serif; margin: 0; background: #f2f3f5; width: 420px; }
header { background: #1f6feb; color: #fff; padding: 14px 18px; font-size: 20px; }
h2 { font-size: 14px; color: #666; margin: 16px 18px 6px; }
.row { display: flex; justify-content: space-between; background: #fff; padding: 14px 18px; border-bottom: 1px solid #e5e5e5; font-size: 17px; }
.row.on { background: #fff8e1; } .value { color: #1f6feb; }
</style></head><body><header>设置</header><h2>${esc(s.group)}</h2>
<div class="row on"><span>${esc(s.setting)}</span><span class="value">${esc(s.value)}</span></div>
${s.others.map((o) => { const [k, v] = o.split('：'); return `<div class="row"><span>${esc(k!)}</span><span class="value">${esc(v ?? '›')}</span></div>` }).join('\n')}
</body></html>`

const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'] })
let pictures = 0
try {
  const page = await browser.newPage({ viewport: { width: 420, height: 320 } })
  for (const doc of spec.documents) {
    const md = [`# ${doc.title}`, '', doc.intro, '']
    for (const [i, s] of doc.sections.entries()) {
      const file = `${doc.id}-${i + 1}.png`
      if (s.diagram) drawDiagram(s.diagram, join(work, file))
      else if (s.screenshot) {
        await page.setContent(settingsPage(s.screenshot))
        await page.screenshot({ path: join(work, file), clip: { x: 0, y: 0, width: 420, height: 300 } })
      } else throw new Error(`${doc.id} §${i + 1}: neither a diagram nor a screenshot`)
      pictures++
      md.push(`## ${s.heading}`, '', s.text, '', `![](${file})`, '', s.caption, '')
    }
    writeFileSync(join(work, `${doc.id}.md`), `${md.join('\n')}\n`)
  }
} finally {
  await browser.close()
}

// 2. written through the write path, asked through POST /retrieve
const { dir, services, app } = await openPictureBenchService('recall-image-items-')
const questions = parseJudgedSet(readFileSync('bench/judged/image-items.jsonl', 'utf8'))
const per: Array<{ id: string; rank: number | null; top: string[] }> = []
let written
try {
  await app.ready()
  // the Markdown files only: a folder walk would take the pictures for image files to recognise
  const documents = await readDocuments(spec.documents.map((d) => join(work, `${d.id}.md`)))
  const stored = documents.reduce((n, d) => n + (d.images?.length ?? 0), 0)
  if (stored !== pictures) throw new Error(`the reader found ${stored} pictures of the ${pictures} made`)
  written = await services.writePath.write('images', { kind: 'documents', op: 'upsert', documents: checkedDocuments({ documents, namespace: 'images' }) })
  for (const q of questions) {
    const r = await app.inject({ method: 'POST', url: '/retrieve', payload: { mode: 'hybrid', namespace: 'images', query: q.query, top_k: 10, include_images: true } })
    if (r.statusCode !== 200) throw new Error(`${q.id}: ${r.statusCode} ${r.body}`)
    const captions = (r.json() as { image_items: Array<{ caption: string }> }).image_items.map((i) => i.caption)
    const at = captions.indexOf(q.relevant.answers![0]!)
    per.push({ id: q.id, rank: at >= 0 ? at + 1 : null, top: captions.slice(0, 3) })
  }
} finally {
  await app.close()
  await rm(dir, { recursive: true, force: true })
}
load.push(loadavg()[0]!)

const samples = resamples(per.length, 1000, 42)
const metric = (f: (rank: number | null) => number) => {
  const i = bootstrapMean(per.map((p) => f(p.rank)), samples)
  return { mean: round(i.mean), ci_low: round(i.ci_low), ci_high: round(i.ci_high) }
}
const report = {
  command: `nice -n 5 npx tsx bench/image-items.ts ${process.argv.slice(2).join(' ')}`.trim(),
  documents: spec.documents.length, pictures, questions: questions.length, chunks_written: written?.chunks,
  recall_at_1: metric((r) => (r === 1 ? 1 : 0)), recall_at_5: metric((r) => (r !== null && r <= 5 ? 1 : 0)),
  mrr_at_10: metric((r) => (r !== null && r <= 10 ? 1 / r : 0)),
  per_question: per, load_1min: { min: round(Math.min(...load), 100), max: round(Math.max(...load), 100) }, node: process.version, date: new Date().toISOString()
}
console.log(JSON.stringify(report, null, 2))
if (values.out) writeFileSync(values.out, `${JSON.stringify(report, null, 2)}\n`)

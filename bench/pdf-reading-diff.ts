/**
 * Which PDFs this tree reads differently from another tree (`--base DIR`: e.g. `git archive 0bee96b` with node_modules
 * linked): each file read by both trees' `readPdf` with one stand-in OCR engine that answers every page with the same
 * word, so that what is compared is which pages each reader sends to OCR and the text, title, metadata and pictures it
 * keeps, not the recognition (which is the same engine in both). A picture on a recognised page is left out on both
 * sides (a tree may drop it inside `readPdf` or after it, in `readFileByFormat`). Prints each file that differs and the
 * counts; exits 0 either way.
 *
 *   nice -n 19 npx tsx bench/pdf-reading-diff.ts --base DIR FILE.pdf…
 */
import { readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import type { OcrReader } from '../src/corpus/formats/ocr-pages.js'
import { readPdf } from '../src/corpus/formats/pdf.js'
import type { FileReading } from '../src/corpus/formats/reading.js'

const { values, positionals } = parseArgs({ allowPositionals: true, options: { base: { type: 'string' } } })
if (!values.base || positionals.length === 0) throw new Error('usage: bench/pdf-reading-diff.ts --base DIR FILE.pdf…')
const base = (await import(join(resolve(values.base), 'src/corpus/formats/pdf.ts')) as { readPdf: typeof readPdf }).readPdf
const engine = { recognise: async () => ({ text: 'recognised', confidence: 0.9 }), health: async () => ({ ok: true as const }) }
const ocr = { engine, dpi: 30, minConfidence: 0.6, concurrency: 1, maxImagePixels: 100_000_000, pageTimeoutMs: 600_000 } as unknown as OcrReader

const summary = (r: FileReading) => r.outcome !== 'read' ? JSON.stringify(r) : JSON.stringify({
  text: r.text, title: r.title, metadata: r.metadata, recognised: r.ocr?.pages,
  pictures: (r.images ?? []).filter((i) => !r.ocr?.pages.includes(i.page!)).map((i) => ({ page: i.page, caption: i.caption, bytes: i.data.length }))
})
let same = 0
const differ: string[] = []
for (const file of positionals) {
  const bytes = new Uint8Array(readFileSync(file))
  const [now, then] = [summary(await readPdf(bytes, ocr)), summary(await base(bytes, ocr))]
  if (now === then) same++
  else {
    differ.push(file)
    console.log(`differs: ${file}\n  this ${now.slice(0, 400)}\n  base ${then.slice(0, 400)}`)
  }
}
console.log(JSON.stringify({ files: positionals.length, same, differ }, null, 2))

/**
 * What taking a PDF's pictures costs the reading of a text-only PDF: the same file read by `readPdf` with pictures
 * (every page's operator list walked for image XObjects) and without (the reading before issue 42), interleaved in one
 * run, the ratio of the medians reported. `npx tsx bench/pdf-pictures-cost.ts [file.pdf] [rounds] [--out file.json]`.
 */
import { readFile, writeFile } from 'node:fs/promises'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { readPdf } from '../src/corpus/formats/pdf.js'

const args = process.argv.slice(2)
const outAt = args.indexOf('--out')
const out = outAt >= 0 ? args.splice(outAt, 2)[1] : undefined
const file = args[0] ?? join(import.meta.dirname, '../test/fixtures/files/handbook.pdf')
const rounds = Number(args[1] ?? 30)
const bytes = new Uint8Array(await readFile(file))

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const time = async (pictures: boolean) => {
  const started = performance.now()
  const r = await readPdf(bytes, undefined, { pictures })
  if (r.outcome !== 'read') throw new Error(`${file}: ${r.outcome}`)
  return { ms: performance.now() - started, images: r.images?.length ?? 0 }
}
await time(true)
await time(false)
const withPictures: number[] = []
const without: number[] = []
let images = 0
for (let i = 0; i < rounds; i++) {
  // alternate which goes first, so that neither always runs on a warmer process
  const order = i % 2 === 0 ? [true, false] : [false, true]
  for (const pictures of order) {
    const t = await time(pictures)
    ;(pictures ? withPictures : without).push(t.ms)
    if (pictures) images = t.images
  }
}
const result = {
  file: file.replace(/^.*\/test\//, 'test/'), rounds, images_found: images,
  median_ms: { with_pictures: Math.round(median(withPictures) * 100) / 100, without_pictures: Math.round(median(without) * 100) / 100 },
  ratio: Math.round((median(withPictures) / median(without)) * 1000) / 1000,
  load_average: loadavg().map((l) => Math.round(l * 100) / 100), node: process.version, date: new Date().toISOString()
}
console.log(JSON.stringify(result, null, 2))
if (out) await writeFile(out, `${JSON.stringify(result, null, 2)}\n`)

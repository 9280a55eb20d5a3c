/**
 * What recognising the text of a document's pictures costs its reading, interleaved in one run: test/fixtures/images
 * guide.md (a screenshot and a diagram over the floor, a 16 px icon under it) read with OCR (its pictures recognised)
 * and without (`ocr` absent: the pictures kept without text). Medians and their difference per picture recognised.
 *
 *   npx tsx bench/picture-ocr-cost.ts [rounds] [--out file.json]
 */
import { writeFile } from 'node:fs/promises'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { loadConfig } from '../src/config.js'
import { readFileByFormat } from '../src/corpus/formats/index.js'
import { openOcrReader } from '../src/corpus/formats/ocr-pages.js'

const { values, positionals } = parseArgs({ allowPositionals: true, options: { out: { type: 'string' } } })
const rounds = Number(positionals[0] ?? 10)
const file = join(import.meta.dirname, '../test/fixtures/images/guide.md')
const ocr = await openOcrReader(loadConfig().ocr)
if (typeof ocr === 'string') throw new Error(`OCR cannot run here: ${ocr}`)

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const withOcr: number[] = []
const without: number[] = []
let recognised = 0
const load = [loadavg()[0]!]
for (let r = 0; r < rounds; r++) {
  for (const arm of r % 2 === 0 ? ['with', 'without'] : ['without', 'with']) {
    const started = performance.now()
    const reading = await readFileByFormat(file, arm === 'with' ? { ocr } : {})
    const ms = performance.now() - started
    if (arm === 'with') {
      withOcr.push(ms)
      if (reading.outcome === 'read') recognised = reading.images?.filter((i) => i.ocr_text !== undefined).length ?? 0
    } else without.push(ms)
  }
}
load.push(loadavg()[0]!)
const result = {
  file: 'test/fixtures/images/guide.md', rounds, pictures_with_text: recognised,
  median_ms: { with_ocr: Math.round(median(withOcr)), without_ocr: Math.round(median(without)) },
  ms_per_picture_recognised: recognised > 0 ? Math.round((median(withOcr) - median(without)) / recognised) : null,
  load_1min: load.map((l) => Math.round(l * 10) / 10), ocr_concurrency: ocr.concurrency, at: new Date().toISOString()
}
console.log(JSON.stringify(result, null, 2))
if (values.out) await writeFile(values.out, `${JSON.stringify(result, null, 2)}\n`)

/**
 * What derivation costs per chunk: `deriveDocument` over every document of a folder, chunked as the write path chunks
 * it (`chunkDocument`), timed in-process after one warm-up pass (jieba's dictionary loads on first use).
 *
 *   npx tsx bench/derive-cost.ts [--dir /work/es6/docs] [--rounds 3] [--ngrams on|off] [--out FILE]
 *
 * `--ngrams off` sets `ngramMinCount: 0` (a build without the option ignores it). Prints JSON: ms per chunk of each
 * round, their median, and the entities the documents contribute (summed per document).
 */
import { writeFile } from 'node:fs/promises'
import { loadavg } from 'node:os'
import { parseArgs } from 'node:util'
import { chunkDocument } from '../src/corpus/documents.js'
import { readDocuments } from '../src/corpus/files.js'
import { deriveDocument } from '../src/derive/document.js'
import { derivationOptions } from '../src/derive/options.js'

const { values: args } = parseArgs({ options: { dir: { type: 'string', default: process.env.ES6_DOCS ?? '/work/es6/docs' }, rounds: { type: 'string', default: '3' }, ngrams: { type: 'string', default: 'on' }, out: { type: 'string' } } })
const round = (x: number, digits = 3) => Math.round(x * 10 ** digits) / 10 ** digits
const documents = (await readDocuments([args.dir!])).map((d) => chunkDocument(d))
const chunks = documents.reduce((n, d) => n + d.length, 0)
const options = derivationOptions(args.ngrams === 'off' ? ({ ngramMinCount: 0 } as Partial<ReturnType<typeof derivationOptions>>) : {})
const loadAtStart = loadavg().map((x) => round(x, 1))
let entities = 0
for (const d of documents) entities += deriveDocument(d, options).entities.length
const perChunk: number[] = []
for (let r = 0; r < Number(args.rounds); r++) {
  const started = performance.now()
  for (const d of documents) deriveDocument(d, options)
  perChunk.push(round((performance.now() - started) / chunks))
}
const report = {
  dir: args.dir, ngrams: args.ngrams, documents: documents.length, chunks, entities, ms_per_chunk: perChunk,
  median_ms_per_chunk: [...perChunk].sort((a, b) => a - b)[Math.floor(perChunk.length / 2)],
  load_average_at_start: loadAtStart, load_average_at_end: loadavg().map((x) => round(x, 1))
}
const text = JSON.stringify(report, null, 2)
console.log(text)
if (args.out) await writeFile(args.out, `${text}\n`)

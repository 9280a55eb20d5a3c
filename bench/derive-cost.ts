/**
 * What derivation costs per chunk: `deriveDocument` over every document of a folder, chunked as the write path chunks
 * it (`chunkDocument`), timed in-process after one warm-up pass (jieba's dictionary loads on first use), with the
 * frequent n-grams on (the defaults) and off (`ngramMinCount: 0`; a build without the option ignores it), round by
 * round in alternating order, so that the drift of a busy machine falls on both.
 *
 *   npx tsx bench/derive-cost.ts [--dir /work/es6/docs] [--rounds 5] [--out FILE]
 *
 * Prints JSON: for each, ms per chunk of each round, their median and minimum, and the entities the documents
 * contribute (summed per document).
 */
import { writeFile } from 'node:fs/promises'
import { loadavg } from 'node:os'
import { parseArgs } from 'node:util'
import { chunkDocument } from '../src/corpus/documents/chunking.js'
import { readDocuments } from '../src/corpus/files.js'
import { deriveDocument } from '../src/derive/document.js'
import { derivationOptions } from '../src/derive/options.js'

const { values: args } = parseArgs({ options: { dir: { type: 'string', default: process.env.ES6_DOCS ?? '/work/es6/docs' }, rounds: { type: 'string', default: '5' }, out: { type: 'string' } } })
const round = (x: number, digits = 3) => Math.round(x * 10 ** digits) / 10 ** digits
const documents = (await readDocuments([args.dir!])).map((d) => chunkDocument(d))
const chunks = documents.reduce((n, d) => n + d.length, 0)
const variants = {
  ngrams_on: derivationOptions(),
  ngrams_off: derivationOptions({ ngramMinCount: 0 } as Partial<ReturnType<typeof derivationOptions>>)
}
const loadAtStart = loadavg().map((x) => round(x, 1))
const entities: Record<string, number> = {}
const perChunk: Record<string, number[]> = {}
for (const [name, options] of Object.entries(variants)) {
  entities[name] = documents.reduce((n, d) => n + deriveDocument(d, options).entities.length, 0)
  perChunk[name] = []
}
for (let r = 0; r < Number(args.rounds); r++) {
  const names = Object.keys(variants)
  for (const name of r % 2 === 0 ? names : names.reverse()) {
    const options = variants[name as keyof typeof variants]
    const started = performance.now()
    for (const d of documents) deriveDocument(d, options)
    perChunk[name]!.push(round((performance.now() - started) / chunks))
  }
}
const report = {
  dir: args.dir, documents: documents.length, chunks,
  ...Object.fromEntries(Object.keys(variants).map((name) => {
    const sorted = [...perChunk[name]!].sort((a, b) => a - b)
    return [name, { entities: entities[name], ms_per_chunk: perChunk[name], median_ms_per_chunk: sorted[Math.floor(sorted.length / 2)], min_ms_per_chunk: sorted[0] }]
  })),
  load_average_at_start: loadAtStart, load_average_at_end: loadavg().map((x) => round(x, 1))
}
const text = JSON.stringify(report, null, 2)
console.log(text)
if (args.out) await writeFile(args.out, `${text}\n`)

/**
 * What one derived entity name's embedding costs against one chunk's, in-process, with the local model as the service
 * runs it (one text per ONNX run, one session in this process), and what embedding names in small batches would change
 * (issue #31 items 2 and 7; bench/results/derived-quality.log.md). The chunks are synthetic one-chunk CMRC documents (the
 * `--throughput 10000` corpus, bench/lib/synthetic.ts), the names the derived entities of those chunks that a namespace
 * would link first (each distinct key once, in document order). Blocks of chunks and of names alternate, so a busy
 * machine's drift falls on both; the per-text figures are the medians over blocks.
 *
 * Batching: the names sorted by length, embedded 8 to a run (`batchSize` 8), against each alone: the cosine, and the
 * cosine between two batchings of the same names whose neighbours differ (the groups shifted by 4), which says whether
 * a batched name's vector depends on its neighbours (a namespace's vectors would then depend on what else a write held).
 *
 *   npx tsx bench/entity-name-cost.ts [--chunks 240] [--names 480] [--rounds 6]
 *
 * Writes bench/results/entity-name-cost.json.
 */
import { mkdir, writeFile } from 'node:fs/promises'
import { loadavg } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { deriveDocument } from '../src/derive/document.js'
import { derivationOptions } from '../src/derive/options.js'
import { LocalEmbedder } from '../src/providers/embedder/local.js'
import { loadCmrc } from './lib/cmrc.js'
import { syntheticDocuments } from './lib/synthetic.js'

const { values } = parseArgs({ options: { chunks: { type: 'string', default: '240' }, names: { type: 'string', default: '480' }, rounds: { type: 'string', default: '6' } } })
const CHUNKS = Number(values.chunks)
const NAMES = Number(values.names)
const ROUNDS = Number(values.rounds)
const ROOT = resolve(import.meta.dirname, '..')
const MODEL_DIR = resolve(process.env['MODEL_DIR'] ?? join(ROOT, 'models'))
const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d
const median = (xs: readonly number[]) => { const s = [...xs].sort((a, b) => a - b); return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2 }
const cosine = (a: Float32Array, b: Float32Array) => { let s = 0; for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!; return s }
const same = (a: Float32Array, b: Float32Array) => a.length === b.length && a.every((x, i) => x === b[i])

const paragraphs = (await loadCmrc()).documents.map((d) => d.text)
const documents = syntheticDocuments(paragraphs, 10_000)
const options = derivationOptions()
// the chunks: every (10,000 / CHUNKS)th document of the corpus; the names: each distinct derived entity key in document order
const stride = Math.max(1, Math.floor(documents.length / CHUNKS))
const chunkTexts = documents.filter((_, i) => i % stride === 0).slice(0, CHUNKS).map((d) => d.text!)
const names: string[] = []
const seen = new Set<string>()
let entitiesInSample = 0
for (const [i, doc] of documents.entries()) {
  const entities = deriveDocument([{ id: doc.id, text: doc.text! }], options).entities
  if (i % stride === 0 && i / stride < CHUNKS) entitiesInSample += entities.length
  for (const e of entities) if (!seen.has(e.key) && names.length < NAMES) { seen.add(e.key); names.push(e.key) }
  if (names.length >= NAMES && i >= stride * CHUNKS) break
}
const linkedPerChunk = entitiesInSample

const alone = new LocalEmbedder({ modelDir: MODEL_DIR, modelName: 'bge-small-zh-v1.5' })
const batched = new LocalEmbedder({ modelDir: MODEL_DIR, modelName: 'bge-small-zh-v1.5', batchSize: 8 })
await alone.init()
await batched.init()
await alone.embedPassages(['预热一次模型', '预热'])
await batched.embedPassages(['预热一次模型', '预热'])

const loadStart = loadavg().map((x) => round(x, 1))
const perChunk: number[] = []
const perName: number[] = []
const perNameBatched: number[] = []
const chunkBlock = Math.ceil(chunkTexts.length / ROUNDS)
const nameBlock = Math.ceil(names.length / ROUNDS)
const aloneVectors = new Map<string, Float32Array>()
for (let r = 0; r < ROUNDS; r++) {
  const cs = chunkTexts.slice(r * chunkBlock, (r + 1) * chunkBlock)
  const ns = names.slice(r * nameBlock, (r + 1) * nameBlock)
  const sorted = [...ns].sort((a, b) => [...a].length - [...b].length || (a < b ? -1 : 1))
  const steps: Array<[string, () => Promise<void>]> = [
    ['chunks', async () => { const t = performance.now(); for (const c of cs) await alone.embedPassages([c]); perChunk.push((performance.now() - t) / cs.length) }],
    ['names', async () => { const t = performance.now(); for (const n of ns) aloneVectors.set(n, (await alone.embedPassages([n]))[0]!); perName.push((performance.now() - t) / ns.length) }],
    ['names_batched', async () => { const t = performance.now(); await batched.embedPassages(sorted); perNameBatched.push((performance.now() - t) / sorted.length) }]
  ]
  // rotate which goes first
  for (let k = 0; k < steps.length; k++) await steps[(k + r) % steps.length]![1]()
}
const loadEnd = loadavg().map((x) => round(x, 1))

// batched vectors against alone, and two batchings whose neighbours differ
const sortedAll = [...names].sort((a, b) => [...a].length - [...b].length || (a < b ? -1 : 1))
const batchA = await batched.embedPassages(sortedAll)
const batchB = [...(await alone.embedPassages([])), ...(await batched.embedPassages(sortedAll.slice(0, 4))), ...(await batched.embedPassages(sortedAll.slice(4)))]
const againAlone = await Promise.all(sortedAll.slice(0, 64).map(async (n) => (await alone.embedPassages([n]))[0]!))
const toAlone = sortedAll.map((n, i) => cosine(batchA[i]!, aloneVectors.get(n)!))
const between = sortedAll.map((_, i) => cosine(batchA[i]!, batchB[i]!))
const identicalBetween = sortedAll.filter((_, i) => same(batchA[i]!, batchB[i]!)).length
const aloneRepeatable = sortedAll.slice(0, 64).filter((n, i) => same(againAlone[i]!, aloneVectors.get(n)!)).length

const chars = (xs: readonly string[]) => round(xs.reduce((s, x) => s + [...x].length, 0) / xs.length, 1)
const report = {
  date: new Date().toISOString(), load_average_start: loadStart, load_average_end: loadEnd, rounds: ROUNDS,
  chunks: chunkTexts.length, chunk_chars_mean: chars(chunkTexts), names: names.length, name_chars_mean: chars(names),
  derived_entities_per_chunk: round(linkedPerChunk / chunkTexts.length),
  ms_per_chunk_alone: { median: round(median(perChunk)), blocks: perChunk.map((x) => round(x)) },
  ms_per_name_alone: { median: round(median(perName)), blocks: perName.map((x) => round(x)) },
  ms_per_name_batched_8_by_length: { median: round(median(perNameBatched)), blocks: perNameBatched.map((x) => round(x)) },
  name_over_chunk: round(median(perName) / median(perChunk)),
  batched_cosine_to_alone: { min: round(Math.min(...toAlone), 5), median: round(median(toAlone), 5) },
  batched_cosine_between_two_groupings: { min: round(Math.min(...between), 5), median: round(median(between), 5), identical: identicalBetween, of: between.length },
  alone_repeatable: { identical: aloneRepeatable, of: 64 }
}
console.log(JSON.stringify(report, null, 2))
await mkdir(join(ROOT, 'bench/results'), { recursive: true })
await writeFile(join(ROOT, 'bench/results/entity-name-cost.json'), `${JSON.stringify(report, null, 2)}\n`)
await alone.close()
await batched.close()

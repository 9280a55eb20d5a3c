// Every CMRC passage and question embedded by the local embedder, written byte for byte, and two such files compared.
//
//   tsx bench/embedder-vectors.ts dump FILE [--pool processes|threads] [--sessions 2] [--threads 1] [--callers 1] [--here] [--no-spin]
//                                           [--weights copies|shared]
//   tsx bench/embedder-vectors.ts compare A B [--out bench/results/embedder-vectors.json]
//
// `dump` reads CMRC_PATH (default the trial set under ../shared/data), cuts each paragraph into the service's chunks
// (chunkDocument), embeds with EMBEDDING_THREADS' default of 1 intra-op thread each chunk's passage text and each question as the service does (one text a run), and
// `--callers N` embeds the questions as N concurrent callers of one question each (as a server under load does; on the
// threads pool with `--here`, EMBEDDING_QUERIES_HERE, the session in this thread then takes some), not as one call;
// `--weights shared` runs every session from one mapped copy of the weights (EMBEDDING_WEIGHTS, kept under bench/.work). It
// writes FILE (the float32 vectors in that order) and FILE.json (the counts, the onnxruntime-node version, the pool).
// `compare` says how many vectors differ in any byte, the largest difference of a component and the lowest cosine,
// and the dense retrieval each file gives (every question against every passage, a paragraph by its best chunk:
// Recall@1/5, MRR@10), so that a change of bytes is weighed by what it does to answers.
import { createHash } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { loadavg } from 'node:os'
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { chunkDocument } from '../src/corpus/documents/chunking.js'
import { passageText } from '../src/kernel/lexical-text.js'
import { LocalEmbedder, type LocalEmbedderOptions } from '../src/providers/embedder/local.js'
import { loadCmrc, CMRC_PATH } from './lib/cmrc.js'

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    pool: { type: 'string', default: 'processes' },
    sessions: { type: 'string', default: '2' },
    threads: { type: 'string', default: '1' },
    callers: { type: 'string', default: '1' },
    here: { type: 'boolean', default: false },
    'no-spin': { type: 'boolean', default: false },
    weights: { type: 'string', default: 'copies' },
    out: { type: 'string', default: 'bench/results/embedder-vectors.json' }
  }
})
const [command, ...files] = positionals

function ortVersion(): string {
  const fromTransformers = createRequire(createRequire(import.meta.url).resolve('@huggingface/transformers'))
  return (fromTransformers('onnxruntime-node/package.json') as { version: string }).version
}

async function dump(file: string): Promise<void> {
  const { documents, queries } = await loadCmrc()
  const passages = documents.flatMap((d) => chunkDocument(d).map(passageText))
  const embedder = new LocalEmbedder({
    modelDir: resolve('models'),
    modelName: 'bge-small-zh-v1.5',
    sessions: Number(values.sessions),
    threads: Number(values.threads),
    queriesHere: values.here,
    ...(values['no-spin'] ? { spinning: false } : {}),
    ...(values.weights === 'shared' ? { weightsDir: resolve('bench/.work/shared-weights') } : {}),
    ...({ pool: values.pool } as Partial<LocalEmbedderOptions>)
  })
  const started = performance.now()
  const load = loadavg()[0]
  const passageVectors = await embedder.embedPassages(passages)
  const questions = queries.map((q) => q.query)
  const callers = Number(values.callers)
  let questionVectors: Float32Array[]
  if (callers <= 1) {
    questionVectors = await embedder.embedQueries(questions)
  } else {
    questionVectors = new Array<Float32Array>(questions.length)
    let next = 0
    await Promise.all(Array.from({ length: callers }, async () => {
      while (next < questions.length) {
        const i = next++
        questionVectors[i] = (await embedder.embedQueries([questions[i]!]))[0]!
      }
    }))
  }
  const vectors = [...passageVectors, ...questionVectors]
  const seconds = (performance.now() - started) / 1000
  await embedder.close()
  const bytes = Buffer.concat(vectors.map((v) => Buffer.from(v.buffer, v.byteOffset, v.byteLength)))
  writeFileSync(file, bytes)
  const meta = {
    corpus: CMRC_PATH, paragraphs: documents.length, passages: passages.length, questions: queries.length,
    dimensions: vectors[0]?.length, pool: values.pool, sessions: Number(values.sessions), threads: Number(values.threads), callers, queries_here: values.here, spinning: !values['no-spin'], weights: values.weights, onnxruntime_node: ortVersion(),
    sha256: createHash('sha256').update(bytes).digest('hex'), seconds: Number(seconds.toFixed(1)), load_1min_at_start: load
  }
  writeFileSync(`${file}.json`, JSON.stringify(meta, null, 2) + '\n')
  console.log(JSON.stringify(meta))
}

/** Dense retrieval over the dumped vectors: each question against every passage, a paragraph ranked by its best chunk. */
function denseQuality(vectors: Float32Array, dims: number, docOfPassage: readonly number[], relevant: readonly number[]): { recall_at_1: number; recall_at_5: number; mrr_at_10: number } {
  const passages = docOfPassage.length
  let r1 = 0
  let r5 = 0
  let mrr = 0
  for (let q = 0; q < relevant.length; q++) {
    const qo = (passages + q) * dims
    const best = new Map<number, number>()
    for (let p = 0; p < passages; p++) {
      let dot = 0
      for (let i = 0; i < dims; i++) dot += vectors[qo + i]! * vectors[p * dims + i]!
      const doc = docOfPassage[p]!
      if (dot > (best.get(doc) ?? -Infinity)) best.set(doc, dot)
    }
    const ranked = [...best].sort((x, y) => y[1] - x[1] || x[0] - y[0]).map(([doc]) => doc)
    const rank = ranked.indexOf(relevant[q]!)
    if (rank === 0) r1++
    if (rank >= 0 && rank < 5) r5++
    if (rank >= 0 && rank < 10) mrr += 1 / (rank + 1)
  }
  const n = relevant.length
  return { recall_at_1: Number((r1 / n).toFixed(4)), recall_at_5: Number((r5 / n).toFixed(4)), mrr_at_10: Number((mrr / n).toFixed(4)) }
}

async function compare(a: string, b: string): Promise<void> {
  const metaA = JSON.parse(readFileSync(`${a}.json`, 'utf8')) as { passages: number; dimensions: number }
  const metaB = JSON.parse(readFileSync(`${b}.json`, 'utf8')) as { passages: number; dimensions: number }
  const bufA = readFileSync(a)
  const bufB = readFileSync(b)
  if (bufA.length !== bufB.length || metaA.dimensions !== metaB.dimensions) throw new Error('the two files hold different counts')
  const dims = metaA.dimensions
  const va = new Float32Array(bufA.buffer, bufA.byteOffset, bufA.length / 4)
  const vb = new Float32Array(bufB.buffer, bufB.byteOffset, bufB.length / 4)
  const count = va.length / dims
  let differing = 0
  let differingPassages = 0
  let largest = 0
  let lowestCosine = 1
  for (let v = 0; v < count; v++) {
    let same = true
    let dot = 0
    for (let i = v * dims; i < (v + 1) * dims; i++) {
      if (bufA.readUInt32LE(i * 4) !== bufB.readUInt32LE(i * 4)) same = false
      largest = Math.max(largest, Math.abs(va[i]! - vb[i]!))
      dot += va[i]! * vb[i]!
    }
    if (!same) {
      differing++
      if (v < metaA.passages) differingPassages++
    }
    lowestCosine = Math.min(lowestCosine, dot)
  }
  // The same CMRC file the dumps were made from (CMRC_PATH): which paragraph each passage is of, each question's paragraph.
  const { documents, queries } = await loadCmrc()
  const docOfPassage = documents.flatMap((d, index) => chunkDocument(d).map(() => index))
  const indexOf = new Map(documents.map((d, index) => [d.id, index]))
  const relevant = queries.map((q) => indexOf.get(q.relevant_ids[0]!)!)
  if (docOfPassage.length !== metaA.passages) throw new Error('CMRC_PATH is not the file the dumps were made from')
  const result = {
    a: JSON.parse(readFileSync(`${a}.json`, 'utf8')) as unknown,
    b: JSON.parse(readFileSync(`${b}.json`, 'utf8')) as unknown,
    vectors: count, differing_in_any_byte: differing, differing_passages: differingPassages,
    largest_component_difference: largest, lowest_cosine: lowestCosine,
    dense_retrieval: { a: denseQuality(va, dims, docOfPassage, relevant), b: denseQuality(vb, dims, docOfPassage, relevant) }
  }
  writeFileSync(values.out, JSON.stringify(result, null, 2) + '\n')
  console.log(JSON.stringify(result, null, 2))
}

if (command === 'dump' && files[0] !== undefined) await dump(files[0])
else if (command === 'compare' && files[0] !== undefined && files[1] !== undefined) await compare(files[0], files[1])
else {
  console.error('usage: tsx bench/embedder-vectors.ts dump FILE [--pool processes|threads] [--sessions N] | compare A B [--out FILE]')
  process.exit(2)
}

// Does a batch of texts of the same token length (so no padding) give each text the bytes it gets alone? (issue 43
// item 4: if it did, the run queue could batch same-length queries and cut an answer's CPU at 16 clients.)
//
//   CMRC_PATH=… tsx bench/batch-bytes.ts [--questions all|N] [--passages all|N] [--out bench/results/batch-bytes.json]
//
// Every CMRC question (with the query instruction, as the service embeds it) and passage (the service's chunks) is
// embedded alone, one text a run, in one session of this process; then the texts of each token length are taken two
// by two and embedded as a batch of two. Per batch row: the same bytes as alone or not, the largest difference of a
// component and the lowest cosine to the lone vector. The model file's operators are counted too: a
// DynamicQuantizeLinear takes one scale over its whole input tensor, every row of a batch together.
import { readFileSync, writeFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { AutoTokenizer } from '@huggingface/transformers'
import { chunkDocument } from '../src/corpus/documents/chunking.js'
import { passageText } from '../src/kernel/lexical-text.js'
import { loadOnnxSession } from '../src/providers/embedder/onnx-session.js'
import { BGE_ZH_QUERY_INSTRUCTION } from '../src/providers/embedder/vectors.js'
import { loadCmrc, CMRC_PATH } from './lib/cmrc.js'

const { values } = parseArgs({
  options: {
    questions: { type: 'string', default: 'all' },
    passages: { type: 'string', default: 'all' },
    out: { type: 'string', default: 'bench/results/batch-bytes.json' }
  }
})
const take = <T>(items: readonly T[], limit: string): readonly T[] => (limit === 'all' ? items : items.slice(0, Number(limit)))

const folder = resolve('models', 'bge-small-zh-v1.5')
const MAX_LENGTH = 512
const { documents, queries } = await loadCmrc()
const kinds = {
  questions: take(queries.map((q) => BGE_ZH_QUERY_INSTRUCTION + q.query), values.questions),
  passages: take(documents.flatMap((d) => chunkDocument(d).map(passageText)), values.passages)
}
const model = readFileSync(join(folder, 'onnx/model_quantized.onnx')).toString('latin1')
const count = (op: string): number => model.split(op).length - 1
const session = await loadOnnxSession({ folder, maxLength: MAX_LENGTH, dimensions: 512, threads: 1 })
const tokenizer = await AutoTokenizer.from_pretrained(folder, { local_files_only: true })
const tokens = (text: string): number => Math.min(MAX_LENGTH, (tokenizer(text, { truncation: true, max_length: MAX_LENGTH }) as { input_ids: { dims: number[] } }).input_ids.dims[1]!)
const same = (a: Float32Array, b: Float32Array): boolean => Buffer.compare(Buffer.from(a.buffer, a.byteOffset, a.byteLength), Buffer.from(b.buffer, b.byteOffset, b.byteLength)) === 0

const load = [loadavg()[0]]
const results: Record<string, unknown> = {}
for (const [kind, texts] of Object.entries(kinds)) {
  const alone: Float32Array[] = []
  for (const text of texts) alone.push((await session.run([text]))[0]!)
  const byLength = new Map<number, number[]>()
  texts.forEach((text, i) => {
    const n = tokens(text)
    byLength.set(n, [...(byLength.get(n) ?? []), i])
  })
  let rows = 0
  let identical = 0
  let largest = 0
  let lowestCosine = 1
  for (const group of byLength.values()) {
    for (let k = 0; k + 1 < group.length; k += 2) {
      const pair = [group[k]!, group[k + 1]!]
      const batch = await session.run(pair.map((i) => texts[i]!))
      pair.forEach((i, row) => {
        const a = alone[i]!
        const b = batch[row]!
        rows++
        if (same(a, b)) identical++
        let dot = 0
        for (let d = 0; d < a.length; d++) {
          largest = Math.max(largest, Math.abs(a[d]! - b[d]!))
          dot += a[d]! * b[d]!
        }
        lowestCosine = Math.min(lowestCosine, dot)
      })
    }
  }
  results[kind] = { texts: texts.length, token_lengths: byLength.size, batch_rows: rows, rows_identical_to_alone: identical, largest_component_difference: largest, lowest_cosine: lowestCosine }
  console.log(kind, JSON.stringify(results[kind]))
}
await session.dispose()
load.push(loadavg()[0])

const out = {
  bench: 'batch-bytes',
  date: new Date().toISOString(),
  corpus: CMRC_PATH,
  model: `${folder} (int8): DynamicQuantizeLinear named ${count('DynamicQuantizeLinear')} times, MatMulInteger ${count('MatMulInteger')} times in the file`,
  batches: 'two texts of the same token length (no padding) in one run, against each alone; one session, 1 intra-op thread',
  load_1min: load,
  ...results
}
writeFileSync(values.out, JSON.stringify(out, null, 2) + '\n')
console.log(`wrote ${values.out}`)

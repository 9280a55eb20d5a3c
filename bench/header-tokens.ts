/**
 * What the contextual header adds to the text the model embeds (issue 30: the ingest rate beside b50e7a5, which
 * embedded the chunk alone): tokens per chunk, by the model's own tokenizer ([CLS] and [SEP] included), of the chunk's
 * text and of its passage text (the header, then the chunk: `passageText`), on the demo documents (real titles and
 * headings) and on the synthetic CMRC documents of bench/ingest-rate.ts with and without its `--titled` titles.
 * Only tokenizes: nothing is embedded. Writes bench/results/header-tokens.json.
 *
 *   npx tsx bench/header-tokens.ts [--chunks 10000]
 */
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { chunkDocument } from '../src/corpus/documents/chunking.js'
import type { DocumentInput } from '../src/corpus/documents/input.js'
import { readDocuments } from '../src/corpus/files.js'
import { passageText } from '../src/kernel/lexical-text.js'
import { loadCmrc } from './lib/cmrc.js'
import { modelDir } from './lib/corpus.js'
import { syntheticDocuments } from './lib/synthetic.js'

const { values } = parseArgs({ options: { chunks: { type: 'string', default: '10000' } } })
const { AutoTokenizer } = await import('@huggingface/transformers')
const tokenizer = await AutoTokenizer.from_pretrained(join(modelDir(), 'bge-small-zh-v1.5'), { local_files_only: true })
const tokens = (text: string) => tokenizer.encode(text).length

function measure(documents: readonly DocumentInput[]) {
  const chunks = documents.flatMap((d) => chunkDocument(d))
  const text = chunks.reduce((n, c) => n + tokens(c.text), 0)
  const passage = chunks.reduce((n, c) => n + tokens(passageText(c)), 0)
  const withHeader = chunks.filter((c) => passageText(c) !== c.text).length
  const mean = (n: number) => Math.round((n / chunks.length) * 10) / 10
  return {
    chunks: chunks.length, chunks_with_a_header: withHeader,
    tokens_per_chunk_text: mean(text), tokens_per_chunk_embedded: mean(passage),
    embedded_over_text: Math.round((passage / text) * 1000) / 1000
  }
}

/** The titles bench/ingest-rate.ts gives with `--titled`. */
const titleOf = (i: number) => `中文阅读理解资料第${i}篇：段落摘录`
const { documents } = await loadCmrc()
const synthetic = syntheticDocuments(documents.map((d) => d.text), Number(values.chunks))
const result = {
  date: new Date().toISOString(),
  tokenizer: 'bge-small-zh-v1.5 (models/), [CLS] and [SEP] included',
  demo_documents: measure(await readDocuments(['demo/documents'])),
  synthetic_untitled: measure(synthetic),
  synthetic_titled: measure(synthetic.map((d, i) => ({ ...d, title: titleOf(i) })))
}
console.log(JSON.stringify(result, null, 2))
await writeFile('bench/results/header-tokens.json', `${JSON.stringify(result, null, 2)}\n`)

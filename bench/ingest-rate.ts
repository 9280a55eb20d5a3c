/**
 * End-to-end ingestion rate with the real local model (chunking, embedding, vector write, lexical write),
 * on the synthetic CMRC chunks of bench/hybrid.ts. Writes bench/results/ingest-rate.json.
 *
 *   npx tsx bench/ingest-rate.ts [--chunks 600]
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { DocumentLibrary } from '../src/corpus/documents.js'
import { LocalEmbedder } from '../src/providers/embedder/local.js'
import { EmbeddedLexicalIndexes } from '../src/providers/lexical-index/indexes.js'
import { EmbeddedVectorStore } from '../src/providers/vector-store/embedded.js'
import { loadCmrc } from './lib/cmrc.js'
import { modelDir } from './lib/corpus.js'
import { syntheticDocuments } from './lib/synthetic.js'

const { values } = parseArgs({ options: { chunks: { type: 'string', default: '600' } } })
const count = Number(values.chunks)

const { documents } = await loadCmrc()
const docs = syntheticDocuments(documents.map((d) => d.text), count)
const dir = await mkdtemp(join(tmpdir(), 'recall-ingest-'))
const embedder = new LocalEmbedder({ modelDir: modelDir(), modelName: 'bge-small-zh-v1.5' })
await embedder.init()
const library = new DocumentLibrary({ vectors: new EmbeddedVectorStore({ dir }), embedder, lexical: new EmbeddedLexicalIndexes({ dir, name: 'bm25' }) }, { collection: 'chunks', namespace: 'default' })
await library.open()
const started = performance.now()
for (let i = 0; i < docs.length; i += 100) await library.ingest(docs.slice(i, i + 100))
const seconds = (performance.now() - started) / 1000
const chars = docs.reduce((n, d) => n + [...d.text].length, 0)
const result = {
  date: new Date().toISOString(),
  chunks: library.chunkCount,
  mean_chunk_chars: Math.round(chars / docs.length),
  seconds: Math.round(seconds * 10) / 10,
  chunks_per_second: Math.round((library.chunkCount / seconds) * 10) / 10,
  batch: '100 documents per ingest call, local model with batchSize 1'
}
console.log(JSON.stringify(result))
await writeFile('bench/results/ingest-rate.json', `${JSON.stringify(result, null, 2)}\n`)
await embedder.close()
await rm(dir, { recursive: true, force: true })

/**
 * MRR@10 (and Recall@5) of hybrid and of each leg alone on the demo judged sets (bench/judged/*.jsonl, an item
 * counts when its text holds an answer) and, with `--cmrc`, on CMRC 2018 trial (a hit on the paragraph counts),
 * over the demo corpus as the current chunker and contextual header index it; with `--public DIR`, also on the
 * Markdown chapters of a public documentation corpus (ruanyf/es6tutorial's `docs/`, fetched apart: not in this
 * repository) judged by bench/judged/es6tutorial.jsonl (a hit on the chapter counts). Run it once per variant to
 * compare: the figures go to bench/results/contextual-header/<label>.json.
 *
 *   nice -n 10 npx tsx bench/contextual-header.ts LABEL [--cmrc] [--public /path/to/es6tutorial/docs]
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { basename } from 'node:path'
import type { HybridRequest } from '../adapters/hybrid/index.js'
import { readDocuments } from '../src/corpus/files.js'
import { parseJudgedSet } from '../src/evaluation/judged-set.js'
import { scoreQuestion, type JudgedItem } from '../src/evaluation/metrics.js'
import { LocalEmbedder } from '../src/providers/embedder/local.js'
import { loadCmrc } from './lib/cmrc.js'
import { buildHybridCorpus, modelDir, PrecomputedQueries, type HybridCorpus } from './lib/corpus.js'
import { measure } from './lib/quality.js'

const ARMS: { name: string; options: Omit<HybridRequest, 'query' | 'top_k'> }[] = [
  { name: 'hybrid', options: {} },
  { name: 'lexical', options: { legs: ['lexical'] } },
  { name: 'vector', options: { legs: ['vector'] } }
]

interface ArmFigures { mrr_at_10: number; recall_at_5: number }

async function judged(corpus: HybridCorpus, embedder: PrecomputedQueries, file: string): Promise<Record<string, ArmFigures>> {
  const questions = parseJudgedSet(await readFile(file, 'utf8'))
  await embedder.prepare(questions.map((q) => q.query))
  const out: Record<string, ArmFigures> = {}
  for (const arm of ARMS) {
    let mrr = 0
    let recall = 0
    for (const q of questions) {
      const { items } = await corpus.adapter.retrieve({ query: q.query, top_k: 10, ...arm.options })
      const score = scoreQuestion(items as JudgedItem[], q, [5])
      mrr += score.mrr_at_10
      recall += score.recall[5]!
    }
    out[arm.name] = { mrr_at_10: round(mrr / questions.length), recall_at_5: round(recall / questions.length) }
  }
  return out
}

const round = (x: number) => Math.round(x * 10_000) / 10_000

async function main(): Promise<void> {
  const label = process.argv[2]
  if (!label || label.startsWith('--')) throw new Error('usage: bench/contextual-header.ts LABEL [--cmrc]')
  const embedder = new PrecomputedQueries(new LocalEmbedder({ modelDir: modelDir(), modelName: 'bge-small-zh-v1.5' }))
  const result: Record<string, unknown> = { label, date: new Date().toISOString() }

  const demo = await buildHybridCorpus(await readDocuments(['demo/documents']), embedder)
  result.demo_chunks = demo.library.chunkCount
  for (const file of ['bench/judged/demo-corpus.jsonl', 'bench/judged/demo-memory.jsonl']) {
    result[basename(file, '.jsonl')] = await judged(demo, embedder, file)
    console.error(basename(file), JSON.stringify(result[basename(file, '.jsonl')]))
  }
  await demo.close()

  const publicAt = process.argv.indexOf('--public')
  if (publicAt > 0) {
    const dir = process.argv[publicAt + 1]
    if (!dir) throw new Error('--public needs the folder of the corpus')
    const started = performance.now()
    const corpus = await buildHybridCorpus(await readDocuments([dir]), embedder)
    const ingestMs = Math.round(performance.now() - started)
    result.es6tutorial = { documents: corpus.library.documentCount, chunks: corpus.library.chunkCount, ingest_ms: ingestMs, ...await judged(corpus, embedder, 'bench/judged/es6tutorial.jsonl') }
    console.error('es6tutorial', JSON.stringify(result.es6tutorial))
    await corpus.close()
  }

  if (process.argv.includes('--cmrc')) {
    const set = await loadCmrc()
    const cmrc = await buildHybridCorpus(set.documents, embedder)
    await embedder.prepare(set.queries.map((q) => q.query))
    const figures: Record<string, ArmFigures> = {}
    for (const arm of ARMS) {
      const f = await measure(cmrc.adapter, set.queries, arm.options)
      figures[arm.name] = { mrr_at_10: round(f.mrr_at_10), recall_at_5: round(f.recall_at_5) }
    }
    result.cmrc = { chunks: cmrc.library.chunkCount, ...figures }
    console.error('cmrc', JSON.stringify(result.cmrc))
    await cmrc.close()
  }
  await mkdir('bench/results/contextual-header', { recursive: true })
  await writeFile(`bench/results/contextual-header/${label}.json`, `${JSON.stringify(result, null, 2)}\n`)
  await embedder.close()
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})

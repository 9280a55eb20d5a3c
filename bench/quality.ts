/**
 * Retrieval quality on CMRC 2018 trial (../shared/data): Recall@1/5/10, MRR@10 and nDCG@10 per document for
 * the lexical leg with CJK bigrams, the lexical leg split on whitespace, the vector leg alone and hybrid,
 * plus a sweep of the RRF settings. Writes bench/results/quality.json and quality.md.
 *
 *   npx tsx bench/quality.ts            (MODEL_DIR, CMRC_PATH may be set)
 */
import { writeFile } from 'node:fs/promises'
import { loadCmrc } from './lib/cmrc.js'
import { buildHybridCorpus, modelDir, PrecomputedQueries } from './lib/corpus.js'
import { measure } from './lib/quality.js'
import { LocalEmbedder } from '../src/providers/embedder/local.js'
import type { QualityFigures } from './lib/metrics.js'


async function main(): Promise<void> {
  const { documents, queries } = await loadCmrc()
  const embedder = new PrecomputedQueries(new LocalEmbedder({ modelDir: modelDir(), modelName: 'bge-small-zh-v1.5' }))
  const corpus = await buildHybridCorpus(documents, embedder)
  console.error(`corpus: ${documents.length} documents, ${corpus.library.chunkCount} chunks, ingested in ${corpus.ingestSeconds.toFixed(1)} s`)
  const t0 = performance.now()
  await embedder.prepare(queries.map((q) => q.query))
  console.error(`embedded ${queries.length} queries in ${((performance.now() - t0) / 1000).toFixed(1)} s`)

  const rows: { name: string; settings: Record<string, unknown>; figures: QualityFigures }[] = []
  const run = async (name: string, settings: Record<string, unknown>, adapter = corpus.adapter) => {
    const figures = await measure(adapter, queries, settings)
    rows.push({ name, settings, figures })
    console.error(`${name.padEnd(28)} R@1 ${figures.recall_at_1.toFixed(4)}  R@5 ${figures.recall_at_5.toFixed(4)}  R@10 ${figures.recall_at_10.toFixed(4)}  MRR@10 ${figures.mrr_at_10.toFixed(4)}`)
  }

  await run('lexical (CJK bigrams)', { legs: ['lexical'] })
  await run('lexical (whitespace)', { legs: ['lexical'] }, await corpus.withAnalyzer('whitespace'))
  await run('vector', { legs: ['vector'] })
  await run('hybrid (k 60, window 50)', {})
  for (const k of [1, 10, 30, 100]) await run(`hybrid k ${k}`, { rrf_k: k })
  for (const window of [10, 20, 100]) await run(`hybrid window ${window}`, { window })
  for (const [v, l] of [[1, 1.5], [1.5, 1], [1, 2], [2, 1]] as const) await run(`hybrid weights v${v} l${l}`, { weights: { vector: v, lexical: l } })
  await run('hybrid rrf (explicit)', { fusion: 'rrf' })
  for (const normalisation of ['tmm', 'minmax', 'zscore'] as const) {
    for (const alpha of [0.3, 0.4, 0.5, 0.6, 0.7, 0.8]) await run(`convex ${normalisation} alpha ${alpha}`, { fusion: 'convex', normalisation, alpha })
  }

  const result = {
    dataset: 'cmrc2018_trial (256 paragraphs as documents, 1,002 questions)',
    counted: 'per document: a hit on any chunk of the relevant paragraph counts',
    documents: documents.length,
    chunks: corpus.library.chunkCount,
    model: 'bge-small-zh-v1.5 (q8, local ONNX)',
    date: new Date().toISOString(),
    rows
  }
  await writeFile('bench/results/quality.json', `${JSON.stringify(result, null, 2)}\n`)
  const table = ['| run | R@1 | R@5 | R@10 | MRR@10 | nDCG@10 |', '|---|---|---|---|---|---|',
    ...rows.map((r) => `| ${r.name} | ${r.figures.recall_at_1.toFixed(4)} | ${r.figures.recall_at_5.toFixed(4)} | ${r.figures.recall_at_10.toFixed(4)} | ${r.figures.mrr_at_10.toFixed(4)} | ${r.figures.ndcg_at_10.toFixed(4)} |`)]
  await writeFile('bench/results/quality.md', `# Quality on CMRC 2018 trial\n\n${result.dataset}; ${result.counted}. ${result.chunks} chunks. Run ${result.date}.\n\n${table.join('\n')}\n`)
  await corpus.close()
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})

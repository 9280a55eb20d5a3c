/**
 * Episodic quality against hybrid, side by side, with the real local model on the embedded stores:
 * top-1, top-3 and MRR@10 for episodic with `normalisation: "query"`, with `"collection"` (m-flow) and
 * for hybrid. Writes bench/results/episodic-quality.json and .md.
 *
 *   npx tsx bench/episodic-quality.ts [--set demo|cmrc|all] [--episodes FILE] [--out NAME]
 *
 * demo: the questions of bench/episodic-quality/questions.jsonl (written before the first run, see its
 *   README) over demo/episodes.json (or --episodes FILE); an episodic item counts when it is one of the
 *   question's Episodes, a hybrid item over demo/documents when its chunk text contains the answer string.
 * cmrc: CMRC 2018 trial turned into Episodes mechanically, with nothing added: one Episode per paragraph
 *   (name: the article title; summary: the paragraph), one facet per sentence of it (search_text: the
 *   sentence), no points, no entities; each question's relevant Episode is its paragraph. Hybrid indexes
 *   the same paragraphs as documents and counts a chunk of the paragraph.
 */
import { loadavg } from 'node:os'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { DEFAULT_EPISODIC_CONFIG } from '../adapters/episodic/config.js'
import { preprocessQuery } from '../adapters/episodic/preprocess.js'
import { splitSentences } from '../src/corpus/chunker.js'
import type { EpisodesIngestBody } from '../src/corpus/episodes/schema.js'
import { readDocuments } from '../src/corpus/files.js'
import { LocalEmbedder } from '../src/providers/embedder/local.js'
import { CMRC_PATH, loadCmrc } from './lib/cmrc.js'
import { buildHybridCorpus, modelDir } from './lib/corpus.js'
import {
  askEpisodic, buildEpisodicMemory, DEMO_EPISODES, DEMO_NOW, firstHitRank, loadQuestions, MemoEmbedder, rankFigures,
  type EpisodicQuestion, type RankFigures
} from './lib/episodic-memory.js'
import { foldToDocuments } from './lib/metrics.js'

const ROOT = resolve(import.meta.dirname, '..')
const { values: args } = parseArgs({
  options: {
    set: { type: 'string', default: 'all' },
    episodes: { type: 'string', default: DEMO_EPISODES },
    out: { type: 'string', default: 'episodic-quality' }
  }
})

const round = (x: number) => Math.round(x * 100) / 100

interface Question extends EpisodicQuestion {
  /** For hybrid: the documents whose chunks count (CMRC), else the answer string decides. */
  relevant_docs?: string[]
}

async function runSet(name: string, body: unknown, questions: Question[], documents: Awaited<ReturnType<typeof readDocuments>>, embedder: MemoEmbedder) {
  const started = performance.now()
  const memory = await buildEpisodicMemory(body, embedder)
  console.error(`${name}: ${memory.ingested.episodes} Episodes, ${memory.ingested.facets} facets, ${memory.ingested.vectors} vectors ` +
    `(${memory.ingested.warnings_total} ingest warnings) in ${round((performance.now() - started) / 1000)} s`)
  const hybrid = await buildHybridCorpus(documents, embedder)
  console.error(`${name}: hybrid over ${documents.length} documents, ${hybrid.library.chunkCount} chunks`)
  type Asked = Awaited<ReturnType<typeof askEpisodic>>
  const rows: Array<{ query: string; relevant_ids: string[]; query_rule: Asked; collection_rule: Asked; hybrid: { rank: number | null } }> = []
  try {
    for (const [i, q] of questions.entries()) {
      const queryRule = await askEpisodic(memory, q, 'query')
      const collectionRule = await askEpisodic(memory, q, 'collection')
      const { items } = await hybrid.adapter.retrieve({ query: q.query, top_k: 10 })
      const hybridRank = q.relevant_docs
        ? firstHitRank(foldToDocuments(items.map((it) => it.id)), (doc) => q.relevant_docs!.includes(doc))
        : firstHitRank(items, (it) => it.text.includes(q.answer))
      rows.push({ query: q.query, relevant_ids: q.relevant_ids, query_rule: queryRule, collection_rule: collectionRule, hybrid: { rank: hybridRank } })
      if ((i + 1) % 100 === 0) console.error(`${name}: ${i + 1}/${questions.length}`)
    }
  } finally {
    await memory.close()
    await hybrid.close()
  }
  const ruled = (key: 'query_rule' | 'collection_rule') => ({ ...rankFigures(rows.map((r) => r[key].rank)), first_two_tie: rows.filter((r) => r[key].tied).length })
  const figures: Record<string, RankFigures & { first_two_tie?: number }> = {
    episodic_query: ruled('query_rule'),
    episodic_collection: ruled('collection_rule'),
    hybrid: rankFigures(rows.map((r) => r.hybrid.rank))
  }
  for (const [arm, f] of Object.entries(figures)) {
    console.error(`${name} ${arm.padEnd(20)} top-1 ${f.top_1.toFixed(4)}  top-3 ${f.top_3.toFixed(4)}  MRR@10 ${f.mrr_at_10.toFixed(4)}` +
      (f.first_two_tie !== undefined ? `  first two tie: ${f.first_two_tie}` : ''))
  }
  // Every question's ranks for a hand-written set; a large one keeps only its figures.
  return { questions: questions.length, ingest_warnings: memory.ingested.warnings_total, figures, ...(rows.length <= 200 ? { per_question: rows } : {}) }
}

/** CMRC 2018 trial as Episodes, mechanically (see the header). */
async function cmrcSet() {
  const squad = JSON.parse(await readFile(CMRC_PATH, 'utf8')) as {
    data: { title: string; paragraphs: { id: string; context: string }[] }[]
  }
  const body: EpisodesIngestBody = {
    episodes: squad.data.flatMap((article) => article.paragraphs.map((p) => ({
      id: p.id, name: article.title, summary: p.context,
      facets: splitSentences(p.context).map((sentence, i) => ({ id: `${p.id}.s${i}`, search_text: sentence }))
    })))
  }
  const { documents, queries } = await loadCmrc()
  const questions: Question[] = queries.map((q) => ({ query: q.query, relevant_ids: q.relevant_ids, relevant_docs: q.relevant_ids, answer: '' }))
  return { body, documents, questions }
}

async function main(): Promise<void> {
  const started = Date.now()
  const load: number[][] = [loadavg()]
  const embedder = new MemoEmbedder(new LocalEmbedder({ modelDir: modelDir(), modelName: 'bge-small-zh-v1.5' }))
  const sets: Record<string, unknown> = {}
  try {
    if (args.set === 'demo' || args.set === 'all') {
      const questions = await loadQuestions()
      // The adapter embeds the preprocessed question; embed those texts one by one up front.
      await embedder.embedQueries(questions.map((q) => preprocessQuery(q.query, DEFAULT_EPISODIC_CONFIG, DEMO_NOW).vector_query))
      const body = JSON.parse(await readFile(args.episodes, 'utf8')) as unknown
      sets['demo'] = { episodes_file: args.episodes.replace(`${ROOT}/`, ''), ...await runSet('demo', body, questions, await readDocuments([resolve(ROOT, 'demo/documents')]), embedder) }
      load.push(loadavg())
    }
    if (args.set === 'cmrc' || args.set === 'all') {
      const { body, documents, questions } = await cmrcSet()
      sets['cmrc'] = {
        construction: 'one Episode per paragraph (name: article title, summary: paragraph), one facet per sentence (search_text: the sentence), no points, no entities; relevant Episode = the question\'s paragraph; hybrid indexes the same paragraphs as documents',
        ...await runSet('cmrc', body, questions, documents, embedder)
      }
      load.push(loadavg())
    }
  } finally {
    await embedder.close()
  }
  const output = {
    generated_by: 'bench/episodic-quality.ts',
    date: new Date().toISOString(),
    model: 'bge-small-zh-v1.5 (q8, local ONNX), each query embedded on its own',
    load_average_1_5_15: load.map((l) => l.map(round)),
    counted: {
      top_1: 'share of questions whose first item is a hit',
      top_3: 'share with a hit among the first three',
      mrr_at_10: 'mean of 1/rank of the first hit within ten, 0 without one',
      episodic_hit: 'the item is one of the question\'s Episodes (equal costs are ordered by Episode id, as served)',
      hybrid_hit: 'demo: the chunk text contains the question\'s answer string; cmrc: the chunk belongs to the question\'s paragraph'
    },
    sets,
    took_s: round((Date.now() - started) / 1000)
  }
  await mkdir(resolve(ROOT, 'bench/results'), { recursive: true })
  await writeFile(resolve(ROOT, 'bench/results', `${args.out}.json`), `${JSON.stringify(output, null, 2)}\n`)
  const lines = ['# Episodic quality against hybrid', '', `Run ${output.date} by \`npx tsx bench/episodic-quality.ts\`; ${output.model}.`, '']
  for (const [name, set] of Object.entries(sets) as Array<[string, { questions: number; figures: Record<string, { top_1: number; top_3: number; mrr_at_10: number; first_two_tie?: number }> }]>) {
    lines.push(`## ${name} (${set.questions} questions)`, '', '| arm | top-1 | top-3 | MRR@10 | first two tie |', '|---|---|---|---|---|')
    for (const [arm, f] of Object.entries(set.figures)) {
      lines.push(`| ${arm} | ${f.top_1.toFixed(4)} | ${f.top_3.toFixed(4)} | ${f.mrr_at_10.toFixed(4)} | ${f.first_two_tie ?? '–'} |`)
    }
    lines.push('')
  }
  await writeFile(resolve(ROOT, 'bench/results', `${args.out}.md`), `${lines.join('\n')}\n`)
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})

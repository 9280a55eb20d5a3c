/**
 * Chooses hybrid's default fusion by measurement: on CMRC 2018 trial (../shared/data) and on the demo corpus
 * questions (bench/judged/demo-corpus.jsonl), each leg's candidates are fetched once and every setting of the
 * tuning grid is scored; 5-fold cross-validation gives held-out figures, and a split by article (settings
 * fitted on half the CMRC articles, judged on the other half) checks that a fit does not carry over only
 * within one set. Writes bench/results/fusion.json and fusion.md.
 *
 *   nice -n 10 npx tsx bench/fusion.ts        (MODEL_DIR, CMRC_PATH may be set)
 */
import { readFile, writeFile } from 'node:fs/promises'
import { readDocuments } from '../src/corpus/files.js'
import { parseJudgedSet, type JudgedQuestion } from '../src/evaluation/judged-set.js'
import type { JudgedItem } from '../src/evaluation/metrics.js'
import { BASELINES, crossValidate, meanFigures, scoreSetting, settingLabel, settingsGrid, WINDOWS, type Figures, type QuestionLegs, type Setting } from '../src/evaluation/tuning.js'
import { LocalEmbedder } from '../src/providers/embedder/local.js'
import { loadCmrc } from './lib/cmrc.js'
import { buildHybridCorpus, modelDir, PrecomputedQueries, type HybridCorpus } from './lib/corpus.js'

async function collect(corpus: HybridCorpus, questions: readonly JudgedQuestion[]): Promise<QuestionLegs[]> {
  const out: QuestionLegs[] = []
  const window = Math.max(...WINDOWS)
  for (const question of questions) {
    const items = new Map<string, JudgedItem>()
    const legs = []
    for (const leg of ['vector', 'lexical'] as const) {
      const { items: found } = await corpus.adapter.retrieve({ query: question.query, top_k: window, legs: [leg], window, fusion: 'rrf' })
      for (const i of found) items.set(i.id, i as JudgedItem)
      legs.push({ leg, hits: found.map((i) => ({ id: i.id, score: (i.metadata.legs as Record<string, { score: number }>)[leg]!.score })) })
    }
    out.push({ question, legs, item: (id) => items.get(id) })
  }
  return out
}

const row = (label: string, f: Figures) => `| ${label} | ${f.mrr_at_10.toFixed(4)} | ${f.recall_at_1.toFixed(4)} | ${f.recall_at_5.toFixed(4)} | ${f.recall_at_10.toFixed(4)} | ${f.ndcg_at_10.toFixed(4)} |`
const HEAD = ['| setting | MRR@10 | R@1 | R@5 | R@10 | nDCG@10 |', '|---|---|---|---|---|---|']

async function main(): Promise<void> {
  const embedder = new PrecomputedQueries(new LocalEmbedder({ modelDir: modelDir(), modelName: 'bge-small-zh-v1.5' }))
  const grid = settingsGrid()
  const fixed: { label: string; setting: Setting }[] = [
    ...BASELINES,
    ...[0.5, 0.6, 0.7].flatMap((alpha) => (['tmm', 'minmax', 'zscore'] as const).map((normalisation) => ({ label: `convex ${normalisation} alpha=${alpha} window=50`, setting: { fusion: 'convex', window: 50, alpha, normalisation } as Setting })))
  ]
  const report: Record<string, unknown> = { date: new Date().toISOString(), model: 'bge-small-zh-v1.5 (q8, local ONNX)', grid: grid.length }
  const md: string[] = ['# Fusion settings measured', '', `Every setting of the tuning grid (${grid.length}) over each leg's top 100 candidates, fetched once per question. Ranks are item (chunk) ranks; a document\'s second chunk finds nothing new.`, '']

  // Demo corpus, by answer string
  const demo = await buildHybridCorpus(await readDocuments(['demo/documents']), embedder)
  const demoQuestions = parseJudgedSet(await readFile('bench/judged/demo-corpus.jsonl', 'utf8'))
  await embedder.prepare(demoQuestions.map((q) => q.query))
  const demoData = await collect(demo, demoQuestions)
  await demo.close()
  const demoFixed = fixed.map((b) => ({ label: b.label, figures: meanFigures(scoreSetting(demoData, b.setting)) }))
  const demoCv = crossValidate(demoData, grid, BASELINES, 5, 42)
  report.demo_corpus = { questions: demoQuestions.length, fixed: demoFixed, cv: demoCv }
  md.push(`## Demo corpus (${demoQuestions.length} questions of bench/judged/demo-corpus.jsonl, relevant = chunk text contains the answer)`, '', ...HEAD,
    ...demoFixed.map((b) => row(b.label, b.figures)), row(`tuned, 5-fold held-out (fitted on all: ${demoCv.best.label})`, demoCv.held_out), '')
  console.error('demo corpus done')

  const set = await loadCmrc()
  const cmrc = await buildHybridCorpus(set.documents, embedder)
  console.error(`cmrc: ${cmrc.library.chunkCount} chunks in ${cmrc.ingestSeconds.toFixed(0)} s`)
  await embedder.prepare(set.queries.map((q) => q.query))
  // CMRC trial has one paragraph per article: the paragraph is the article.
  const articleOf = (docId: string) => docId
  const questions: JudgedQuestion[] = set.queries.map((q, i) => ({ id: `cmrc-${i}`, line: i + 1, query: q.query, relevant: { doc_ids: q.relevant_ids }, match: 'all' }))
  const data = await collect(cmrc, questions)
  await cmrc.close()
  const cmrcFixed = fixed.map((b) => ({ label: b.label, figures: meanFigures(scoreSetting(data, b.setting)) }))
  const cv = crossValidate(data, grid, BASELINES, 5, 42)
  // Split by article: fit on the even-numbered articles, judge on the odd ones, and the other way round.
  const articles = [...new Set(set.queries.map((q) => articleOf(q.relevant_ids[0]!)))]
  const half = (parity: number) => data.filter((d) => articles.indexOf(articleOf(d.question.relevant.doc_ids![0]!)) % 2 === parity)
  const split = [0, 1].map((p) => {
    const train = half(p)
    const test = half(1 - p)
    const fit = crossValidate(train, grid, [], 2, 1).best
    return { fitted_on: p === 0 ? 'even articles' : 'odd articles', setting: fit.label, train: fit.figures, held_out: meanFigures(scoreSetting(test, fit.setting)), held_out_questions: test.length }
  })
  report.cmrc = { questions: questions.length, fixed: cmrcFixed, cv, split_by_article: split }
  md.push(`## CMRC 2018 trial (${questions.length} questions, relevant = the question's paragraph)`, '', ...HEAD,
    ...cmrcFixed.map((b) => row(b.label, b.figures)), row(`tuned, 5-fold held-out (fitted on all: ${cv.best.label})`, cv.held_out), '',
    '### Fitted on half the articles, judged on the other half', '', ...HEAD, ...split.map((s) => row(`${s.setting} (fitted on ${s.fitted_on})`, s.held_out)), '')
  await writeFile('bench/results/fusion.json', `${JSON.stringify(report, null, 2)}\n`)
  await writeFile('bench/results/fusion.md', `${md.join('\n')}\n`)
  console.error(md.join('\n'))
  void settingLabel
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})

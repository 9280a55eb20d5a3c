/**
 * npm run tune -- FILE [--namespace NS] [--folds 5] [--seed 42] [--apply] [--out FILE.json] [--url URL]
 *
 * Fits hybrid's fusion (rrf: k, lexical weight, window; convex: alpha, normalisation, window) on a judged set
 * by k-fold cross-validation against the running service, prints the held-out figures beside the defaults, and
 * with --apply stores the setting fitted on the whole set as the namespace's retrieval defaults.
 */
import type { HybridMetadata } from '../../adapters/hybrid/spec.js'
import { readFile, writeFile } from 'node:fs/promises'
import { parseArgs } from 'node:util'
import type { LegHits } from '../../adapters/hybrid/fusion.js'
import { parseJudgedSet } from '../evaluation/judged-set.js'
import type { JudgedItem } from '../evaluation/metrics.js'
import { BASELINES, crossValidate, settingsGrid, WINDOWS, type Figures, type QuestionLegs } from '../evaluation/tuning.js'
import type { RetrieveResponse } from '../schemas/recall-item.js'
import { ProgressBar } from './progress.js'
import { callService, serviceUrl } from './service-client.js'

const USAGE = `usage: npm run tune -- FILE [--namespace NS] [--folds 5] [--seed 42] [--apply] [--out FILE.json] [--url URL]`

async function legsOf(url: string, namespace: string, query: string): Promise<{ legs: LegHits[]; items: Map<string, JudgedItem> }> {
  const items = new Map<string, JudgedItem>()
  const legs: LegHits[] = []
  for (const leg of ['vector', 'lexical'] as const) {
    const window = Math.max(...WINDOWS)
    const { body } = await callService<RetrieveResponse>(url, 'POST', '/retrieve', { mode: 'hybrid', namespace, query, legs: [leg], window, top_k: Math.min(100, window), fusion: 'rrf' })
    const hits: { id: string; score: number }[] = []
    for (const item of body.recall_bundle) {
      const score = (item.metadata as Partial<HybridMetadata>).legs?.[leg]?.score
      if (score === undefined) continue
      hits.push({ id: item.id, score })
      items.set(item.id, item as JudgedItem)
    }
    legs.push({ leg, hits })
  }
  return { legs, items }
}

const fmt = (f: Figures) => `MRR@10 ${f.mrr_at_10.toFixed(4)}  R@1 ${f.recall_at_1.toFixed(4)}  R@5 ${f.recall_at_5.toFixed(4)}  R@10 ${f.recall_at_10.toFixed(4)}  nDCG@10 ${f.ndcg_at_10.toFixed(4)}`

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      namespace: { type: 'string', default: 'default' }, folds: { type: 'string', default: '5' }, seed: { type: 'string', default: '42' },
      apply: { type: 'boolean' }, out: { type: 'string' }, url: { type: 'string' }, help: { type: 'boolean' }
    }
  })
  const file = positionals[0]
  if (values.help || !file) {
    console.error(USAGE)
    process.exit(values.help ? 0 : 2)
  }
  const url = serviceUrl(values.url)
  const questions = parseJudgedSet(await readFile(file, 'utf8'))
  const namespace = values.namespace!
  const bar = new ProgressBar(questions.length, 'questions')
  const data: QuestionLegs[] = []
  for (const question of questions) {
    const { legs, items } = await legsOf(url, namespace, question.query)
    data.push({ question, legs, item: (id) => items.get(id) })
    bar.advance(1)
  }
  bar.done()
  const grid = settingsGrid()
  const result = crossValidate(data, grid, BASELINES, Number(values.folds), Number(values.seed))
  console.log(`${questions.length} questions, ${grid.length} settings, ${result.folds}-fold cross-validation (held-out figures):`)
  console.log(`  fitted per fold                   ${fmt(result.held_out)}`)
  for (const b of result.baselines) console.log(`  ${b.label.padEnd(33)} ${fmt(b.held_out)}`)
  for (const f of result.per_fold) console.log(`  fold ${f.fold}: ${f.setting} -> MRR@10 ${f.held_out.mrr_at_10.toFixed(4)}`)
  console.log(`fitted on every question: ${result.best.label}  (${fmt(result.best.figures)}, in-sample)`)
  if (values.out) await writeFile(values.out, `${JSON.stringify({ file, namespace, date: new Date().toISOString(), questions: questions.length, ...result }, null, 2)}\n`)
  if (values.apply) {
    const s = result.best.setting
    const hybrid = s.fusion === 'convex'
      ? { fusion: 'convex', alpha: s.alpha, normalisation: s.normalisation, window: s.window }
      : { fusion: 'rrf', rrf_k: s.k, weights: s.weights, window: s.window }
    const note = `npm run tune -- ${file}: ${result.best.label}; ${result.folds}-fold held-out ${fmt(result.held_out)}`
    await callService(url, 'PUT', `/namespaces/${namespace}/retrieval-defaults`, { hybrid, note })
    console.log(`applied to namespace "${namespace}": ${JSON.stringify(hybrid)}`)
  }
}

main().catch((error: unknown) => {
  console.error((error as Error).message)
  process.exit(1)
})

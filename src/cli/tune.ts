/**
 * npm run tune -- FILE [--namespace NS] [--folds 5] [--seed 42] [--apply] [--out FILE.json] [--url URL]
 *
 * Fits hybrid's fusion (rrf: k, lexical weight, window; convex: alpha, normalisation, window) on a judged set
 * by k-fold cross-validation against the running service, prints the held-out figures beside the defaults, and
 * with --apply stores the setting fitted on the whole set as the namespace's retrieval defaults. Where the namespace
 * has a knowledge graph (the part its `structures` setting reads), every setting is also tried with the `graph` leg;
 * the report shows the best with and without it, and the leg is kept (stored in `legs`) only when strictly better.
 */
import type { HybridMetadata } from '../../adapters/hybrid/spec.js'
import { readFile, writeFile } from 'node:fs/promises'
import { parseArgs } from 'node:util'
import type { LegHits } from '../../adapters/hybrid/fusion.js'
import { parseJudgedSet } from '../evaluation/judged-set.js'
import type { JudgedItem } from '../evaluation/metrics.js'
import { BASELINES, crossValidate, decidingFigure, GRAPH_BASELINES, settingsGrid, TWO_LEGS, WINDOWS, type Figures, type QuestionLegs, type Setting, type TuneResult } from '../evaluation/tuning.js'
import type { RetrieveResponse } from '../schemas/recall-item.js'
import { ProgressBar } from './progress.js'
import { callService, serviceUrl } from './service-client.js'

const USAGE = `usage: npm run tune -- FILE [--namespace NS] [--folds 5] [--seed 42] [--apply] [--out FILE.json] [--url URL]`

type Leg = 'vector' | 'lexical' | 'graph'

/**
 * One question's hits of each leg asked alone; the graph leg's report too when it was asked (`skipped` when the
 * namespace has no graph to read).
 */
async function legsOf(url: string, namespace: string, query: string, legs: readonly Leg[]): Promise<{ legs: LegHits[]; items: Map<string, JudgedItem>; graph?: RetrieveResponse['legs'][number] }> {
  const items = new Map<string, JudgedItem>()
  const out: LegHits[] = []
  let graph: RetrieveResponse['legs'][number] | undefined
  for (const leg of legs) {
    const window = Math.max(...WINDOWS)
    const { body } = await callService<RetrieveResponse>(url, 'POST', '/retrieve', { mode: 'hybrid', namespace, query, legs: [leg], window, top_k: Math.min(100, window), fusion: 'rrf' })
    if (leg === 'graph') graph = body.legs.find((l) => l.name === 'graph')
    const hits: { id: string; score: number }[] = []
    for (const item of body.recall_bundle) {
      const score = (item.metadata as Partial<HybridMetadata>).legs?.[leg]?.score
      if (score === undefined) continue
      hits.push({ id: item.id, score })
      items.set(item.id, item as JudgedItem)
    }
    out.push({ leg, hits })
  }
  return { legs: out, items, ...(graph ? { graph } : {}) }
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
  // the graph leg is tried when the first question finds a graph to read; a leg that fails stops the run (a missing
  // list would count against the leg)
  let graph: boolean | undefined
  for (const question of questions) {
    const asked = await legsOf(url, namespace, question.query, graph === false ? ['vector', 'lexical'] : ['vector', 'lexical', 'graph'])
    if (asked.graph && asked.graph.status !== 'ok' && asked.graph.status !== 'skipped') {
      throw new Error(`question ${question.id ?? question.line}: the graph leg answered ${asked.graph.status}${asked.graph.reason ? ` (${asked.graph.reason})` : ''}`)
    }
    if (graph === undefined) {
      graph = asked.graph?.status === 'ok'
      if (!graph) console.error(`graph leg not tried: ${asked.graph?.reason ?? 'no graph leg report'}`)
    }
    data.push({ question, legs: graph ? asked.legs : asked.legs.filter((l) => l.leg !== 'graph'), item: (id) => asked.items.get(id) })
    bar.advance(1)
  }
  bar.done()
  const grid = settingsGrid({ graph: graph === true })
  const result = crossValidate(data, grid, graph ? [...BASELINES, ...GRAPH_BASELINES] : BASELINES, Number(values.folds), Number(values.seed))
  console.log(`${questions.length} questions, ${grid.length} settings, ${result.folds}-fold cross-validation (held-out figures):`)
  console.log(`  fitted per fold                   ${fmt(result.held_out)}`)
  for (const b of result.baselines) console.log(`  ${b.label.padEnd(33)} ${fmt(b.held_out)}`)
  for (const f of result.per_fold) console.log(`  fold ${f.fold}: ${f.setting} -> MRR@10 ${f.held_out.mrr_at_10.toFixed(4)}`)
  if (result.by_legs) for (const line of legsReport(result)) console.log(line)
  console.log(`fitted on every question: ${result.best.label}  (${fmt(result.best.figures)}, in-sample)`)
  if (values.out) await writeFile(values.out, `${JSON.stringify({ file, namespace, date: new Date().toISOString(), questions: questions.length, ...result }, null, 2)}\n`)
  if (values.apply) {
    const hybrid = storedDefaults(result.best.setting, graph === true)
    const note = `npm run tune -- ${file}: ${result.best.label}; ${result.folds}-fold held-out ${fmt(result.held_out)}`
    await callService(url, 'PUT', `/namespaces/${namespace}/retrieval-defaults`, { hybrid, note })
    console.log(`applied to namespace "${namespace}": ${JSON.stringify(hybrid)}`)
  }
}

/** The two rows, without and with the graph leg, and which was kept by which figure. */
function legsReport(result: TuneResult): string[] {
  const [two, three] = result.by_legs!
  const lines = ['legs (each the best setting among its own; held out, then fitted on every question):']
  for (const { legs, fit } of [two!, three!]) {
    lines.push(`  ${legs.join(',').padEnd(21)} held out ${fmt(fit.held_out)}`)
    lines.push(`  ${''.padEnd(21)} in-sample ${fmt(fit.best.figures)}  ${fit.best.label}`)
  }
  const k = decidingFigure(three!.fit.best.figures, two!.fit.best.figures)
  const [a, b] = k ? [three!.fit.best.figures[k].toFixed(4), two!.fit.best.figures[k].toFixed(4)] : []
  lines.push(k === undefined ? 'graph leg not kept: a tie with two legs keeps two legs'
    : three!.fit.best.figures[k] > two!.fit.best.figures[k] ? `graph leg kept: better on ${k} (${a} against ${b}, in-sample)`
      : `graph leg not kept: lower on ${k} (${a} against ${b}, in-sample)`)
  return lines
}

/** The namespace defaults of a fitted setting; `legs` is stored whenever the graph leg was tried, so the choice is recorded either way. */
function storedDefaults(s: Setting, graphTried: boolean): Record<string, unknown> {
  const legs = graphTried ? { legs: [...(s.legs ?? TWO_LEGS)] } : {}
  const withGraph = s.legs?.includes('graph') === true
  return s.fusion === 'convex'
    ? { fusion: 'convex', alpha: s.alpha, normalisation: s.normalisation, window: s.window, ...legs, ...(withGraph ? { graph_weight: s.graphWeight } : {}) }
    : { fusion: 'rrf', rrf_k: s.k, weights: s.weights, window: s.window, ...legs }
}

main().catch((error: unknown) => {
  console.error((error as Error).message)
  process.exit(1)
})

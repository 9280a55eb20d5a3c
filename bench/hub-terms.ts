/**
 * Documentation questions that name hub terms (issue #41, item 4): a docs site whose API terms dozens of pages repeat.
 *
 *   npx tsx bench/hub-terms.ts --count [--public DIR] [--min 20]
 *       the corpus written with the defaults (derived graph on, derived Episodes off), then every derived entity whose
 *       evidence spans at least `--min` documents, with its document count and one-hop degree, most documents first:
 *       the hub terms a question of bench/judged/vue-hubterms.jsonl must name two of. Answers no question.
 *   npx tsx bench/hub-terms.ts --quality [--public DIR] [--tag NAME]
 *       the same corpus with entity vectors on; bench/judged/vue-hubterms.jsonl (per document) through graphrag by names
 *       only, graphrag with entity vectors (floor 0.55), hybrid, and hybrid with the `graph` leg (convex, graph_weight
 *       1/3), each question through every arm (graphrag: the adapter over the service's ports; hybrid: GET /retrieve, the
 *       response cache off); R@5 and MRR@10 with 95% bootstrap intervals (2,000 resamples, seed 7), each arm over
 *       hybrid's R@5, and every question's first relevant rank per arm. graphrag is judged three ways: `passages`, its
 *       evidence chunks in answer order (item 1's evidence, then item 2's, each chunk once), as many as hybrid's items;
 *       `evidence`, its items by the documents of the evidence they quote; `items`, as /evaluate judges them (an item
 *       stands on every chunk its entity came from, so a hub cited by 75 of 81 pages matches nearly every question).
 *       Writes bench/results/hub-terms-vue[-NAME].json.
 *
 * The corpus: vuejs-translations/docs-zh-cn `src/guide/` and `src/api/` (81 Markdown files) copied to DIR (default
 * /work/vuecorpus), so that document ids are `guide-components-props`, `api-reactivity-core`, ...
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { createGraphragAdapter, nameSearchOf, passagesOf } from '../adapters/graphrag/index.js'
import { loadConfig } from '../src/config.js'
import { checkedDocuments } from '../src/corpus/documents-body.js'
import { readDocuments } from '../src/corpus/files.js'
import { parseJudgedSet } from '../src/evaluation/judged-set.js'
import { scoreQuestion, type JudgedItem } from '../src/evaluation/metrics.js'
import { bootstrapMean, resamples } from '../src/evaluation/statistics.js'
import { buildApp } from '../src/http/app.js'
import { ENTITY_NAME_COLLECTION } from '../src/kernel/entity-names.js'
import { createRuntime } from '../src/runtime.js'
import { openServices } from '../src/services.js'

const { values } = parseArgs({
  options: {
    count: { type: 'boolean' },
    quality: { type: 'boolean' },
    public: { type: 'string', default: '/work/vuecorpus' },
    min: { type: 'string', default: '20' },
    tag: { type: 'string' }
  }
})
const round = (x: number, digits = 3) => Math.round(x * 10 ** digits) / 10 ** digits
const load = () => loadavg().map((x) => round(x, 1))
const SLOW = { EMBEDDING_TIMEOUT_MS: '60000', VECTOR_TIMEOUT_MS: '60000', LEXICAL_TIMEOUT_MS: '60000', GRAPH_TIMEOUT_MS: '60000', MAX_EMBEDDING_WAIT_MS: '0' }
const NS = 'hub-terms-vue'

async function written(entityVectors: boolean) {
  const dir = await mkdtemp(join(tmpdir(), 'recall-hub-terms-'))
  const config = loadConfig({
    DATA_DIR: dir, DEMO_DATA: 'false', LOG_LEVEL: 'silent', MODEL_DIR: process.env.MODEL_DIR ?? './models', EMBEDDING_SESSIONS: '0',
    RATE_LIMIT_MAX: '0', MAX_EVENT_LOOP_DELAY_MS: '0', DERIVED_GRAPH: 'true', DERIVED_EPISODES: 'false', CACHE_TTL_SECONDS: '0',
    ENTITY_VECTORS: String(entityVectors), ...SLOW
  })
  const services = await openServices(config)
  const app = await buildApp(createRuntime(services), { logger: false })
  await app.ready()
  const documents = await readDocuments([values.public!])
  const started = performance.now()
  const result = await services.writePath.write(NS, { kind: 'documents', op: 'upsert', documents: checkedDocuments({ documents, namespace: NS }) })
  if (entityVectors) await services.writePath.entityNamesIdle()
  const ingest = { documents: documents.length, chunks: result.chunks, derived: result.derived, ms: Math.round(performance.now() - started), load_after: load() }
  console.error('ingest', JSON.stringify(ingest))
  return { services, app, ingest, async close() { await app.close(); await rm(dir, { recursive: true, force: true }) } }
}

async function count() {
  const { services, close } = await written(false)
  try {
    const names = await services.graph.names(NS)
    const entities = []
    for (let i = 0; i < names.length; i += 1000) entities.push(...await services.graph.getEntities(NS, names.slice(i, i + 1000).map((n) => n.id)))
    const hubs = entities
      .map((e) => ({ id: e.id, name: e.name, documents: new Set((e.derived_from ?? []).map((d) => d.doc_id)).size, chunks: e.source_chunk_ids.length }))
      .filter((e) => e.documents >= Number(values.min))
      .sort((a, b) => b.documents - a.documents)
    const degree = new Map<string, number>()
    for (const h of hubs) {
      const hood = await services.graph.neighbourhood(NS, [h.id])
      degree.set(h.id, hood.entities.length - 1)
    }
    for (const h of hubs) console.log(`${h.documents}\t${h.chunks}\t${degree.get(h.id)}\t${h.name}`)
    console.error(`${hubs.length} entities in >= ${values.min} documents, of ${entities.length}`)
  } finally {
    await close()
  }
}

async function quality() {
  const questions = parseJudgedSet(await readFile('bench/judged/vue-hubterms.jsonl', 'utf8'))
  const { services, app, ingest, close } = await written(true)
  const report: Record<string, unknown> = { corpus: values.public, questions: questions.length, ingest, load_at_start: load() }
  const ask = (params: string) => async (q: string): Promise<JudgedItem[]> => {
    const r = await app.inject({ method: 'GET', url: `/retrieve?namespace=${NS}&top_k=10&${params}&q=${encodeURIComponent(q)}` })
    if (r.statusCode !== 200) throw new Error(`${r.statusCode}: ${r.body}`)
    return (r.json() as { recall_bundle: JudgedItem[] }).recall_bundle
  }
  const passages = passagesOf((namespace) => services.documents.get(namespace))
  const names = nameSearchOf(services.vectors, services.embedder, `${services.config.collectionPrefix}${ENTITY_NAME_COLLECTION}`)
  const byNames = createGraphragAdapter({ graph: services.graph, passages })
  const byMeaning = createGraphragAdapter({ graph: services.graph, passages, names }, { meaning: { floor: 0.55, limit: 5 } })
  const graphrag = (adapter: typeof byNames, label: string) => {
    const answers = new Map<string, Promise<JudgedItem[]>>()
    const answer = (q: string) => {
      let a = answers.get(q)
      if (!a) answers.set(q, (a = adapter.retrieve({ query: q, namespace: NS, top_k: 10 }).then((r) => r.items)))
      return a
    }
    return [
      { label: `${label} passages`, ask: async (q: string) => evidencePassages(await answer(q)) },
      { label: `${label} evidence`, ask: async (q: string) => (await answer(q)).map(({ metadata: { source_chunk_ids: _, ...metadata }, ...item }) => ({ ...item, metadata })) },
      { label: `${label} items`, ask: answer }
    ]
  }
  const arms: Array<{ label: string; ask: (q: string) => Promise<JudgedItem[]> }> = [
    ...graphrag(byNames, 'graphrag names only'),
    ...graphrag(byMeaning, 'graphrag meaning 0.55'),
    { label: 'hybrid', ask: ask('mode=hybrid') },
    { label: 'hybrid + graph', ask: ask('mode=hybrid&legs=vector,lexical,graph') }
  ]
  const samples = resamples(questions.length, 2000, 7)
  const interval = (v: number[]) => {
    const i = bootstrapMean(v, samples)
    return { mean: round(i.mean), ci: [round(i.ci_low), round(i.ci_high)] }
  }
  const perArm = new Map<string, { r5: number[]; mrr: number[]; ranks: Array<number | null> }>()
  try {
    for (const arm of arms) {
      const r5: number[] = []
      const mrr: number[] = []
      const ranks: Array<number | null> = []
      for (const q of questions) {
        const items = await arm.ask(q.query)
        const score = scoreQuestion(items, q, [5])
        r5.push(score.recall[5]!)
        mrr.push(score.mrr_at_10)
        ranks.push(score.mrr_at_10 > 0 ? Math.round(1 / score.mrr_at_10) : null)
      }
      perArm.set(arm.label, { r5, mrr, ranks })
      console.error(arm.label, round(r5.reduce((a, b) => a + b, 0) / r5.length), load())
    }
  } finally {
    await close()
  }
  const hybrid = perArm.get('hybrid')!.r5.reduce((a, b) => a + b, 0)
  const diff = (a: number[], b: number[]) => a.map((x, i) => x - b[i]!)
  report['arms'] = Object.fromEntries([...perArm].map(([label, v]) => [label, {
    recall_at_5: interval(v.r5), mrr_at_10: interval(v.mrr),
    recall_at_5_over_hybrid: round(v.r5.reduce((a, b) => a + b, 0) / Math.max(1e-9, hybrid)),
    minus_hybrid: { recall_at_5: interval(diff(v.r5, perArm.get('hybrid')!.r5)), mrr_at_10: interval(diff(v.mrr, perArm.get('hybrid')!.mrr)) }
  }]))
  report['per_question'] = questions.map((q, i) => ({ id: q.id, ranks: Object.fromEntries([...perArm].map(([label, v]) => [label, v.ranks[i]])) }))
  report['load_at_end'] = load()
  return report
}

/** graphrag's items as the passages they quote, in answer order, each chunk once, as many as hybrid answers (10). */
function evidencePassages(items: readonly JudgedItem[]): JudgedItem[] {
  const seen = new Set<string>()
  const passages: JudgedItem[] = []
  for (const item of items) {
    for (const e of (item.metadata['evidence'] ?? []) as Array<{ chunk_id: string }>) {
      if (seen.has(e.chunk_id) || passages.length === 10) continue
      seen.add(e.chunk_id)
      passages.push({ id: e.chunk_id, text: '', source: '', mode: 'graphrag', metadata: { doc_id: e.chunk_id.slice(0, e.chunk_id.lastIndexOf('#')) } })
    }
  }
  return passages
}

if (values.count) await count()
else if (values.quality) {
  const report = await quality()
  const { per_question: _, ...summary } = report
  console.log(JSON.stringify(summary, null, 2))
  await writeFile(`bench/results/hub-terms-vue${values.tag ? `-${values.tag}` : ''}.json`, JSON.stringify(report, null, 2) + '\n')
} else throw new Error('one of --count, --quality')

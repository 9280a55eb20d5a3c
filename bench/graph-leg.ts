/**
 * hybrid's `graph` leg (issue #41, items 1 and 4): quality side by side, and what it adds to a request's latency.
 *
 *   npx tsx bench/graph-leg.ts --quality es6|cmrc|relations [--public DIR] [--questions N] [--tag NAME]
 *       the corpus written with the defaults (derived graph on, derived Episodes off: no arm reads them), then
 *       POST /evaluate (bootstrap intervals, paired differences) with four arms: hybrid as it is (convex), hybrid with
 *       `graph` (convex, graph_weight 1/3), hybrid with RRF, hybrid with `graph` with RRF (ApeMind's fusion, weights 1).
 *       es6: ruanyf/es6tutorial's docs/ (`--public`, default /work/es6/docs), bench/judged/es6tutorial.jsonl, per document;
 *       cmrc: the CMRC 2018 trial set, the first N questions (default 1002), per paragraph; relations: the Markdown
 *       files under `--public` (default /work/relcorpus), bench/judged/relations.jsonl, per chunk (`ids`).
 *       Writes bench/results/graph-leg-<corpus>[-NAME].json.
 *   npx tsx bench/graph-leg.ts --latency 10000 [--rounds 3] [--embedder stand-in]
 *       N one-chunk CMRC documents (bench/lib/synthetic.ts), then every CMRC question asked through hybrid without and with
 *       the graph leg, alternating per question (so a busy machine's drift falls on both), GET /retrieve past the response
 *       cache (each question once per round and arm, the cache off); p50 / p99 of took_ms per arm, of their paired
 *       difference, and of the graph leg's own took_ms. Writes bench/results/graph-leg-latency-<N>[-standin].json.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { loadConfig } from '../src/config.js'
import { checkedDocuments } from '../src/corpus/documents-body.js'
import type { DocumentInput } from '../src/corpus/documents.js'
import { readDocuments } from '../src/corpus/files.js'
import { parseJudgedSet, type JudgedQuestion } from '../src/evaluation/judged-set.js'
import { percentiles } from '../src/evaluation/statistics.js'
import { buildApp } from '../src/http/app.js'
import { openServices, type Providers } from '../src/services.js'
import { createRuntime } from '../src/runtime.js'
import { loadCmrc } from './lib/cmrc.js'
import { standInEmbedder, syntheticDocuments } from './lib/synthetic.js'

const { values } = parseArgs({
  options: {
    quality: { type: 'string' },
    latency: { type: 'string' },
    rounds: { type: 'string', default: '1' },
    embedder: { type: 'string', default: 'real' },
    public: { type: 'string' },
    questions: { type: 'string', default: '1002' },
    tag: { type: 'string' }
  }
})
const round = (x: number, digits = 3) => Math.round(x * 10 ** digits) / 10 ** digits
const load = () => loadavg().map((x) => round(x, 1))
const GRAPH = ['vector', 'lexical', 'graph']
const ARMS = [
  { mode: 'hybrid' },
  { mode: 'hybrid', legs: GRAPH },
  { mode: 'hybrid', fusion: 'rrf' },
  { mode: 'hybrid', legs: GRAPH, fusion: 'rrf' }
]
const SLOW = { EMBEDDING_TIMEOUT_MS: '60000', VECTOR_TIMEOUT_MS: '60000', LEXICAL_TIMEOUT_MS: '60000', GRAPH_TIMEOUT_MS: '60000', MAX_EMBEDDING_WAIT_MS: '0' }
type App = Awaited<ReturnType<typeof buildApp>>

async function opened(env: Record<string, string>, providers?: (base: Providers) => Providers) {
  const dir = await mkdtemp(join(tmpdir(), 'recall-graph-leg-'))
  const config = loadConfig({
    DATA_DIR: dir, DEMO_DATA: 'false', LOG_LEVEL: 'silent', MODEL_DIR: process.env.MODEL_DIR ?? './models', EMBEDDING_SESSIONS: '0',
    // the bench is the only client, on a machine other work shares: no rate limit, no overload guard
    RATE_LIMIT_MAX: '0', MAX_EVENT_LOOP_DELAY_MS: '0', DERIVED_GRAPH: 'true', DERIVED_EPISODES: 'false', ...SLOW, ...env
  })
  const services = await openServices(config, providers ? { providers } : {})
  const app = await buildApp(createRuntime(services), { logger: false })
  await app.ready()
  await services.embedder.embedPassages(['预热一次模型'])
  return { services, app, async close() { await app.close(); await rm(dir, { recursive: true, force: true }) } }
}

async function corpus(which: string): Promise<{ documents: DocumentInput[]; questions: JudgedQuestion[] }> {
  if (which === 'es6') {
    return { documents: await readDocuments([values.public ?? '/work/es6/docs']), questions: parseJudgedSet(await readFile('bench/judged/es6tutorial.jsonl', 'utf8')) }
  }
  if (which === 'relations') {
    return { documents: await readDocuments([values.public ?? '/work/relcorpus']), questions: parseJudgedSet(await readFile('bench/judged/relations.jsonl', 'utf8')) }
  }
  if (which === 'cmrc') {
    const set = await loadCmrc()
    const questions = set.queries.slice(0, Number(values.questions)).flatMap((q, i) => q.query.trim() === ''
      ? []
      : [{ id: `c${i + 1}`, line: i + 1, query: q.query, relevant: { doc_ids: q.relevant_ids }, match: 'all' as const }])
    return { documents: set.documents, questions }
  }
  throw new Error(`--quality es6|cmrc|relations, not ${which}`)
}

async function evaluate(app: App, namespace: string, questions: readonly JudgedQuestion[]) {
  const jsonl = questions.map((q) => JSON.stringify({ id: q.id, query: q.query, relevant: q.relevant, match: q.match })).join('\n')
  const body = { judged_set: jsonl, namespace, arms: ARMS, ks: [1, 5, 10], async: true }
  const accepted = await app.inject({ method: 'POST', url: '/evaluate', payload: body })
  if (accepted.statusCode !== 202) throw new Error(`/evaluate ${accepted.statusCode}: ${accepted.body}`)
  const { status_url } = accepted.json() as { status_url: string }
  for (;;) {
    await new Promise((r) => setTimeout(r, 2000))
    const done = (await app.inject({ method: 'GET', url: status_url })).json() as { status: string; result?: Record<string, unknown>; error?: unknown }
    if (done.status === 'running' || done.status === 'queued') continue
    if (!done.result) throw new Error(`/evaluate job ended ${done.status}: ${JSON.stringify(done.error)}`)
    return done.result as {
      arms: Array<{ label: string; errors: number; metrics: Record<string, unknown>; latency_ms: unknown }>
      differences: Array<{ labels: [string, string]; metrics: Record<string, unknown> }>
      per_question: unknown[]
    }
  }
}

async function quality(which: string) {
  const { documents, questions } = await corpus(which)
  const ns = `graph-leg-${which}`
  const { services, app, close } = await opened({ EVAL_TIMEOUT_SECONDS: '7200' })
  const report: Record<string, unknown> = { corpus: which, documents: documents.length, questions: questions.length, load_at_start: load() }
  try {
    const started = performance.now()
    const written = await services.writePath.write(ns, { kind: 'documents', op: 'upsert', documents: checkedDocuments({ documents, namespace: ns }) })
    report['ingest'] = { ms: Math.round(performance.now() - started), chunks: written.chunks, derived: written.derived, load_after: load() }
    console.error('ingest', JSON.stringify(report['ingest']))
    // a judged chunk id the corpus does not hold would count as a miss of every arm: refuse the run instead
    const library = services.documents.get(ns)!
    const unknown = questions.flatMap((q) => (q.relevant.ids ?? []).filter((id) => library.chunk(id) === undefined))
    if (unknown.length > 0) throw new Error(`judged chunk ids the corpus does not hold: ${unknown.join(', ')}`)
    const t0 = performance.now()
    const result = await evaluate(app, ns, questions)
    report['evaluate_seconds'] = round((performance.now() - t0) / 1000, 1)
    report['arms'] = Object.fromEntries(result.arms.map((a) => [a.label, { errors: a.errors, ...a.metrics, latency_ms: a.latency_ms }]))
    report['differences'] = result.differences.map((d) => ({ arms: d.labels, ...d.metrics }))
    report['per_question'] = result.per_question
  } finally {
    await close()
  }
  report['load_at_end'] = load()
  return report
}

async function latency(chunks: number) {
  const set = await loadCmrc()
  const documents = syntheticDocuments(set.documents.map((d) => d.text), chunks)
  const queries = set.queries.map((q) => q.query).filter((q) => q.trim() !== '')
  const standIn = values.embedder === 'stand-in'
  const { services, app, close } = await opened({ CACHE_TTL_SECONDS: '0' }, standIn ? (p) => ({ ...p, embedder: standInEmbedder }) : undefined)
  const ns = 'graph-leg-latency'
  const report: Record<string, unknown> = { chunks, queries: queries.length, rounds: Number(values.rounds), embedder: values.embedder, load_at_start: load() }
  try {
    for (let i = 0; i < documents.length; i += 500) {
      await services.writePath.write(ns, { kind: 'documents', op: 'upsert', documents: checkedDocuments({ documents: documents.slice(i, i + 500), namespace: ns }) })
    }
    report['graph'] = await services.graph.count(ns)
    console.error('ingested', JSON.stringify(report['graph']), load())
    report['load_after_ingest'] = load()
    const took: { off: number[]; on: number[]; diff: number[]; leg: number[] } = { off: [], on: [], diff: [], leg: [] }
    const ask = async (q: string, graph: boolean) => {
      const r = await app.inject({ method: 'GET', url: `/retrieve?mode=hybrid&namespace=${ns}&top_k=10${graph ? '&legs=vector,lexical,graph' : ''}&q=${encodeURIComponent(q)}` })
      if (r.statusCode !== 200) throw new Error(`${r.statusCode}: ${r.body}`)
      return r.json() as { took_ms: number; legs: Array<{ name: string; took_ms: number; status: string }> }
    }
    // every query's vector cached first (both arms then read it from the embedding cache), and each arm warmed
    for (const q of queries) await ask(q, false)
    for (let w = 0; w < 20; w++) await ask(queries[w]!, true)
    for (let round = 0; round < Number(values.rounds); round++) {
      for (const [i, q] of queries.entries()) {
        // every other question asks with the graph leg first
        const graphFirst = (i + round) % 2 === 0
        const a = await ask(q, graphFirst)
        const b = await ask(q, !graphFirst)
        const [on, off] = graphFirst ? [a, b] : [b, a]
        took.off.push(off.took_ms)
        took.on.push(on.took_ms)
        took.diff.push(on.took_ms - off.took_ms)
        took.leg.push(on.legs.find((l) => l.name === 'graph')!.took_ms)
      }
    }
    report['took_ms'] = { without_graph: percentiles(took.off), with_graph: percentiles(took.on), paired_difference: percentiles(took.diff), graph_leg: percentiles(took.leg) }
  } finally {
    await close()
  }
  report['load_at_end'] = load()
  return report
}

const tag = values.tag ? `-${values.tag}` : ''
let report: Record<string, unknown>
let name: string
if (values.quality) {
  report = await quality(values.quality)
  name = `graph-leg-${values.quality}${values.quality === 'cmrc' && values.questions !== '1002' ? `-${values.questions}` : ''}${tag}`
} else if (values.latency) {
  report = await latency(Number(values.latency))
  name = `graph-leg-latency-${values.latency}${values.embedder === 'stand-in' ? '-standin' : ''}${tag}`
} else throw new Error('one of --quality es6|cmrc|relations, --latency N')
const { per_question: _, ...summary } = report
console.log(JSON.stringify(summary, null, 2))
await writeFile(`bench/results/${name}.json`, JSON.stringify(report, null, 2) + '\n')

/**
 * Conversations as memory on LoCoMo-10 (issue #40; docs/conversations.md). Each conversation goes in as it is through
 * `POST /ingest/conversations` (turn text, plus ` [shares <caption>]` where a turn has a photo), and, in another
 * namespace, through `POST /ingest/documents` as one document per turn (the same text, `<speaker>: <text>`). Every
 * category 1-4 question is asked with `mode=episodic` (the turns of `metadata.turns`, item by item) and `mode=hybrid`
 * (the documents of the items): turn Recall@10 (share of the question's evidence turns among the first 10 distinct
 * turns named), hit@10 and MRR@10 per category, each with the paired bootstrap interval of episodic - hybrid. Costs:
 * the episodic p50, appending one turn to the conversation (p50 of 20, beside one turn's embedding alone), and
 * ingesting the conversation against ingesting its turns as documents (derivation off).
 *
 * `npx tsx bench/locomo.ts /work/locomo/locomo10.json 2,3,4,5,6,7,8,9 > bench/results/locomo.json`
 * The data stays outside the repository. Develop and tune on conversations 2-9 only.
 *
 * Tuning rounds: `LOCOMO_DATA_DIR=<dir>` keeps the stores there and ingests a conversation only when the directory does
 * not hold it yet (a marker per conversation and model), so a second run asks the questions only; `LOCOMO_COSTS=false`
 * leaves out the append and ingest costs (which need a fresh ingest to mean anything); `LOCOMO_DETAIL=<file>` writes,
 * per question, the rank of each evidence turn among the turns each mode named (questions' text left out: it is data).
 */
import { access, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildApp } from '../src/http/app.js'
import { loadConfig } from '../src/config.js'
import { openServices } from '../src/services.js'
import { createRuntime } from '../src/runtime.js'
import { compare, p50, round, type QuestionRow, type Scores } from './lib/locomo-compare.js'

interface LocomoTurn { speaker: string; dia_id: string; text: string; blip_caption?: string }
interface LocomoQa { question: string; evidence: string[]; category: number }
interface LocomoSample { sample_id: string; conversation: Record<string, unknown>; qa: LocomoQa[] }

const [file = '/work/locomo/locomo10.json', which = '2,3,4,5,6,7,8,9'] = process.argv.slice(2)
const samples = JSON.parse(await readFile(file, 'utf8')) as LocomoSample[]
const picked = which.split(',').map(Number)
const load = () => round(loadavg()[0]!, 1)

const kept = process.env.LOCOMO_DATA_DIR
const withCosts = process.env.LOCOMO_COSTS !== 'false'
const dir = kept ?? await mkdtemp(join(tmpdir(), 'recall-locomo-'))
if (kept) await mkdir(kept, { recursive: true })
const held = (marker: string) => access(join(dir, marker)).then(() => true, () => false)
const config = loadConfig({
  DATA_DIR: dir, DEMO_DATA: 'false', LOG_LEVEL: 'silent', RATE_LIMIT_MAX: '0', MODEL_DIR: process.env.MODEL_DIR ?? './models',
  DERIVED_GRAPH: 'false', DERIVED_EPISODES: 'false', CACHE_TTL_SECONDS: '0', EMBEDDING_CACHE_TTL_SECONDS: '0',
  EMBEDDING_TIMEOUT_MS: '60000', VECTOR_TIMEOUT_MS: '60000', GRAPH_TIMEOUT_MS: '60000', ...(process.env.EMBEDDING_MODEL ? { EMBEDDING_MODEL: process.env.EMBEDDING_MODEL } : {})
})
const services = await openServices(config)
const app = await buildApp(createRuntime(services), { logger: false })
await app.ready()
await services.embedder.embedPassages(['warm up'])

const turnText = (t: LocomoTurn) => (t.blip_caption ? `${t.text} [shares ${t.blip_caption}]` : t.text)
const sessionsOf = (c: Record<string, unknown>) => Object.keys(c).filter((k) => /^session_\d+$/.test(k))
  .sort((a, b) => Number(a.slice(8)) - Number(b.slice(8)))
  .map((k) => ({ id: k, time: c[`${k}_date_time`] as string, turns: c[k] as LocomoTurn[] }))
const evidenceOf = (q: LocomoQa) => [...new Set(q.evidence.flatMap((e) => e.split(/[;,\s]+/)).filter((e) => /^D\d+:\d+$/.test(e)))]

async function post(url: string, payload: object): Promise<Record<string, unknown>> {
  let r = await app.inject({ method: 'POST', url, payload })
  // a run that ingests nothing asks before start-up has ended (the sole-writer registration): wait for it
  for (let waited = 0; r.statusCode === 503 && r.body.includes('RECALL_STARTING') && waited < 600; waited++) {
    await new Promise((done) => setTimeout(done, 500))
    r = await app.inject({ method: 'POST', url, payload })
  }
  if (r.statusCode !== 200) throw new Error(`${url}: ${r.statusCode} ${r.body.slice(0, 500)}`)
  return r.json() as Record<string, unknown>
}

function score(named: readonly string[], evidence: readonly string[]): Scores {
  const first = [...new Set(named)].slice(0, 10)
  const rank = first.findIndex((id) => evidence.includes(id)) + 1
  return { recall: evidence.filter((e) => first.includes(e)).length / evidence.length, hit: rank > 0 ? 1 : 0, rr: rank > 0 ? 1 / rank : 0 }
}

const rows: QuestionRow[] = []
const detail: unknown[] = []
const ranksOf = (named: readonly string[], evidence: readonly string[]) => {
  const first = [...new Set(named)]
  return evidence.map((e) => first.indexOf(e) + 1 || null)
}
const episodicMs: number[] = []
const hybridMs: number[] = []
const costs: unknown[] = []
for (const i of picked) {
  const sample = samples[i]!
  const sessions = sessionsOf(sample.conversation)
  const turns = sessions.reduce((n, s) => n + s.turns.length, 0)
  const ns = `locomo-${i}`
  const marker = `ingested-${i}-${services.embedder.model}`
  const reuse = kept !== undefined && await held(marker)
  let t = performance.now()
  if (!reuse) await post('/ingest/documents', {
    namespace: `${ns}-docs`,
    documents: sessions.flatMap((s) => s.turns.map((x) => ({ id: x.dia_id, source: `${sample.sample_id}/${s.id}`, text: `${x.speaker}: ${turnText(x)}` })))
  })
  const documentsMs = performance.now() - t
  t = performance.now()
  const written = reuse ? 'reused' : await post('/ingest/conversations', {
    namespace: ns,
    conversations: [{ id: sample.sample_id, sessions: sessions.map((s) => ({ id: s.id, time: s.time, turns: s.turns.map((x) => ({ id: x.dia_id, speaker: x.speaker, text: turnText(x) })) })) }]
  })
  const conversationMs = performance.now() - t
  if (kept && !reuse) await writeFile(join(dir, marker), '')
  for (const q of sample.qa.filter((x) => x.category >= 1 && x.category <= 4)) {
    const evidence = evidenceOf(q)
    if (evidence.length === 0) continue
    t = performance.now()
    const e = await post('/retrieve', { mode: 'episodic', namespace: ns, query: q.question, top_k: 10 }) as { recall_bundle: Array<{ metadata: { turns?: Array<{ id: string }> } }> }
    episodicMs.push(performance.now() - t)
    t = performance.now()
    const h = await post('/retrieve', { mode: 'hybrid', namespace: `${ns}-docs`, query: q.question, top_k: 10 }) as { recall_bundle: Array<{ metadata: { doc_id?: string } }> }
    hybridMs.push(performance.now() - t)
    const episodicTurns = e.recall_bundle.flatMap((x) => (x.metadata.turns ?? []).map((y) => y.id))
    const hybridTurns = h.recall_bundle.map((x) => x.metadata.doc_id ?? '')
    rows.push({ conversation: sample.sample_id, category: q.category, episodic: score(episodicTurns, evidence), hybrid: score(hybridTurns, evidence) })
    detail.push({ conversation: sample.sample_id, question: rows.length - 1, category: q.category, evidence, episodic: ranksOf(episodicTurns, evidence), hybrid: ranksOf(hybridTurns, evidence), episodic_named: episodicTurns.slice(0, 10) })
  }
  if (!withCosts) {
    console.error(`${sample.sample_id}: ${turns} turns, ${rows.length} questions so far, load ${load()}`)
    continue
  }
  // appending one turn at a time to the last session, and one turn's embedding alone, in turn
  const last = sessions[sessions.length - 1]!
  const appendMs: number[] = []
  const embedMs: number[] = []
  for (let k = 0; k < 20; k++) {
    const text = `A new remark number ${k} about the weekend plans and the garden.`
    t = performance.now()
    await services.embedder.embedPassages([`${last.turns[0]!.speaker}: ${text} (${k})`])
    embedMs.push(performance.now() - t)
    t = performance.now()
    await post('/ingest/conversations', { namespace: ns, conversations: [{ id: sample.sample_id, sessions: [{ id: last.id, time: last.time, turns: [{ id: `X:${k}`, speaker: last.turns[0]!.speaker, text }] }] }] })
    appendMs.push(performance.now() - t)
  }
  costs.push({
    conversation: sample.sample_id, sessions: sessions.length, turns, written,
    ...(reuse ? { ingest: 'reused: not measured' } : { ingest_documents_ms: Math.round(documentsMs), ingest_conversation_ms: Math.round(conversationMs), derivation_ratio: round(conversationMs / documentsMs, 2) }),
    append_p50_ms: round(p50(appendMs), 1), embed_one_turn_p50_ms: round(p50(embedMs), 1), load: load()
  })
  console.error(`${sample.sample_id}: ${turns} turns, ${rows.length} questions so far, load ${load()}`)
}

const report = {
  data: file, conversations: picked.map((i) => samples[i]!.sample_id), model: services.embedder.model,
  all: compare(rows),
  by_category: Object.fromEntries([1, 2, 3, 4].map((c) => [{ 1: 'multi_hop', 2: 'temporal', 3: 'open_domain', 4: 'single_hop' }[c]!, compare(rows.filter((r) => r.category === c))])),
  latency: { episodic_p50_ms: round(p50(episodicMs), 1), hybrid_p50_ms: round(p50(hybridMs), 1), questions: episodicMs.length },
  costs,
  load_at_end: loadavg().map((x) => round(x, 1)),
  // per question, for bench/locomo-combine.ts (runs of some conversations each, compared as one set)
  rows,
  latencies_ms: { episodic: episodicMs.map((x) => round(x, 1)), hybrid: hybridMs.map((x) => round(x, 1)) }
}
console.log(JSON.stringify(report, null, 2))
if (process.env.LOCOMO_DETAIL) await writeFile(process.env.LOCOMO_DETAIL, JSON.stringify(detail))
await app.close()
await services.close()
if (!kept) await rm(dir, { recursive: true, force: true })

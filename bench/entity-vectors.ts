/**
 * Entity vectors (issue #41, item 2; docs/derivation.md, "Entities found by meaning"): what they cost a write, what they
 * hold in memory, and what they give graphrag.
 *
 *   npx tsx --expose-gc bench/entity-vectors.ts --throughput relations|es6 [--rounds 2] [--public DIR]
 *       one service with ENTITY_VECTORS=false and one with true (derived graph on, derived Episodes off, both open
 *       before the first write); each round writes the corpus into a fresh namespace of each, in alternating order, and
 *       times the write's answer and, with entity vectors, the moment the background applier has embedded every name
 *       (`entityNamesIdle`). Throughput ratio = plain write / (write + names). Memory per name: the heap and external
 *       memory after a GC once the names landed, less the same when the write answered, over the names embedded.
 *   npx tsx bench/entity-vectors.ts --quality es6|relations [--public DIR]
 *       the corpus written with entity vectors on; then every question through graphrag by names only and with entity
 *       vectors at each floor (the adapter built over the service's ports), and through hybrid (GET /retrieve), scored
 *       per document (a relations question's judged chunks taken as their documents, `match: all`): R@5 and MRR@10 with
 *       95% bootstrap intervals (2,000 resamples, seed 7) and the paired difference of each floor against names only.
 *   npx tsx --expose-gc bench/entity-vectors.ts --memory 20000
 *       the memory one name's vector takes in the embedded vector store: N records written as the applier writes them
 *       (512 dimensions, a 32-character id, the name as payload, 64 a write) into one namespace of a store of their
 *       own; heap + external memory after a GC, after the writes less before them, over N; and the store's files.
 *   npx tsx bench/entity-vectors.ts --quality paraphrase
 *       the demo knowledge graph (demo/graph.json, imported) with entity vectors on; bench/judged/entity-paraphrase.jsonl
 *       (35 questions describing an entity without its name or an alias, judged by entity id) through graphrag by names
 *       only and at each floor, R@5 / MRR@10 as above; and bench/judged/entity-paraphrase-none.txt (10 questions about
 *       nothing the graph holds): how many entities each floor reaches by meaning there (all of them wrong); and each
 *       arm's took_ms p50 / p99 over the 35 questions (the first arm also warms the graph's name matcher).
 *
 * Writes bench/results/entity-vectors-<throughput|quality>-<corpus>.json.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { createGraphragAdapter, nameSearchOf, passagesOf } from '../adapters/graphrag/index.js'
import { loadConfig } from '../src/config.js'
import { checkedDocuments } from '../src/corpus/documents-body.js'
import type { DocumentInput } from '../src/corpus/documents.js'
import { readDocuments } from '../src/corpus/files.js'
import { parseJudgedSet, type JudgedQuestion } from '../src/evaluation/judged-set.js'
import { scoreQuestion, type JudgedItem } from '../src/evaluation/metrics.js'
import { bootstrapMean, percentiles, resamples } from '../src/evaluation/statistics.js'
import { buildApp } from '../src/http/app.js'
import { ENTITY_NAME_COLLECTION } from '../src/kernel/entity-names.js'
import { createRuntime } from '../src/runtime.js'
import { openServices } from '../src/services.js'
import { EmbeddedVectorStore } from '../src/providers/vector-store/embedded.js'
import { entityNameRecordId } from '../src/kernel/entity-names.js'

const { values } = parseArgs({
  options: {
    throughput: { type: 'string' },
    quality: { type: 'string' },
    memory: { type: 'string' },
    rounds: { type: 'string', default: '2' },
    public: { type: 'string' }
  }
})
const round = (x: number, digits = 3) => Math.round(x * 10 ** digits) / 10 ** digits
const load = () => loadavg().map((x) => round(x, 1))
const FLOORS = [0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7]
const SLOW = { EMBEDDING_TIMEOUT_MS: '60000', VECTOR_TIMEOUT_MS: '60000', LEXICAL_TIMEOUT_MS: '60000', GRAPH_TIMEOUT_MS: '60000', MAX_EMBEDDING_WAIT_MS: '0' }

async function opened(env: Record<string, string>) {
  const dir = await mkdtemp(join(tmpdir(), 'recall-entity-vectors-'))
  const config = loadConfig({
    DATA_DIR: dir, DEMO_DATA: 'false', LOG_LEVEL: 'silent', MODEL_DIR: process.env.MODEL_DIR ?? './models', EMBEDDING_SESSIONS: '0',
    RATE_LIMIT_MAX: '0', MAX_EVENT_LOOP_DELAY_MS: '0', DERIVED_GRAPH: 'true', DERIVED_EPISODES: 'false', CACHE_TTL_SECONDS: '0', ...SLOW, ...env
  })
  const services = await openServices(config)
  const app = await buildApp(createRuntime(services), { logger: false })
  await app.ready()
  await services.embedder.embedPassages(['预热一次模型'])
  return { services, app, config, async close() { await app.close(); await rm(dir, { recursive: true, force: true }) } }
}

async function corpus(which: string): Promise<{ documents: DocumentInput[]; questions: JudgedQuestion[] }> {
  if (which === 'es6') {
    return { documents: await readDocuments([values.public ?? '/work/es6/docs']), questions: parseJudgedSet(await readFile('bench/judged/es6tutorial.jsonl', 'utf8')) }
  }
  if (which === 'relations') {
    const questions = parseJudgedSet(await readFile('bench/judged/relations.jsonl', 'utf8')).map((q) => ({
      ...q, relevant: { doc_ids: [...new Set((q.relevant.ids ?? []).map((id) => id.slice(0, id.lastIndexOf('#'))))] }, match: 'all' as const
    }))
    return { documents: await readDocuments([values.public ?? '/work/relcorpus']), questions }
  }
  throw new Error(`es6|relations, not ${which}`)
}

/** The JS heap and the memory outside it that typed arrays hold (the embedded store's vectors live there), after a GC. */
const heap = () => {
  (globalThis as { gc?: () => void }).gc?.()
  const usage = process.memoryUsage()
  return usage.heapUsed + usage.external
}

async function throughput(which: string) {
  const { documents } = await corpus(which)
  const plain = await opened({ ENTITY_VECTORS: 'false' })
  const withNames = await opened({ ENTITY_VECTORS: 'true' })
  const report: Record<string, unknown> = { corpus: which, documents: documents.length, gc: typeof (globalThis as { gc?: unknown }).gc === 'function', load_at_start: load() }
  const rows: Array<Record<string, unknown>> = []
  try {
    for (let r = 0; r < Number(values.rounds); r++) {
      const order = r % 2 === 0 ? ['plain', 'names'] : ['names', 'plain']
      for (const arm of order) {
        const target = arm === 'plain' ? plain : withNames
        const ns = `ev-${arm}-${r}`
        const loadBefore = load()
        const started = performance.now()
        const written = await target.services.writePath.write(ns, { kind: 'documents', op: 'upsert', documents: checkedDocuments({ documents, namespace: ns }) })
        const answeredMs = performance.now() - started
        const heapAnswered = arm === 'names' ? heap() : 0
        await target.services.writePath.entityNamesIdle()
        const settledMs = performance.now() - started
        const row: Record<string, unknown> = { round: r, arm, chunks: written.chunks, entities: written.derived?.entities, answered_ms: Math.round(answeredMs), settled_ms: Math.round(settledMs), load_before: loadBefore, load_after: load() }
        if (arm === 'names') {
          const names = await target.services.vectors.count(`${target.config.collectionPrefix}${ENTITY_NAME_COLLECTION}`, ns)
          row['names'] = names
          row['status'] = await target.services.entityVectors!.namespace(ns)
          row['heap_bytes_per_name'] = Math.round((heap() - heapAnswered) / names)
        }
        rows.push(row)
        console.error(JSON.stringify(row))
      }
    }
  } finally {
    await plain.close()
    await withNames.close()
  }
  const mean = (arm: string, key: string) => rows.filter((x) => x['arm'] === arm).reduce((s, x) => s + (x[key] as number), 0) / Number(values.rounds)
  report['rounds'] = rows
  report['plain_ms'] = Math.round(mean('plain', 'settled_ms'))
  report['names_answered_ms'] = Math.round(mean('names', 'answered_ms'))
  report['names_settled_ms'] = Math.round(mean('names', 'settled_ms'))
  report['throughput_ratio'] = round(mean('plain', 'settled_ms') / mean('names', 'settled_ms'))
  report['answer_ratio'] = round(mean('plain', 'settled_ms') / mean('names', 'answered_ms'))
  report['load_at_end'] = load()
  return report
}

async function quality(which: string) {
  if (which === 'paraphrase') return paraphrase()
  const { documents, questions } = await corpus(which)
  const ns = `ev-quality-${which}`
  const { services, app, close } = await opened({ ENTITY_VECTORS: 'true' })
  const report: Record<string, unknown> = { corpus: which, documents: documents.length, questions: questions.length, load_at_start: load() }
  try {
    const started = performance.now()
    const written = await services.writePath.write(ns, { kind: 'documents', op: 'upsert', documents: checkedDocuments({ documents, namespace: ns }) })
    await services.writePath.entityNamesIdle()
    report['ingest'] = { ms: Math.round(performance.now() - started), chunks: written.chunks, derived: written.derived, names: await services.entityVectors!.namespace(ns), load_after: load() }
    console.error('ingest', JSON.stringify(report['ingest']))
    const passages = passagesOf((namespace) => services.documents.get(namespace))
    const names = nameSearchOf(services.vectors, services.embedder, `${services.config.collectionPrefix}${ENTITY_NAME_COLLECTION}`)
    const arms: Array<{ label: string; ask: (q: string) => Promise<JudgedItem[]> }> = [
      { label: 'graphrag names only', ask: async (q) => (await createGraphragAdapter({ graph: services.graph, passages }).retrieve({ query: q, namespace: ns, top_k: 10 })).items }
    ]
    for (const floor of FLOORS) {
      const adapter = createGraphragAdapter({ graph: services.graph, passages, names }, { meaning: { floor, limit: 5 } })
      arms.push({ label: `graphrag meaning ${floor}`, ask: async (q) => (await adapter.retrieve({ query: q, namespace: ns, top_k: 10 })).items })
    }
    arms.push({
      label: 'hybrid', ask: async (q) => {
        const r = await app.inject({ method: 'GET', url: `/retrieve?mode=hybrid&namespace=${ns}&top_k=10&q=${encodeURIComponent(q)}` })
        if (r.statusCode !== 200) throw new Error(`${r.statusCode}: ${r.body}`)
        return (r.json() as { recall_bundle: JudgedItem[] }).recall_bundle
      }
    })
    const samples = resamples(questions.length, 2000, 7)
    const perArm = new Map<string, { r5: number[]; mrr: number[]; meaningItems: number }>()
    for (const arm of arms) {
      const r5: number[] = []
      const mrr: number[] = []
      let meaningItems = 0
      for (const q of questions) {
        const items = await arm.ask(q.query)
        meaningItems += items.slice(0, 5).filter((i) => i.metadata['matched_by'] === 'meaning').length
        const score = scoreQuestion(items, q, [5])
        r5.push(score.recall[5]!)
        mrr.push(score.mrr_at_10)
      }
      perArm.set(arm.label, { r5, mrr, meaningItems })
      console.error(arm.label, round(r5.reduce((a, b) => a + b, 0) / r5.length))
    }
    const names0 = perArm.get('graphrag names only')!
    const hybrid = perArm.get('hybrid')!
    const interval = (v: number[]) => {
      const i = bootstrapMean(v, samples)
      return { mean: round(i.mean), ci: [round(i.ci_low), round(i.ci_high)] }
    }
    const diff = (a: number[], b: number[]) => a.map((x, i) => x - b[i]!)
    report['arms'] = Object.fromEntries([...perArm].map(([label, v]) => [label, {
      recall_at_5: interval(v.r5), mrr_at_10: interval(v.mrr), meaning_items_in_top_5: v.meaningItems,
      ...(label.startsWith('graphrag') ? {
        minus_names_only: { recall_at_5: interval(diff(v.r5, names0.r5)), mrr_at_10: interval(diff(v.mrr, names0.mrr)) },
        recall_at_5_over_hybrid: round(v.r5.reduce((a, b) => a + b, 0) / Math.max(1e-9, hybrid.r5.reduce((a, b) => a + b, 0)))
      } : {})
    }]))
  } finally {
    await close()
  }
  report['load_at_end'] = load()
  return report
}

async function paraphrase() {
  const questions = parseJudgedSet(await readFile('bench/judged/entity-paraphrase.jsonl', 'utf8'))
  const none = (await readFile('bench/judged/entity-paraphrase-none.txt', 'utf8')).split('\n').filter((l) => l.trim() !== '')
  const ns = 'ev-paraphrase'
  const { services, close } = await opened({ ENTITY_VECTORS: 'true' })
  const report: Record<string, unknown> = { corpus: 'demo graph', questions: questions.length, unanswerable: none.length, load_at_start: load() }
  try {
    const body = JSON.parse(await readFile('demo/graph.json', 'utf8')) as object
    await services.writePath.write(ns, { kind: 'graph', op: 'upsert', body })
    await services.writePath.entityNamesIdle()
    report['names'] = await services.entityVectors!.namespace(ns)
    const names = nameSearchOf(services.vectors, services.embedder, `${services.config.collectionPrefix}${ENTITY_NAME_COLLECTION}`)
    const samples = resamples(questions.length, 2000, 7)
    const interval = (v: number[]) => {
      const i = bootstrapMean(v, samples)
      return { mean: round(i.mean), ci: [round(i.ci_low), round(i.ci_high)] }
    }
    const arms: Array<[string, ReturnType<typeof createGraphragAdapter>]> = [['graphrag names only', createGraphragAdapter({ graph: services.graph })]]
    for (const floor of FLOORS) arms.push([`graphrag meaning ${floor}`, createGraphragAdapter({ graph: services.graph, names }, { meaning: { floor, limit: 5 } })])
    const rows: Record<string, unknown> = {}
    let base: { r5: number[]; mrr: number[] } | undefined
    for (const [label, adapter] of arms) {
      const r5: number[] = []
      const mrr: number[] = []
      const took: number[] = []
      for (const q of questions) {
        const t0 = performance.now()
        const { items } = await adapter.retrieve({ query: q.query, namespace: ns, top_k: 10 })
        took.push(performance.now() - t0)
        const score = scoreQuestion(items, q, [5])
        r5.push(score.recall[5]!)
        mrr.push(score.mrr_at_10)
      }
      let wrong = 0
      for (const q of none) wrong += (await adapter.retrieve({ query: q, namespace: ns, top_k: 10 })).items.filter((i) => i.metadata.matched_by === 'meaning' && i.metadata.hop === 0).length
      base ??= { r5, mrr }
      const diff = (a: number[], b: number[]) => a.map((x, i) => x - b[i]!)
      rows[label] = {
        recall_at_5: interval(r5), mrr_at_10: interval(mrr),
        minus_names_only: { recall_at_5: interval(diff(r5, base.r5)), mrr_at_10: interval(diff(mrr, base.mrr)) },
        meaning_entities_on_unanswerable: wrong,
        // in this process, the query embedding included (no embedding cache: the adapter embeds each question)
        took_ms: { p50: round(percentiles(took).p50, 1), p99: round(percentiles(took).p99, 1) }
      }
      console.error(label, JSON.stringify(rows[label]))
    }
    report['arms'] = rows
  } finally {
    await close()
  }
  report['load_at_end'] = load()
  return report
}

async function memory(count: number) {
  const dir = await mkdtemp(join(tmpdir(), 'recall-entity-memory-'))
  const store = new EmbeddedVectorStore({ dir })
  const collection = `recall_${ENTITY_NAME_COLLECTION}`
  await store.ensureCollection(collection, 512)
  const vector = () => {
    const v = new Float32Array(512)
    let norm = 0
    for (let i = 0; i < 512; i++) norm += (v[i] = Math.random() - 0.5) ** 2
    for (let i = 0; i < 512; i++) v[i]! /= Math.sqrt(norm)
    return v
  }
  // CJK names of 4 characters, as derived names mostly are
  const text = (i: number) => String.fromCodePoint(...[0, 1, 2, 3].map((k) => 0x4e00 + ((i * 7919 + k * 104729) % 20000)))
  await store.write(collection, 'warm', { upsert: [{ id: 'w', vector: vector(), payload: { doc_id: 'w', text: '预热' } }] })
  const before = heap()
  for (let at = 0; at < count; at += 64) {
    const upsert = Array.from({ length: Math.min(64, count - at) }, (_, k) => {
      const t = `${text(at + k)}${at + k}`
      const id = entityNameRecordId(t)
      return { id, vector: vector(), payload: { doc_id: id, text: t } }
    })
    await store.write(collection, 'ns', { upsert })
  }
  const after = heap()
  const held = await store.count(collection, 'ns')
  await store.close()
  const { execFileSync } = await import('node:child_process')
  const diskBytes = Number(execFileSync('du', ['-sb', dir], { encoding: 'utf8' }).split('\t')[0])
  await rm(dir, { recursive: true, force: true })
  return {
    names: held, gc: typeof (globalThis as { gc?: unknown }).gc === 'function',
    bytes_per_name: Math.round((after - before) / held), disk_bytes_per_name: Math.round(diskBytes / held), load: load()
  }
}

let report: Record<string, unknown>
let name: string
if (values.memory) {
  report = await memory(Number(values.memory))
  name = `entity-vectors-memory-${values.memory}`
} else if (values.throughput) {
  report = await throughput(values.throughput)
  name = `entity-vectors-throughput-${values.throughput}`
} else if (values.quality) {
  report = await quality(values.quality)
  name = `entity-vectors-quality-${values.quality}`
} else throw new Error('one of --throughput es6|relations, --quality es6|relations')
console.log(JSON.stringify(report, null, 2))
await writeFile(`bench/results/${name}.json`, JSON.stringify(report, null, 2) + '\n')

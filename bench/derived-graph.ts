/**
 * graphrag over the graph derived from a corpus beside hybrid on the same namespace, and (demo set) beside graphrag
 * over the curated demo graph (`demo/graph.json`, imported into the same namespace and read with `structures:
 * imported`). Sets: `demo` (the demo documents, `bench/judged/demo-corpus.jsonl`, answers as targets), `es6tutorial`
 * (`/work/es6/docs` or ES6_DOCS, `bench/judged/es6tutorial.jsonl`, documents as targets), `cmrc` (the CMRC 2018 trial
 * set, a document per paragraph, its questions). An item counts for its chunks in item then evidence order (a hybrid
 * item is its chunk); with answers as targets a question is found at k when one of the first k distinct chunks holds
 * one of its answers, with documents as targets when one of the first k distinct documents of those chunks is one of
 * them. Also: the share of questions with a non-empty bundle, and with a grounded one (non-empty, every evidence id a
 * chunk of the namespace).
 *
 *   npx tsx bench/derived-graph.ts [--set demo|es6tutorial|cmrc] [--data DIR] [--out FILE] [--caps 1,3,5] [--ranks]
 *
 * `--caps` also measures graphrag over the derived graph with other caps of evidence chunks per item (the adapter's
 * `maxEvidence`, default 5), in `graphrag_derived_by_cap`.
 * `--ranks` also gives each arm's rank of each question's first relevant item (0: not in the first 10), in `ranks`, so that
 * two runs can be compared question by question.
 * `--data DIR` keeps the stores there and, when DIR already holds the set's namespace, reads it without writing again
 * (the same derived graph, to compare two builds of the adapter). Prints JSON.
 */
import { existsSync } from 'node:fs'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { loadConfig } from '../src/config.js'
import { demoDir } from '../src/corpus/demo.js'
import type { DocumentInput } from '../src/corpus/documents.js'
import { checkedDocuments } from '../src/corpus/documents-body.js'
import { readDocuments } from '../src/corpus/files.js'
import { readGraphFile } from '../src/corpus/graph.js'
import { parseJudgedSet, type JudgedQuestion } from '../src/evaluation/judged-set.js'
import { createGraphragAdapter } from '../adapters/graphrag/adapter.js'
import { createModes, modeDeployment } from '../src/modes.js'
import { retrieve } from '../src/retrieval.js'
import { openServices } from '../src/services.js'
import { loadCmrc } from './lib/cmrc.js'
import { CMRC_TRIAL } from './lib/reference-data.js'

const { values: args } = parseArgs({ options: { set: { type: 'string', default: 'demo' }, data: { type: 'string' }, out: { type: 'string' }, caps: { type: 'string' }, ranks: { type: 'boolean', default: false } } })
const round = (x: number, digits = 3) => Math.round(x * 10 ** digits) / 10 ** digits

interface BenchSet { documents: () => Promise<DocumentInput[]>; questions: () => Promise<JudgedQuestion[]>; curated?: string }
const SETS: Record<string, BenchSet> = {
  demo: {
    documents: async () => readDocuments([`${demoDir()}documents`]),
    questions: async () => parseJudgedSet(await readFile('bench/judged/demo-corpus.jsonl', 'utf8')),
    curated: `${demoDir()}graph.json`
  },
  es6tutorial: {
    documents: async () => readDocuments([process.env.ES6_DOCS ?? '/work/es6/docs']),
    questions: async () => parseJudgedSet(await readFile('bench/judged/es6tutorial.jsonl', 'utf8'))
  },
  cmrc: {
    documents: async () => (await loadCmrc()).documents,
    questions: async () => (await loadCmrc()).queries.map((q, i) => ({ id: `c${i + 1}`, line: i + 1, query: q.query, relevant: { doc_ids: q.relevant_ids }, match: 'any' as const }))
  }
}
const set = SETS[args.set!]
if (!set) throw new Error(`--set ${args.set}: one of ${Object.keys(SETS).join(', ')}`)
if (args.set === 'cmrc' && !CMRC_TRIAL.available) {
  console.log(`skipped: ${CMRC_TRIAL.missing}`)
  process.exit(0)
}

const NS = `bench-${args.set}`
const dataDir = args.data ?? await mkdtemp(join(tmpdir(), 'recall-derived-graph-bench-'))
const reuse = args.data !== undefined && existsSync(join(args.data, 'done'))
const services = await openServices(loadConfig({ DATA_DIR: dataDir, DEMO_DATA: 'false', LOG_LEVEL: 'silent', MODEL_DIR: process.env.MODEL_DIR ?? './models' }))
const report: Record<string, unknown> = { set: args.set, load_average_at_start: loadavg().map((x) => round(x, 1)) }
try {
  const questions = await set.questions()
  report['questions'] = questions.length
  if (!reuse) {
    const documents = checkedDocuments({ documents: await set.documents(), namespace: NS })
    const started = performance.now()
    const written = await services.corpus.write(NS, { kind: 'documents', op: 'upsert', documents })
    report['ingest'] = { documents: documents.length, chunks: written.chunks, ms: Math.round(performance.now() - started), derived: written.derived, load_average: round(loadavg()[0]!, 1) }
    if (set.curated) await services.corpus.write(NS, { kind: 'graph', op: 'upsert', body: await readGraphFile(set.curated) })
    if (args.data) await writeFile(join(args.data, 'done'), '')
  }
  report['graph'] = await services.graph.count(NS)
  const modes = createModes({ ...services, corpus: (ns: string) => services.documents.get(ns) }, {
    ...modeDeployment(services.config, services.names), timeouts: { embedding: 60_000, vector: 60_000, lexical: 60_000, graph: 60_000 }
  })
  await services.readState('hybrid', NS).catch(() => undefined)
  const library = services.documents.get(NS)!
  const arms: Array<{ name: string; mode: 'hybrid' | 'graphrag'; structures?: 'derived' | 'imported'; cap?: number }> = [
    { name: 'hybrid', mode: 'hybrid' },
    { name: 'graphrag_derived', mode: 'graphrag', structures: 'derived' },
    ...(set.curated ? [{ name: 'graphrag_curated', mode: 'graphrag' as const, structures: 'imported' as const }] : []),
    ...(args.caps ?? '').split(',').filter((c) => c !== '').map((c) => ({ name: `cap_${c}`, mode: 'graphrag' as const, structures: 'derived' as const, cap: Number(c) }))
  ]
  for (const arm of arms) {
    const capped = arm.cap === undefined ? undefined : createGraphragAdapter({ graph: services.graph }, { maxEvidence: arm.cap, timeoutMs: 60_000 })
    let nonEmpty = 0
    let grounded = 0
    const found = { 1: 0, 3: 0, 5: 0, 10: 0 } as Record<number, number>
    let mrr = 0
    const times: number[] = []
    const ranks: Record<string, number> = {}
    for (const q of questions) {
      const t0 = performance.now()
      const bundle = capped
        ? (await capped.retrieve({ query: q.query, top_k: 10, namespace: NS, structures: 'derived' })).items
        : (await retrieve(modes, { mode: arm.mode, query: q.query, top_k: 10, namespace: NS } as Parameters<typeof retrieve>[1], undefined,
          arm.structures ? { structures: arm.structures } : {})).recall_bundle
      times.push(performance.now() - t0)
      const items = bundle as Array<{ id: string; metadata: { evidence?: Array<{ chunk_id: string }> } }>
      if (items.length > 0) nonEmpty++
      const chunks = [...new Set(items.flatMap((i) => (arm.mode === 'hybrid' ? [i.id] : (i.metadata.evidence ?? []).map((e) => e.chunk_id))))]
      if (items.length > 0 && chunks.length > 0 && chunks.every((id) => library.chunk(id) !== undefined)) grounded++
      const answers = q.relevant.answers
      let rank: number
      if (answers) {
        rank = chunks.findIndex((id) => answers.some((a) => library.chunk(id)?.text.includes(a))) + 1
      } else {
        const docs = [...new Set(chunks.map((id) => library.chunk(id)?.doc_id ?? id.replace(/#\d+$/, '')))]
        const relevant = new Set(q.relevant.doc_ids ?? [])
        rank = docs.findIndex((d) => relevant.has(d)) + 1
      }
      ranks[q.id] = rank > 0 && rank <= 10 ? rank : 0
      for (const k of [1, 3, 5, 10]) if (rank > 0 && rank <= k) found[k]!++
      if (rank > 0 && rank <= 10) mrr += 1 / rank
    }
    const n = questions.length
    times.sort((a, b) => a - b)
    const into = arm.cap === undefined ? report : (report['graphrag_derived_by_cap'] ??= {}) as Record<string, unknown>
    into[arm.cap === undefined ? arm.name : String(arm.cap)] = {
      non_empty: round(nonEmpty / n), grounded: round(grounded / n),
      ...Object.fromEntries(Object.entries(found).map(([k, v]) => [`recall_at_${k}`, round(v / n)])),
      mrr_at_10: round(mrr / n), p50_ms: round(times[Math.floor(n / 2)]!, 1)
    }
    if (args.ranks && arm.cap === undefined) ((report['ranks'] ??= {}) as Record<string, unknown>)[arm.name] = ranks
  }
  const recall5 = (name: string) => (report[name] as { recall_at_5: number } | undefined)?.recall_at_5
  report['derived_over_hybrid_recall_at_5'] = round(recall5('graphrag_derived')! / recall5('hybrid')!)
  if (set.curated) report['derived_over_curated_recall_at_5'] = round(recall5('graphrag_derived')! / recall5('graphrag_curated')!)
} finally {
  await services.close()
  if (!args.data) await rm(dataDir, { recursive: true, force: true })
}
report['load_average_at_end'] = loadavg().map((x) => round(x, 1))
const text = JSON.stringify(report, null, 2)
console.log(text)
if (args.out) await writeFile(args.out, `${text}\n`)

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
 *   npx tsx bench/derived-graph.ts [--set demo|es6tutorial|cmrc] [--data DIR] [--out FILE] [--caps 1,3,5]
 *                                  [--arms hybrid,graphrag_derived,…] [--baseline DIR [--repeat N] [--fragments JSON|off]] [--ranks]
 *
 * `--caps` also measures graphrag over the derived graph with other caps of evidence chunks per item (the adapter's
 * `maxEvidence`, default 5), in `graphrag_derived_by_cap`.
 * `--ranks` also gives each arm's rank of each question's first relevant item (0: not in the first 10), in `ranks`, so that
 * two runs can be compared question by question.
 * `--data DIR` keeps the stores there and, when DIR already holds the set's namespace, reads it without writing again
 * (the same derived graph, to compare two builds of the adapter). `--arms` runs only the arms named.
 * `--baseline DIR` compares this build's graphrag adapter with the one of a checkout at DIR (say a worktree of main)
 * over the same derived graph, question by question in one run (`paired`): both adapters answer each question,
 * alternating which goes first, `--repeat` times (default 1); it reports how many bundles are identical (every item,
 * its score and its evidence), the questions each finds at 5 that the other does not, the metrics of both and their
 * latency (p50, p99 of every call) with the ratio; `--fragments '{"minGram":3}'` (or `off`) sets this build's partial name
 * matching (`adapters/graphrag/fragments.ts`) over its defaults; `--passages off` turns this build's passage fallback
 * (`adapters/graphrag/passages.ts`, `GRAPHRAG_EVIDENCE_FALLBACK`) off. Prints JSON.
 */
import { existsSync } from 'node:fs'
import { isDeepStrictEqual } from 'node:util'
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { loadConfig } from '../src/config.js'
import { demoDir } from '../src/corpus/demo.js'
import type { DocumentInput } from '../src/corpus/documents.js'
import { checkedDocuments } from '../src/corpus/documents-body.js'
import { readDocuments } from '../src/corpus/files.js'
import { readGraphFile } from '../src/corpus/graph.js'
import { parseJudgedSet, type JudgedQuestion } from '../src/evaluation/judged-set.js'
import { createGraphragAdapter } from '../adapters/graphrag/adapter.js'
import { passagesOf } from '../adapters/graphrag/index.js'
import { DEFAULT_FRAGMENT_OPTIONS } from '../adapters/graphrag/fragments.js'
import { createModes, modeDeployment } from '../src/modes.js'
import { EmbeddedKnowledgeGraphStore } from '../src/providers/knowledge-graph/embedded.js'
import { retrieve } from '../src/retrieval.js'
import { openServices } from '../src/services.js'
import { loadCmrc } from './lib/cmrc.js'
import { CMRC_TRIAL } from './lib/reference-data.js'

const { values: args } = parseArgs({ options: {
  set: { type: 'string', default: 'demo' }, data: { type: 'string' }, out: { type: 'string' }, caps: { type: 'string' },
  arms: { type: 'string' }, baseline: { type: 'string' }, repeat: { type: 'string', default: '1' }, fragments: { type: 'string' },
  ranks: { type: 'boolean', default: false }, passages: { type: 'string' }
} })
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
const cleanups: Array<() => Promise<void>> = []
try {
  const questions = await set.questions()
  report['questions'] = questions.length
  if (!reuse) {
    const documents = checkedDocuments({ documents: await set.documents(), namespace: NS })
    const started = performance.now()
    const written = await services.writePath.write(NS, { kind: 'documents', op: 'upsert', documents })
    report['ingest'] = { documents: documents.length, chunks: written.chunks, ms: Math.round(performance.now() - started), derived: written.derived, load_average: round(loadavg()[0]!, 1) }
    if (set.curated) await services.writePath.write(NS, { kind: 'graph', op: 'upsert', body: await readGraphFile(set.curated) })
    if (args.data) await writeFile(join(args.data, 'done'), '')
  }
  report['graph'] = await services.graph.count(NS)
  const modes = createModes({ ...services, corpus: (ns: string) => services.documents.get(ns) }, {
    ...modeDeployment(services.config, services.names), timeouts: { embedding: 60_000, vector: 60_000, lexical: 60_000, graph: 60_000 }
  })
  await services.readState('hybrid', NS).catch(() => undefined)
  const library = services.documents.get(NS)!
  /** graphrag's passage fallback over the namespace's lexical index, as the service wires it. */
  const lexicalOf = passagesOf((ns: string) => services.documents.get(ns))
  type Items = Array<{ id: string; metadata: { evidence?: Array<{ chunk_id: string }> } }>
  /** Whether the bundle is grounded, and the rank (from 1; 0 when not in the first 10) of the first relevant chunk or document. */
  const judge = (q: JudgedQuestion, items: Items, hybrid: boolean): { grounded: boolean; rank: number } => {
    const chunks = [...new Set(items.flatMap((i) => (hybrid ? [i.id] : (i.metadata.evidence ?? []).map((e) => e.chunk_id))))]
    const grounded = items.length > 0 && chunks.length > 0 && chunks.every((id) => library.chunk(id) !== undefined)
    const answers = q.relevant.answers
    let rank: number
    if (answers) {
      rank = chunks.findIndex((id) => answers.some((a) => library.chunk(id)?.text.includes(a))) + 1
    } else {
      const docs = [...new Set(chunks.map((id) => library.chunk(id)?.doc_id ?? id.replace(/#\d+$/, '')))]
      const relevant = new Set(q.relevant.doc_ids ?? [])
      rank = docs.findIndex((d) => relevant.has(d)) + 1
    }
    return { grounded, rank: rank > 0 && rank <= 10 ? rank : 0 }
  }
  const percentile = (sorted: readonly number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!
  /** The metrics of one arm from each question's bundle size, grounding and rank, and its call times. */
  const metrics = (judged: ReadonlyArray<{ size: number; grounded: boolean; rank: number }>, times: number[]) => {
    const n = judged.length
    const sorted = [...times].sort((a, b) => a - b)
    return {
      non_empty: round(judged.filter((j) => j.size > 0).length / n), grounded: round(judged.filter((j) => j.grounded).length / n),
      ...Object.fromEntries([1, 3, 5, 10].map((k) => [`recall_at_${k}`, round(judged.filter((j) => j.rank > 0 && j.rank <= k).length / n)])),
      mrr_at_10: round(judged.reduce((sum, j) => sum + (j.rank > 0 ? 1 / j.rank : 0), 0) / n),
      p50_ms: round(percentile(sorted, 0.5), 2), p99_ms: round(percentile(sorted, 0.99), 2)
    }
  }

  const wanted = args.arms === undefined ? undefined : new Set(args.arms.split(','))
  const arms: Array<{ name: string; mode: 'hybrid' | 'graphrag'; structures?: 'derived' | 'imported'; cap?: number }> = [
    { name: 'hybrid', mode: 'hybrid' as const },
    { name: 'graphrag_derived', mode: 'graphrag' as const, structures: 'derived' as const },
    ...(set.curated ? [{ name: 'graphrag_curated', mode: 'graphrag' as const, structures: 'imported' as const }] : []),
    ...(args.caps ?? '').split(',').filter((c) => c !== '').map((c) => ({ name: `cap_${c}`, mode: 'graphrag' as const, structures: 'derived' as const, cap: Number(c) }))
  ].filter((arm) => wanted === undefined || wanted.has(arm.name))
  for (const arm of arms) {
    const capped = arm.cap === undefined ? undefined : createGraphragAdapter({ graph: services.graph, passages: lexicalOf }, { maxEvidence: arm.cap, timeoutMs: 60_000 })
    const judged: Array<{ size: number; grounded: boolean; rank: number }> = []
    const times: number[] = []
    const ranks: Record<string, number> = {}
    for (const q of questions) {
      const t0 = performance.now()
      const bundle = capped
        ? (await capped.retrieve({ query: q.query, top_k: 10, namespace: NS, structures: 'derived' })).items
        : (await retrieve(modes, { mode: arm.mode, query: q.query, top_k: 10, namespace: NS } as Parameters<typeof retrieve>[1], undefined,
          arm.structures ? { structures: arm.structures } : {})).recall_bundle
      times.push(performance.now() - t0)
      const items = bundle as Items
      judged.push({ size: items.length, ...judge(q, items, arm.mode === 'hybrid') })
      ranks[q.id] = judged[judged.length - 1]!.rank
    }
    const into = arm.cap === undefined ? report : (report['graphrag_derived_by_cap'] ??= {}) as Record<string, unknown>
    into[arm.cap === undefined ? arm.name : String(arm.cap)] = metrics(judged, times)
    if (args.ranks && arm.cap === undefined) ((report['ranks'] ??= {}) as Record<string, unknown>)[arm.name] = ranks
  }
  const recall5 = (name: string) => (report[name] as { recall_at_5: number } | undefined)?.recall_at_5
  if (recall5('hybrid') !== undefined && recall5('graphrag_derived') !== undefined) {
    report['derived_over_hybrid_recall_at_5'] = round(recall5('graphrag_derived')! / recall5('hybrid')!)
  }
  if (recall5('graphrag_curated') !== undefined && recall5('graphrag_derived') !== undefined) {
    report['derived_over_curated_recall_at_5'] = round(recall5('graphrag_derived')! / recall5('graphrag_curated')!)
  }

  if (args.baseline) {
    // The checkout's adapter imports that checkout's own modules, and reads that checkout's embedded graph store
    // opened on a copy of this one's files (the same graph, read by the code of the checkout).
    const module = await import(resolve(args.baseline, 'adapters/graphrag/adapter.ts')) as { createGraphragAdapter: typeof createGraphragAdapter }
    const stores = await import(resolve(args.baseline, 'src/providers/knowledge-graph/embedded.ts')) as { EmbeddedKnowledgeGraphStore: typeof EmbeddedKnowledgeGraphStore }
    if (services.graph.backend !== 'memory') throw new Error('--baseline compares over the embedded graph store')
    const copy = await mkdtemp(join(tmpdir(), 'recall-derived-graph-baseline-'))
    await cp(join(dataDir, 'graph'), copy, { recursive: true })
    const baselineGraph = new stores.EmbeddedKnowledgeGraphStore({ dir: copy })
    cleanups.push(async () => {
      await baselineGraph.close()
      await rm(copy, { recursive: true, force: true })
    })
    const sides = {
      baseline: module.createGraphragAdapter({ graph: baselineGraph }, { timeoutMs: 60_000 }),
      this_build: createGraphragAdapter({ graph: services.graph, passages: lexicalOf }, {
        timeoutMs: 60_000, ...(args.passages === 'off' ? { passages: false as const } : {}),
        ...(args.fragments === undefined ? {} : { fragments: args.fragments === 'off' ? false as const : { ...DEFAULT_FRAGMENT_OPTIONS, ...JSON.parse(args.fragments) as object } })
      })
    }
    const names = ['baseline', 'this_build'] as const
    const ask = (side: typeof names[number], query: string) => sides[side].retrieve({ query, top_k: 10, namespace: NS, structures: 'derived' })
    // the first call of each builds its name matcher
    for (const side of names) await ask(side, questions[0]!.query)
    const repeat = Math.max(1, Number(args.repeat))
    const times = { baseline: [] as number[], this_build: [] as number[] }
    const judged = { baseline: [] as Array<{ size: number; grounded: boolean; rank: number }>, this_build: [] as Array<{ size: number; grounded: boolean; rank: number }> }
    let identical = 0
    const changed: Array<{ id: string; query: string; baseline_rank: number; this_build_rank: number }> = []
    let call = 0
    for (const q of questions) {
      const items: Partial<Record<typeof names[number], Items>> = {}
      for (let r = 0; r < repeat; r++) {
        for (const side of call++ % 2 === 0 ? names : [...names].reverse()) {
          const t0 = performance.now()
          const result = await ask(side, q.query)
          times[side].push(performance.now() - t0)
          if (r === 0) items[side] = result.items as Items
        }
      }
      if (isDeepStrictEqual(items.baseline, items.this_build)) identical++
      const before = { size: items.baseline!.length, ...judge(q, items.baseline!, false) }
      const after = { size: items.this_build!.length, ...judge(q, items.this_build!, false) }
      judged.baseline.push(before)
      judged.this_build.push(after)
      if (before.rank !== after.rank) changed.push({ id: q.id, query: q.query, baseline_rank: before.rank, this_build_rank: after.rank })
    }
    const at5 = (rank: number) => rank > 0 && rank <= 5
    const base = metrics(judged.baseline, times.baseline)
    const mine = metrics(judged.this_build, times.this_build)
    report['paired'] = {
      baseline_checkout: resolve(args.baseline), repeat, calls_per_side: times.baseline.length,
      identical_bundles: identical, questions: questions.length,
      found_at_5_only_by_this_build: changed.filter((c) => at5(c.this_build_rank) && !at5(c.baseline_rank)).length,
      found_at_5_only_by_baseline: changed.filter((c) => at5(c.baseline_rank) && !at5(c.this_build_rank)).length,
      baseline: base, this_build: mine,
      p50_ratio_baseline_over_this_build: round(base.p50_ms / mine.p50_ms, 2),
      p99_ratio_baseline_over_this_build: round(base.p99_ms / mine.p99_ms, 2),
      rank_changes: changed,
      load_average: loadavg().map((x) => round(x, 1))
    }
  }
} finally {
  for (const cleanup of cleanups) await cleanup()
  await services.close()
  if (!args.data) await rm(dataDir, { recursive: true, force: true })
}
report['load_average_at_end'] = loadavg().map((x) => round(x, 1))
const text = JSON.stringify(report, null, 2)
console.log(text)
if (args.out) await writeFile(args.out, `${text}\n`)

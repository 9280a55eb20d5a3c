/**
 * Episodic over Episodes derived from the demo documents beside hybrid (and graphrag over the derived graph) on the
 * demo corpus's judged set (`bench/judged/demo-corpus.jsonl`, answers as targets), and the ingest throughput of the
 * same documents with derivation off, with the derived graph only, and with the graph and Episodes.
 * An item counts for its chunks in item then evidence order (a hybrid item is its chunk); a question is found at k
 * when one of the first k distinct chunks holds one of its answers. Prints JSON. `npx tsx bench/derived-episodes.ts`
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../src/config.js'
import { demoDir } from '../src/corpus/demo.js'
import { checkedDocuments } from '../src/corpus/documents-body.js'
import { readDocuments } from '../src/corpus/files.js'
import { parseJudgedSet } from '../src/evaluation/judged-set.js'
import { createModes, modeDeployment } from '../src/modes.js'
import { retrieve } from '../src/retrieval.js'
import { openServices, type Services } from '../src/services.js'

const round = (x: number, digits = 3) => Math.round(x * 10 ** digits) / 10 ** digits
const NS = 'demo-docs'

async function opened(env: Record<string, string>): Promise<{ services: Services; dir: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'recall-derived-episodes-bench-'))
  const services = await openServices(loadConfig({ DATA_DIR: dir, DEMO_DATA: 'false', LOG_LEVEL: 'silent', MODEL_DIR: process.env.MODEL_DIR ?? './models', ...env }))
  await services.embedder.embedPassages(['预热一次模型'])
  return { services, dir }
}

const documents = checkedDocuments({ documents: await readDocuments([`${demoDir()}documents`]), namespace: NS })
const questions = parseJudgedSet(await readFile('bench/judged/demo-corpus.jsonl', 'utf8'))
const report: Record<string, unknown> = { documents: documents.length, questions: questions.length, load_average_at_start: loadavg().map((x) => round(x, 1)) }

// Throughput: the whole corpus in one write, twice per setting (a fresh namespace each time), in turn.
const settings = {
  off: { DERIVED_GRAPH: 'false', DERIVED_EPISODES: 'false' },
  graph_only: { DERIVED_GRAPH: 'true', DERIVED_EPISODES: 'false' },
  graph_and_episodes: { DERIVED_GRAPH: 'true', DERIVED_EPISODES: 'true' }
}
const ingest: Record<string, unknown> = {}
for (const round_ of [1, 2]) {
  for (const [name, env] of Object.entries(settings)) {
    const { services, dir } = await opened(env)
    try {
      const started = performance.now()
      const written = await services.corpus.write(`${NS}-${round_}`, { kind: 'documents', op: 'upsert', documents })
      const ms = performance.now() - started
      const runs = (ingest[name] ??= { runs: [] }) as { runs: unknown[] }
      runs.runs.push({ ms: Math.round(ms), chunks: written.chunks, chunks_per_s: round(written.chunks / (ms / 1000), 1), derived: written.derived, load_average: round(loadavg()[0]!, 1) })
    } finally {
      await services.close()
      await rm(dir, { recursive: true, force: true })
    }
  }
}
report['ingest'] = ingest

// Quality: one namespace with both derived parts, read by hybrid, graphrag (derived graph) and episodic (derived Episodes).
const { services, dir } = await opened({})
try {
  await services.corpus.write(NS, { kind: 'documents', op: 'upsert', documents })
  const modes = createModes({ ...services, corpus: (ns: string) => services.documents.get(ns) }, {
    ...modeDeployment(services.config, services.names), timeouts: { embedding: 60_000, vector: 60_000, lexical: 60_000, graph: 60_000 }
  })
  const library = services.documents.get(NS)!
  report['episodic_memory'] = await services.episodes.countByType(NS)
  for (const mode of ['hybrid', 'graphrag', 'episodic'] as const) {
    let nonEmpty = 0
    let grounded = 0
    const found = { 1: 0, 3: 0, 5: 0, 10: 0 } as Record<number, number>
    let mrr = 0
    const times: number[] = []
    for (const q of questions) {
      const t0 = performance.now()
      const response = await retrieve(modes, { mode, query: q.query, top_k: 10, namespace: NS } as Parameters<typeof retrieve>[1], undefined, { structures: 'derived' })
      times.push(performance.now() - t0)
      const items = response.recall_bundle as Array<{ id: string; metadata: { evidence?: Array<{ chunk_id: string }> } }>
      if (items.length > 0) nonEmpty++
      const chunks = [...new Set(items.flatMap((i) => (mode === 'hybrid' ? [i.id] : (i.metadata.evidence ?? []).map((e) => e.chunk_id))))]
      if (items.length > 0 && chunks.length > 0 && chunks.every((id) => library.chunk(id) !== undefined)) grounded++
      const answers = q.relevant.answers ?? []
      const rank = chunks.findIndex((id) => answers.some((a) => library.chunk(id)?.text.includes(a))) + 1
      for (const k of [1, 3, 5, 10]) if (rank > 0 && rank <= k) found[k]!++
      if (rank > 0 && rank <= 10) mrr += 1 / rank
    }
    const n = questions.length
    times.sort((a, b) => a - b)
    report[mode] = {
      non_empty: round(nonEmpty / n), grounded: round(grounded / n),
      ...Object.fromEntries(Object.entries(found).map(([k, v]) => [`recall_at_${k}`, round(v / n)])),
      mrr_at_10: round(mrr / n), p50_ms: round(times[Math.floor(n / 2)]!, 1)
    }
  }
} finally {
  await services.close()
  await rm(dir, { recursive: true, force: true })
}
report['load_average_at_end'] = loadavg().map((x) => round(x, 1))
console.log(JSON.stringify(report, null, 2))

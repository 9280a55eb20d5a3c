/**
 * graphrag over a graph derived from the demo documents beside graphrag over the curated demo graph
 * (`demo/graph.json`), on the demo corpus's judged set (`bench/judged/demo-corpus.jsonl`, answers as targets).
 * An item counts for the chunks of its `evidence`, in item then evidence order; a question is found at k when one of
 * the first k distinct chunks holds one of its answers. Also: how many questions get a non-empty bundle, and whether
 * every evidence id is a chunk of the namespace. Prints JSON. `npx tsx bench/derived-graph.ts`
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createGraphragAdapter } from '../adapters/graphrag/adapter.js'
import { loadConfig } from '../src/config.js'
import { demoDir } from '../src/corpus/demo.js'
import { checkedDocuments } from '../src/corpus/documents-body.js'
import { readDocuments } from '../src/corpus/files.js'
import { readGraphFile } from '../src/corpus/graph.js'
import { parseJudgedSet } from '../src/evaluation/judged-set.js'
import { openServices } from '../src/services.js'

const dataDir = await mkdtemp(join(tmpdir(), 'recall-derived-bench-'))
const services = await openServices(loadConfig({ DATA_DIR: dataDir, DEMO_DATA: 'false', LOG_LEVEL: 'silent', MODEL_DIR: process.env.MODEL_DIR ?? './models' }))
try {
  const questions = parseJudgedSet(await readFile('bench/judged/demo-corpus.jsonl', 'utf8'))
  const started = performance.now()
  for (const ns of ['derived', 'curated']) {
    const documents = checkedDocuments({ documents: await readDocuments([`${demoDir()}documents`]), namespace: ns })
    await services.corpus.write(ns, { kind: 'documents', op: 'upsert', documents })
  }
  const ingestMs = performance.now() - started
  await services.corpus.write('curated', { kind: 'graph', op: 'upsert', body: await readGraphFile(`${demoDir()}graph.json`) })
  const graphrag = createGraphragAdapter({ graph: services.graph })
  const report: Record<string, unknown> = { questions: questions.length, ingest_ms_both_namespaces: Math.round(ingestMs) }
  for (const ns of ['derived', 'curated']) {
    const library = services.documents.get(ns)!
    let nonEmpty = 0
    let grounded = 0
    const found = { 1: 0, 3: 0, 5: 0, 10: 0 } as Record<number, number>
    let mrr = 0
    for (const q of questions) {
      const { items } = await graphrag.retrieve({ query: q.query, top_k: 10, namespace: ns })
      if (items.length > 0) nonEmpty++
      const chunks = [...new Set(items.flatMap((i) => (i.metadata as { evidence: Array<{ chunk_id: string }> }).evidence.map((e) => e.chunk_id)))]
      if (items.length > 0 && chunks.every((id) => library.chunk(id) !== undefined)) grounded++
      const answers = q.relevant.answers ?? []
      const rank = chunks.findIndex((id) => answers.some((a) => library.chunk(id)?.text.includes(a))) + 1
      for (const k of [1, 3, 5, 10]) if (rank > 0 && rank <= k) found[k]!++
      if (rank > 0 && rank <= 10) mrr += 1 / rank
    }
    const n = questions.length
    report[ns] = {
      graph: await services.graph.count(ns),
      non_empty: nonEmpty / n,
      grounded: grounded / n,
      ...Object.fromEntries(Object.entries(found).map(([k, v]) => [`recall_at_${k}`, Math.round((v / n) * 1000) / 1000])),
      mrr_at_10: Math.round((mrr / n) * 1000) / 1000
    }
  }
  console.log(JSON.stringify(report, null, 2))
} finally {
  await services.close()
  await rm(dataDir, { recursive: true, force: true })
}

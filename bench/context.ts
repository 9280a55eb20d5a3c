/**
 * What packing a context costs and how well it fills the budget: CMRC 2018 trial paragraphs as the hybrid
 * corpus (embedded default, real model), its questions retrieved with top_k 50, each bundle packed at
 * max_tokens 2,000 and 16,000 (o200k_base, markdown). Reports per request the retrieval time and the packing
 * time added to it (p50/p95), in a first pass (the tokenizer's piece memo starts empty: texts never seen)
 * and a second (every passage seen before, as popular chunks are in service), the share of the budget the
 * context fills, and the manifest's reasons. Writes bench/results/context.json.
 *
 *   nice -n 10 tsx bench/context.ts [--queries 200] [--top-k 50]
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { pack, type PackItem } from '../src/context/pack.js'
import { tokenCounter } from '../src/context/tokenizers.js'
import { loadConfig } from '../src/config.js'
import { createModes, modeDeployment } from '../src/modes.js'
import { retrieve } from '../src/retrieval.js'
import { openServices } from '../src/services.js'
import { loadCmrc } from './lib/cmrc.js'
import { DOCUMENTS_ONLY, modelDir } from './lib/corpus.js'

const BUDGETS = [2000, 16000]

const percentile = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!
}
const round = (x: number, digits = 3) => Math.round(x * 10 ** digits) / 10 ** digits

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { queries: { type: 'string', default: '200' }, 'top-k': { type: 'string', default: '50' } } })
  const queryCount = Number(values.queries)
  const topK = Number(values['top-k'])
  const { documents, queries } = await loadCmrc()
  const dataDir = await mkdtemp(join(tmpdir(), 'recall-bench-context-'))
  const config = loadConfig({ DATA_DIR: dataDir, DEMO_DATA: 'false', MODEL_DIR: modelDir(), LOG_LEVEL: 'silent', ...DOCUMENTS_ONLY })
  const services = await openServices(config)
  try {
    const started = performance.now()
    await services.writePath.write('default', { kind: 'documents', op: 'upsert', documents: documents })
    console.error(`ingested ${documents.length} CMRC paragraphs in ${((performance.now() - started) / 1000).toFixed(1)} s`)
    const modes = createModes({ ...services, corpus: (ns: string) => services.documents.get(ns) }, modeDeployment(services.config, services.names))
    const counter = await tokenCounter('o200k_base')
    const questions = queries.slice(0, queryCount)

    const bundles: { items: PackItem[]; retrievalMs: number }[] = []
    for (const q of questions) {
      const t0 = performance.now()
      const response = await retrieve(modes, { mode: 'hybrid', query: q.query, top_k: topK, namespace: 'default' })
      bundles.push({ items: response.recall_bundle as PackItem[], retrievalMs: performance.now() - t0 })
    }

    const passes: Record<string, unknown>[] = []
    for (const pass of ['first', 'second'] as const) {
      for (const maxTokens of BUDGETS) {
        const times: number[] = []
        const fill: number[] = []
        const reasons: Record<string, number> = {}
        let truncated = 0
        for (const { items } of bundles) {
          const t0 = performance.now()
          const packed = pack(items, { maxTokens, counter, format: 'markdown', evidence: 'include', maxEvidencePerItem: 2, chunk: () => undefined })
          times.push(performance.now() - t0)
          fill.push(packed.tokens / maxTokens)
          for (const m of packed.manifest) {
            if (m.reason) reasons[m.reason] = (reasons[m.reason] ?? 0) + 1
            if (m.status === 'truncated') truncated++
          }
        }
        const figures = {
          pass, max_tokens: maxTokens,
          packing_ms: { p50: round(percentile(times, 50)), p95: round(percentile(times, 95)), mean: round(times.reduce((a, b) => a + b, 0) / times.length) },
          budget_filled: { mean: round(fill.reduce((a, b) => a + b, 0) / fill.length), min: round(Math.min(...fill)), p50: round(percentile(fill, 50)) },
          truncated_items: truncated,
          dropped_by_reason: reasons
        }
        passes.push(figures)
        console.error(JSON.stringify(figures))
      }
    }
    const retrieval = bundles.map((b) => b.retrievalMs)
    const result = {
      bench: 'context',
      when: new Date().toISOString(),
      machine: { cpus: cpus().length, model: cpus()[0]?.model, loadavg_at_end: loadavg().map((x) => round(x, 2)) },
      corpus: { documents: documents.length, chunks: services.documents.get('default')?.chunkCount ?? 0, set: 'cmrc2018_trial' },
      questions: questions.length,
      top_k: topK,
      tokenizer: 'o200k_base',
      format: 'markdown',
      retrieval_ms: { p50: round(percentile(retrieval, 50)), p95: round(percentile(retrieval, 95)) },
      items_per_bundle: round(bundles.reduce((a, b) => a + b.items.length, 0) / bundles.length, 1),
      passes,
      target: 'packing under 2 ms added to the retrieval, at max_tokens 2000 and 16000'
    }
    await writeFile(join(import.meta.dirname, 'results', 'context.json'), `${JSON.stringify(result, null, 2)}\n`)
    console.error('wrote bench/results/context.json')
  } finally {
    await services.close()
    await rm(dataDir, { recursive: true, force: true })
  }
}

void main()

/**
 * npm run evaluate -- FILE [--arms JSON] [--namespace NS] [--top-k N] [--out PREFIX] [--url URL]
 *
 * Sends a judged set (JSONL) to the running service's POST /evaluate as a job, shows its progress, and
 * writes PREFIX.json (the whole report) and PREFIX.svg (MRR@10 and Recall@5 per arm with intervals).
 */
import { readFile, writeFile } from 'node:fs/promises'
import { basename } from 'node:path'
import { parseArgs } from 'node:util'
import { evaluationChart } from '../evaluation/chart.js'
import type { EvaluationReportBody, EvaluationJobBody } from '../schemas/evaluate.js'
import { ProgressBar } from './progress.js'
import { callService, serviceUrl } from './service-client.js'

const USAGE = `usage: npm run evaluate -- FILE [options]
  --arms JSON      arms as in /retrieve/compare (default: hybrid, hybrid lexical only, hybrid vector only, hybrid fusion=rrf)
  --namespace NS   the namespace to evaluate (default: default)
  --top-k N        items per arm (default 10)
  --out PREFIX     where to write PREFIX.json and PREFIX.svg (default: FILE without .jsonl, plus .eval)
  --url URL        the running service (default RECALL_URL, else http://127.0.0.1:$PORT)`

const DEFAULT_ARMS = [{ mode: 'hybrid' }, { mode: 'hybrid', legs: ['lexical'] }, { mode: 'hybrid', legs: ['vector'] }, { mode: 'hybrid', fusion: 'rrf' }]

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { arms: { type: 'string' }, namespace: { type: 'string' }, 'top-k': { type: 'string' }, out: { type: 'string' }, url: { type: 'string' }, help: { type: 'boolean' } }
  })
  const file = positionals[0]
  if (values.help || !file) {
    console.error(USAGE)
    process.exit(values.help ? 0 : 2)
  }
  const url = serviceUrl(values.url)
  const arms = values.arms ? JSON.parse(values.arms) as unknown[] : DEFAULT_ARMS
  const body = {
    judged_set: await readFile(file, 'utf8'), arms, async: true,
    ...(values.namespace ? { namespace: values.namespace } : {}),
    ...(values['top-k'] ? { top_k: Number(values['top-k']) } : {})
  }
  const started = await callService<EvaluationJobBody>(url, 'POST', '/evaluate', body)
  let job = started.body
  const bar = new ProgressBar(job.progress.total, 'runs')
  // Ctrl-C cancels the job in the service too.
  process.once('SIGINT', () => {
    void callService(url, 'DELETE', job.status_url).finally(() => process.exit(130))
  })
  let shown = 0
  while (job.status === 'running') {
    await new Promise((resolve) => setTimeout(resolve, 500))
    job = (await callService<EvaluationJobBody>(url, 'GET', job.status_url)).body
    if (job.progress.done > shown) {
      bar.advance(job.progress.done - shown)
      shown = job.progress.done
    }
  }
  bar.done()
  if (job.status !== 'done' || !job.result) throw new Error(`the evaluation ${job.status}: ${job.error ?? ''}`)
  const report: EvaluationReportBody = job.result
  const prefix = values.out ?? `${file.replace(/\.jsonl?$/, '')}.eval`
  await writeFile(`${prefix}.json`, `${JSON.stringify({ file: basename(file), date: new Date().toISOString(), ...report }, null, 2)}\n`)
  await writeFile(`${prefix}.svg`, evaluationChart(report, basename(file)))
  const f = (i: { mean: number; ci_low: number; ci_high: number } | undefined) => (i ? `${i.mean.toFixed(4)} [${i.ci_low.toFixed(3)}, ${i.ci_high.toFixed(3)}]` : '-')
  for (const a of report.arms) {
    console.log(`${a.label.padEnd(40)} MRR@10 ${f(a.metrics.mrr_at_10)}  R@5 ${f(a.metrics.recall_at_5)}  nDCG@10 ${f(a.metrics.ndcg_at_10)}  p50 ${a.latency_ms.p50} ms${a.errors ? `  errors ${a.errors}` : ''}`)
  }
  for (const d of report.differences) console.log(`${d.labels[1]} − ${d.labels[0]}: MRR@10 ${f(d.metrics.mrr_at_10)}`)
  console.error(`wrote ${prefix}.json and ${prefix}.svg`)
}

main().catch((error: unknown) => {
  console.error((error as Error).message)
  process.exit(1)
})

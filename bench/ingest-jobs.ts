/**
 * What running an ingest as a job costs beside one synchronous write: the same kind of body (new documents of about
 * three chunks each, the real local model, the embedded stores, the derived graph on as by default) written once as
 * one `services.writePath.write` and once as an ingest job (batches of INGEST_JOB_BATCH_CHUNKS chunks, each one write,
 * after counting the chunks of every document). Rounds alternate which goes first, so that drift on a busy machine
 * falls on both; every body is new text (no embedding cache hit). Writes bench/results/ingest-jobs.json.
 *
 *   npx tsx bench/ingest-jobs.ts [--rounds 3] [--documents 60] [--batch-chunks 64]
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { loadConfig } from '../src/config.js'
import { IngestJobs } from '../src/corpus/ingest-jobs.js'
import type { DocumentInput } from '../src/corpus/documents.js'
import { openServices } from '../src/services.js'

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '3' }, documents: { type: 'string', default: '60' }, 'batch-chunks': { type: 'string', default: '64' } } })
const rounds = Number(values.rounds)
const perBody = Number(values.documents)
const batchChunks = Number(values['batch-chunks'])

const para = (tag: string, i: number, p: number) => `${tag}第${i}号说明的第${p}段：夜间告警由二线值班处理，十五分钟无人响应则升级到三线，编号 ${tag}-${i}-${p}。`.repeat(5)
const body = (tag: string): DocumentInput[] => Array.from({ length: perBody }, (_, i) => ({
  id: `${tag}-${i}`, text: `# ${tag} 第 ${i} 份\n\n${[0, 1, 2].map((p) => para(tag, i, p)).join('\n\n')}`
}))

const dataDir = await mkdtemp(join(tmpdir(), 'recall-bench-jobs-'))
const services = await openServices(loadConfig({ DATA_DIR: dataDir, DEMO_DATA: 'false', LOG_LEVEL: 'silent' }))
const jobs = new IngestJobs({ batchChunks, write: (ns, docs, onProgress) => services.writePath.write(ns, { kind: 'documents', op: 'upsert', documents: docs }, { onProgress }) })
const runs: Array<{ round: number; arm: 'sync' | 'job'; chunks: number; ms: number; chunks_per_second: number; load: number }> = []
const load = [loadavg()[0]!]
try {
  for (let round = 0; round < rounds; round++) {
    const order: Array<'sync' | 'job'> = round % 2 === 0 ? ['sync', 'job'] : ['job', 'sync']
    for (const arm of order) {
      const documents = body(`${arm}${round}`)
      const started = performance.now()
      let chunks: number
      if (arm === 'sync') {
        chunks = (await services.writePath.write(arm, { kind: 'documents', op: 'upsert', documents })).chunks
      } else {
        const { id } = jobs.start(arm, documents)
        const ended = (await jobs.ended(id))!
        if (ended.state !== 'done') throw new Error(`job ${ended.state}: ${ended.errors.join('; ')}`)
        chunks = ended.result!.chunks
      }
      const ms = performance.now() - started
      runs.push({ round, arm, chunks, ms: Math.round(ms), chunks_per_second: Math.round((chunks / ms) * 1000 * 100) / 100, load: loadavg()[0]! })
      console.log(JSON.stringify(runs.at(-1)))
      load.push(loadavg()[0]!)
    }
  }
} finally {
  await jobs.close()
  await services.close()
  await rm(dataDir, { recursive: true, force: true })
}
const rate = (arm: string) => {
  const r = runs.filter((x) => x.arm === arm)
  return Math.round((r.reduce((n, x) => n + x.chunks, 0) / r.reduce((n, x) => n + x.ms, 0)) * 1000 * 100) / 100
}
const summary = {
  date: new Date().toISOString(), cpus: cpus().length, node: process.version, load_average: { min: Math.min(...load), max: Math.max(...load) },
  rounds, documents_per_body: perBody, batch_chunks: batchChunks,
  sync_chunks_per_second: rate('sync'), job_chunks_per_second: rate('job'), job_over_sync: Math.round((rate('job') / rate('sync')) * 1000) / 1000, runs
}
await writeFile('bench/results/ingest-jobs.json', `${JSON.stringify(summary, null, 2)}\n`)
console.log(JSON.stringify({ sync: summary.sync_chunks_per_second, job: summary.job_chunks_per_second, ratio: summary.job_over_sync, load: summary.load_average }))

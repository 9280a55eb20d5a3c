/**
 * Issue 39's real titles written whole: every KUAKE-QTR title (train, dev and test; `KUAKE_QTR_DIR` names the folder,
 * not committed) sent through `POST /ingest/documents` 1,000 a request with `on_invalid: "skip"`, into a service on
 * the embedded default with the real model and derivation on. Reports what was written, refused (with reasons) and
 * normalised, and what `GET /documents` lists afterwards.
 * `KUAKE_QTR_DIR=… npx tsx bench/titles-ingest.ts [--limit N] [--out bench/results/titles-ingest.json]`
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { buildApp } from '../src/http/app.js'
import { loadConfig } from '../src/config.js'
import { openServices } from '../src/services.js'
import { createRuntime } from '../src/runtime.js'

const { values } = parseArgs({ options: { limit: { type: 'string' }, out: { type: 'string' } } })
const folder = process.env.KUAKE_QTR_DIR
if (!folder) throw new Error('KUAKE_QTR_DIR names the folder of KUAKE-QTR_{train,dev,test}.json')

const titles: string[] = []
for (const part of ['train', 'dev', 'test']) {
  const rows = JSON.parse(await readFile(join(folder, `KUAKE-QTR_${part}.json`), 'utf8')) as Array<{ title: string }>
  for (const row of rows) titles.push(row.title)
}
const picked = values.limit ? titles.slice(0, Number(values.limit)) : titles

const dir = await mkdtemp(join(tmpdir(), 'recall-titles-'))
const config = loadConfig({ DATA_DIR: dir, DEMO_DATA: 'false', LOG_LEVEL: 'silent', MODEL_DIR: process.env.MODEL_DIR ?? './models' })
const services = await openServices(config)
const app = await buildApp(createRuntime(services), { logger: false })
await app.ready()

const started = performance.now()
let written = 0
let normalised = 0
let normalisedChars = 0
const refused: Array<{ id?: string; reason: string }> = []
const skipped: Array<{ id: string; reason: string }> = []
for (let from = 0; from < picked.length; from += 1000) {
  const documents = picked.slice(from, from + 1000).map((text, k) => ({ id: `t${from + k}`, text }))
  const r = await app.inject({ method: 'POST', url: '/ingest/documents', payload: { namespace: 'titles', on_invalid: 'skip', documents } })
  if (r.statusCode !== 200) throw new Error(`batch at ${from}: ${r.statusCode} ${r.body}`)
  const answer = r.json() as { documents: number; refused?: typeof refused; skipped?: typeof skipped; normalised?: Array<{ chars: number }> }
  written += answer.documents
  refused.push(...(answer.refused ?? []))
  skipped.push(...(answer.skipped ?? []))
  normalised += answer.normalised?.length ?? 0
  normalisedChars += (answer.normalised ?? []).reduce((sum, n) => sum + n.chars, 0)
  console.error(`${from + documents.length} of ${picked.length}: ${written} written, ${refused.length} refused, load ${loadavg()[0]!.toFixed(1)}`)
}
const seconds = (performance.now() - started) / 1000
const listed = (await app.inject({ method: 'GET', url: '/documents?namespace=titles&limit=1' })).json() as { total: number }

const report = {
  titles: picked.length, written, listed: listed.total, refused, skipped, normalised_titles: normalised, normalised_chars: normalisedChars,
  seconds: Math.round(seconds), titles_per_second: Math.round(picked.length / seconds), load_at_end: loadavg().map((x) => Math.round(x * 10) / 10)
}
console.log(JSON.stringify(report, null, 2))
if (values.out) await writeFile(values.out, `${JSON.stringify(report, null, 2)}\n`)
await app.close()
await rm(dir, { recursive: true, force: true })

/**
 * What reading the index status costs at scale (issue 41, item 4; docs/api.md, "Index status"): one server of this
 * tree on its embedded default, a namespace of `--documents` one-chunk documents written through the service, then
 * the reads side by side, interleaved round by round so that a busy machine's drift falls on every arm:
 * `GET /documents` pages of 100 and 1,000 without and with `status=true`, `GET /documents/{id}` (always with its
 * status) and `GET /namespaces/{ns}` (every channel summed over every document), once no channel of any document is
 * pending (the entity names are embedded in the background). p50 and p99 per arm, and each
 * status page ÷ the same page without it.
 *
 *   npx tsx bench/index-status-read.ts [--documents 10000] [--rounds 20] [--env KEY=VALUE,...] [--out bench/results/index-status-read.json]
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { startServer } from '../scripts/lib/server-process.js'
import { envPairs } from './lib/env-pairs.js'

const { values } = parseArgs({
  options: {
    documents: { type: 'string', default: '10000' }, rounds: { type: 'string', default: '20' },
    env: { type: 'string', default: '' }, out: { type: 'string', default: 'bench/results/index-status-read.json' }
  }
})
const DOCUMENTS = Number(values.documents)
const ROUNDS = Number(values.rounds)
const NS = 'status-read'
const BATCH = 200

const PLACES = ['一号机房', '二号机房', '东区库房', '西区门诊', '北楼药房', '南楼病区']
const DEVICES = ['不间断电源', '空调机组', '核心交换机', '血糖仪', '监护仪', '输液泵', '制氧机']
const PEOPLE = ['王宇彤', '李婉清', '张明', '陈立', '赵晓', '周敏']
const textOf = (i: number) => `第 ${i} 号巡检记录：${PLACES[i % PLACES.length]}的${DEVICES[i % DEVICES.length]}在 ${1 + (i % 12)} 月 ${1 + (i % 28)} 日完成巡检，` +
  `负责人${PEOPLE[i % PEOPLE.length]}，发现问题 ${i % 5} 项，编号 D${i}。`

const quantile = (xs: readonly number[], q: number) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(q * s.length))]! }
const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d

/** 503s answered (shed under overload on a busy machine): retried after a pause, counted, not timed. */
const refusals: string[] = []

async function timed(url: string): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    const started = performance.now()
    const r = await fetch(url)
    const body = await r.text()
    if (r.status === 200) return performance.now() - started
    if (r.status !== 503 || attempt >= 5) throw new Error(`GET ${url}: ${r.status} ${body.slice(0, 300)}`)
    refusals.push(`${url}: ${body.slice(0, 200)}`)
    await new Promise((resolve) => setTimeout(resolve, 1000))
  }
}

const dataDir = await mkdtemp(join(tmpdir(), 'recall-status-read-'))
const loadBefore = loadavg()
const server = await startServer({ DATA_DIR: dataDir, DEMO_DATA: 'false', ...envPairs(values.env) })
try {
  const ingestStarted = performance.now()
  for (let at = 0; at < DOCUMENTS; at += BATCH) {
    const documents = Array.from({ length: Math.min(BATCH, DOCUMENTS - at) }, (_, k) => ({ id: `d${String(at + k).padStart(6, '0')}`, text: textOf(at + k) }))
    const r = await fetch(`${server.url}/ingest/documents?wait=true`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ namespace: NS, documents }) })
    if (r.status !== 200) throw new Error(`ingest: ${r.status} ${await r.text()}`)
  }
  const ingestSeconds = (performance.now() - ingestStarted) / 1000
  console.log(`${DOCUMENTS} documents written in ${round(ingestSeconds, 1)} s`)

  // the entity names are embedded in the background: read once none waits (their status is part of every read)
  let pending = -1
  for (const until = Date.now() + 900_000; pending !== 0 && Date.now() < until; await new Promise((resolve) => setTimeout(resolve, 2000))) {
    const sums = await (await fetch(`${server.url}/namespaces/${NS}`)).json() as { index_status: Record<string, { documents: Record<string, number> }> }
    pending = Object.values(sums.index_status).reduce((n, c) => n + c.documents['pending']!, 0)
  }
  if (pending !== 0) throw new Error(`${pending} document channel(s) still pending after 15 minutes`)
  const middle = `d${String(Math.floor(DOCUMENTS / 2)).padStart(6, '0')}`
  const arms: Record<string, string> = {
    'list 100': `/documents?namespace=${NS}&limit=100`,
    'list 100 status': `/documents?namespace=${NS}&limit=100&status=true`,
    'list 1000': `/documents?namespace=${NS}&limit=1000`,
    'list 1000 status': `/documents?namespace=${NS}&limit=1000&status=true`,
    'one document': `/documents/${middle}?namespace=${NS}`,
    'namespace sums': `/namespaces/${NS}`
  }
  const times: Record<string, number[]> = Object.fromEntries(Object.keys(arms).map((a) => [a, []]))
  const names = Object.keys(arms)
  for (const path of Object.values(arms)) await timed(`${server.url}${path}`) // warm-up
  for (let r = 0; r < ROUNDS; r++) {
    // each round starts at another arm
    for (let k = 0; k < names.length; k++) {
      const arm = names[(r + k) % names.length]!
      times[arm]!.push(await timed(`${server.url}${arms[arm]}`))
    }
  }
  const figures = Object.fromEntries(names.map((a) => [a, { p50_ms: round(quantile(times[a]!, 0.5)), p99_ms: round(quantile(times[a]!, 0.99)) }]))
  const ratio = (a: string, b: string) => round(figures[a]!.p50_ms / figures[b]!.p50_ms)
  const result = {
    documents: DOCUMENTS, rounds: ROUNDS, env: values.env, ingest_seconds: round(ingestSeconds, 1), figures, refused_503: refusals.length, ...(refusals.length > 0 ? { first_refusal: refusals[0] } : {}),
    status_over_plain_p50: { 'list 100': ratio('list 100 status', 'list 100'), 'list 1000': ratio('list 1000 status', 'list 1000') },
    machine: { cpus: cpus().length, load_before: loadBefore.map((x) => round(x)), load_after: loadavg().map((x) => round(x)) }
  }
  console.log(JSON.stringify(result, null, 2))
  await writeFile(values.out, `${JSON.stringify(result, null, 2)}\n`)
} finally {
  await server.kill()
  await rm(dataDir, { recursive: true, force: true })
}

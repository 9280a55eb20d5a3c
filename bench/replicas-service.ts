/**
 * Recall processes over HTTP (docs/scale-out-state.md, "Measured over HTTP"); the lexical leg alone is bench/replicas.ts.
 * Writes bench/results/replicas-service.json and .md.
 *
 *   nice -n 10 npx tsx bench/replicas-service.ts [--chunks 10000] [--questions 500] [--writes 200]
 *     [--writes-corpus 20] [--clients 8] [--seconds 30] [--parts hybrid,writes,throughput,reads-during-writes,first-read]
 *     [--write-every-ms 1000,200] [--wait-for-copies true|false] [--readers B,C] [--deletes 100] [--deletes-corpus 100]
 *     [--tree DIR] [--base DIR] [--out replicas-service]
 *   npx tsx bench/replicas-service.ts --render NAME   (results/NAME.md again from results/NAME.json)
 *
 * Processes (each `npm start`'s server under tsx, caches off, rate limit off, graphs in memory):
 * - E: the embedded default (vector store and BM25 in process);
 * - A, B (and, for the writes part, C with CATALOG_FOLLOW_WRITES=false): REPLICAS=2 over one Qdrant 1.18.3 (../shared/qdrant/, fresh storage; vector and lexical leg) and one
 *   Redis (generations, cache versions, the write lock).
 * The corpus: `--chunks` one-chunk documents of CMRC 2018 trial text (bench/lib/synthetic.ts), written into both
 * stores before the processes start, with stand-in passage vectors (the local model embeds ~25 passages/s here:
 * 10k chunks would take 7 minutes per store). Every query is embedded by the real model in the process that
 * answers it (the embedding cache is off), and every document written in the write part is embedded by it too.
 *
 * - hybrid: the first `--questions` CMRC questions, one at a time, E and A in turn question by question;
 *   the service's own took_ms; top-10 agreement = the share of questions whose bundle ids are equal in order.
 * - writes: a document ingested through A, then B or C (two writes each in turn) asked until a lexical retrieve
 *   finds it, either polling at once without min_generation or sending the write's generation as min_generation
 *   (alternating write by write); from A's answer to the reader's first answer holding it. B follows the writes
 *   (catches up as each is recorded), C catches up only when a read finds a newer version. `--writes` in a namespace of their own (the catalog
 *   re-read after a write is O(namespace): docs/scale-out-state.md), then `--writes-corpus` in the corpus's.
 * - reads-during-writes (not in the default parts): `--clients` clients of hybrid retrieves on B for `--seconds`, with
 *   no writes, then while A writes one document into the corpus namespace every `--write-every-ms` (each value a
 *   window); the share of B's lexical searches its local copy answered (`recall_lexical_searches_total`).
 * - first-read (not in the default parts): a fourth replica D started over the filled stores; unfiltered retrieves
 *   during its first read of the corpus namespace, against A's answers, and a filtered one waiting for the read.
 * - deletes (not in the default parts): `--deletes` documents ingested through A into a namespace of their own (then
 *   `--deletes-corpus` into the corpus's), read by both; then each deleted through B and A asked until a lexical
 *   retrieve no longer finds it, polled at once or with the delete's generation as min_generation (alternating).
 * - In writes and deletes, each sample also keeps what the reader's catch-ups did meanwhile (the deltas of
 *   `recall_catalog_catch_up_*` on its /metrics: their time, phases, and documents from the write window or read back).
 * - `--tree DIR` starts the recall processes from another checkout (e.g. the previous main, for a side-by-side run);
 *   the bench, the stores and the preload are this tree's. `--base DIR` first runs the writes and deletes parts (B the
 *   only reader) with A and B started from DIR over the same stores (namespaces `writes-base`, `deletes-base` and the
 *   corpus's), stops them, then runs this tree's: a side-by-side run, one pass after the other (`base` in the results).
 * - throughput: `--clients` concurrent clients of uncached hybrid retrieves for `--seconds`, against A alone,
 *   then against A and B round-robin in the client; CPU seconds of each process (/proc) over the run.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { cpus, loadavg, tmpdir, totalmem } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { canStartQdrant, startQdrant } from '../test/helpers/qdrant-server.js'
import { startRedis } from '../test/helpers/redis-server.js'
import { startServer, type ServerProcess } from '../scripts/lib/server-process.js'
import { loadCmrc } from './lib/cmrc.js'
import { modelDir } from './lib/corpus.js'
import { preload } from './lib/preload.js'
import { syntheticDocuments } from './lib/synthetic.js'

const { values } = parseArgs({
  options: {
    chunks: { type: 'string', default: '10000' }, questions: { type: 'string', default: '500' },
    writes: { type: 'string', default: '200' }, 'writes-corpus': { type: 'string', default: '20' },
    clients: { type: 'string', default: '8' }, seconds: { type: 'string', default: '30' },
    parts: { type: 'string', default: 'hybrid,writes,throughput' },
    'write-every-ms': { type: 'string', default: '1000,200' },
    'wait-for-copies': { type: 'string', default: 'true' },
    readers: { type: 'string', default: 'B,C' },
    deletes: { type: 'string', default: '100' }, 'deletes-corpus': { type: 'string', default: '100' },
    tree: { type: 'string' }, base: { type: 'string' },
    // wait for Qdrant's background indexing after the preload (default), or measure at once
    'qdrant-green': { type: 'string', default: 'true' },
    // a folder to write each recall process's output into at the end (e.g. with NODE_OPTIONS=--trace-gc)
    'server-output': { type: 'string' },
    // node flags for the recall processes, e.g. --trace-gc (which NODE_OPTIONS does not take)
    'node-args': { type: 'string', default: '' },
    out: { type: 'string', default: 'replicas-service' },
    // writes results/<name>.md again from results/<name>.json, and runs nothing
    render: { type: 'string' }
  }
})
const CHUNKS = Number(values.chunks)
const QUESTIONS = Number(values.questions)
const WRITES = Number(values.writes)
const WRITES_CORPUS = Number(values['writes-corpus'])
const CLIENTS = Number(values.clients)
const SECONDS = Number(values.seconds)
const PARTS = new Set(values.parts.split(','))
const WRITE_EVERY_MS = values['write-every-ms'].split(',').map(Number)
/** false: the writes start once the readers have read the corpus namespace, while their copies may still be built. */
const WAIT_FOR_COPIES = values['wait-for-copies'] !== 'false'
// the writes part's readers: B follows the writes, C does not (`--readers B` leaves C out, and its load)
const READERS = new Set(values.readers.split(','))
const DELETES = Number(values.deletes)
const DELETES_CORPUS = Number(values['deletes-corpus'])
/** The checkout the recall processes run from (default this one). */
const TREE = values.tree
const NODE_ARGS = values['node-args'].split(' ').filter((a) => a !== '')
const optionsFor = (tree: string | undefined) => ({
  timeoutMs: 600_000,
  ...(tree || NODE_ARGS.length > 0 ? { ...(tree ? { cwd: tree } : {}), args: [...NODE_ARGS, '--import', 'tsx', join(tree ?? '.', 'src/http/server.ts')] } : {})
})
const serverOptions = optionsFor(TREE)
/** The checkout of the base pass, if any. */
const BASE = values.base

const pct = (xs: readonly number[], p: number) => {
  if (xs.length === 0) return NaN
  const s = [...xs].sort((a, b) => a - b)
  return Math.round(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! * 100) / 100
}
const r2 = (x: number) => Math.round(x * 100) / 100
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const log = (line: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`)

interface Hit { id: string; score: number }
interface RetrieveAnswer { recall_bundle: Hit[]; took_ms: number; legs: { name: string; took_ms: number; status: string }[]; generation?: number }

async function retrieve(url: string, q: string, extra = ''): Promise<{ status: number; body: RetrieveAnswer }> {
  const r = await fetch(`${url}/retrieve?mode=hybrid&top_k=10&q=${encodeURIComponent(q)}${extra}`)
  return { status: r.status, body: await r.json() as RetrieveAnswer }
}

/**
 * Resolves once `url` has read its catalog of `namespace`: a retrieve with a filter waits for that read (an
 * unfiltered one is answered from the stores meanwhile: docs/scale-out-state.md); the filter names no document.
 */
async function catalogRead(url: string, namespace: string): Promise<void> {
  const body = { mode: 'hybrid', query: '预热', legs: ['lexical'], namespace, filter: { doc_ids: ['catalog-probe'] } }
  // a 503 (the lexical leg on Qdrant timing out while the copy is built, at 100k on a loaded machine) is asked again
  for (let tries = 0; ; tries++) {
    const r = await fetch(`${url}/retrieve`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
    if (r.status === 200) return
    if (r.status !== 503 || tries >= 300) throw new Error(`the catalog probe of ${namespace} answered ${r.status}: ${await r.text()}`)
    await sleep(1000)
  }
}

/** CPU seconds (user + system) a process has used, from /proc/<pid>/stat (clock ticks of 1/100 s). */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100
}

/** The pid of the Qdrant server running in `dir` (qdrant-run starts it there: the one this bench started). */
function qdrantPid(dir: string): number | undefined {
  for (const entry of readdirSync('/proc').filter((e) => /^\d+$/.test(e))) {
    try {
      if (readlinkSync(`/proc/${entry}/cwd`) === dir && readFileSync(`/proc/${entry}/comm`, 'utf8').startsWith('qdrant')) return Number(entry)
    } catch { /* gone, or not ours */ }
  }
  return undefined
}

async function hybridPart(e: ServerProcess, a: ServerProcess, questions: readonly string[]) {
  for (const q of questions.slice(0, 20)) { await retrieve(e.url, q); await retrieve(a.url, q) }
  const tookE: number[] = []
  const tookQ: number[] = []
  const legs: Record<string, { embedded: number[]; qdrant: number[] }> = {}
  let same = 0
  let overlap = 0
  let failed = 0
  for (const [i, q] of questions.entries()) {
    const x = await retrieve(e.url, q)
    const y = await retrieve(a.url, q)
    if (x.status !== 200 || y.status !== 200) { failed++; continue }
    tookE.push(x.body.took_ms)
    tookQ.push(y.body.took_ms)
    for (const [arm, body] of [['embedded', x.body], ['qdrant', y.body]] as const) {
      for (const leg of body.legs) (legs[leg.name] ??= { embedded: [], qdrant: [] })[arm].push(leg.took_ms)
    }
    const ix = x.body.recall_bundle.map((h) => h.id)
    const iy = y.body.recall_bundle.map((h) => h.id)
    if (JSON.stringify(ix) === JSON.stringify(iy)) same++
    overlap += ix.filter((id) => iy.includes(id)).length / Math.max(1, ix.length)
    if (i % 100 === 99) log(`hybrid: ${i + 1}/${questions.length}`)
  }
  const n = tookE.length
  return {
    questions: questions.length, failed,
    took_ms_embedded: { median: pct(tookE, 50), p99: pct(tookE, 99) },
    took_ms_qdrant: { median: pct(tookQ, 50), p99: pct(tookQ, 99) },
    ratio: { median: r2(pct(tookQ, 50) / pct(tookE, 50)), p99: r2(pct(tookQ, 99) / pct(tookE, 99)) },
    legs_median_ms: Object.fromEntries(Object.entries(legs).map(([k, v]) => [k, { embedded: pct(v.embedded, 50), qdrant: pct(v.qdrant, 50) }])),
    top10_identical: r2(same / n),
    top10_overlap_mean: Math.round((overlap / n) * 1000) / 1000
  }
}

/** B's catalog catch-ups so far, by kind, and their phases: how many and their total seconds (`recall_catalog_catch_up_seconds`). */
async function catchUps(b: ServerProcess): Promise<Record<string, { count: number; seconds: number }>> {
  const text = await (await fetch(`${b.url}/metrics`)).text()
  const out: Record<string, { count: number; seconds: number }> = {}
  for (const m of text.matchAll(/^recall_catalog_catch_up_seconds_(count|sum)\{kind="(\w+)",reason="([\w-]+)"\} ([\d.e+-]+)$/gm)) {
    const entry = (out[`${m[2]} (${m[3]})`] ??= { count: 0, seconds: 0 })
    if (m[1] === 'count') entry.count = Number(m[4])
    else entry.seconds = Number(m[4])
  }
  // and where their time went (recall_catalog_catch_up_phase_seconds), as `phase <name>`
  for (const m of text.matchAll(/^recall_catalog_catch_up_phase_seconds_(count|sum)\{phase="(\w+)"\} ([\d.e+-]+)$/gm)) {
    const entry = (out[`phase ${m[2]}`] ??= { count: 0, seconds: 0 })
    if (m[1] === 'count') entry.count = Number(m[3])
    else entry.seconds = Number(m[3])
  }
  return out
}

/** Waits until every collection of the Qdrant at `url` is `green` (its optimizers idle); the seconds it took. */
async function untilCollectionsGreen(url: string): Promise<number> {
  const started = performance.now()
  for (;;) {
    const names = ((await (await fetch(`${url}/collections`)).json()) as { result: { collections: { name: string }[] } }).result.collections.map((c) => c.name)
    const statuses = await Promise.all(names.map(async (name) => ((await (await fetch(`${url}/collections/${name}`)).json()) as { result: { status: string } }).result.status))
    if (statuses.every((s) => s === 'green')) return (performance.now() - started) / 1000
    if (performance.now() - started > 600_000) throw new Error(`Qdrant's collections not green after 600 s: ${statuses.join(', ')}`)
    await new Promise((resolve) => setTimeout(resolve, 500))
  }
}

/** What a replica's catch-ups have done so far: count, seconds, seconds per phase, documents by source. */
interface CatchUpTotals { count: number; seconds: number; phases: Record<string, number>; documents: Record<string, number> }

async function catchUpTotals(s: ServerProcess): Promise<CatchUpTotals> {
  const text = await (await fetch(`${s.url}/metrics`)).text()
  const totals: CatchUpTotals = { count: 0, seconds: 0, phases: {}, documents: {} }
  for (const m of text.matchAll(/^recall_catalog_catch_up_seconds_(count|sum)\{[^}]*\} ([\d.e+-]+)$/gm)) {
    if (m[1] === 'count') totals.count += Number(m[2])
    else totals.seconds += Number(m[2])
  }
  for (const m of text.matchAll(/^recall_catalog_catch_up_phase_seconds_sum\{phase="(\w+)"\} ([\d.e+-]+)$/gm)) totals.phases[m[1]!] = Number(m[2])
  for (const m of text.matchAll(/^recall_catalog_catch_up_documents_total\{source="(\w+)"\} (\d+)$/gm)) totals.documents[m[1]!] = Number(m[2])
  return totals
}

/** One sample's catch-up work on the reader (after minus before): ms in all and per phase, documents by source. */
function catchUpDelta(before: CatchUpTotals, after: CatchUpTotals) {
  const phases = Object.fromEntries(Object.keys(after.phases).map((k) => [k, r2((after.phases[k]! - (before.phases[k] ?? 0)) * 1000)]))
  const documents = Object.fromEntries(Object.keys(after.documents).map((k) => [k, after.documents[k]! - (before.documents[k] ?? 0)]))
  return { count: after.count - before.count, ms: r2((after.seconds - before.seconds) * 1000), phases, documents }
}

type CatchUpSample = ReturnType<typeof catchUpDelta>

/**
 * Where the samples' time went: for all of them and for those over 50 ms, the mean of the reader's catch-up (each
 * phase) and of the rest (from the writer's answer to the reader's first answer showing it, less the catch-up: the
 * change log's delivery, the wait for it, the probing retrieve), and the documents taken from the window or read back.
 */
function split(samples: readonly { ms: number; catch_up: CatchUpSample }[]) {
  const of = (xs: readonly { ms: number; catch_up: CatchUpSample }[]) => {
    if (xs.length === 0) return { n: 0 }
    const mean = (f: (x: { ms: number; catch_up: CatchUpSample }) => number) => r2(xs.reduce((t, x) => t + f(x), 0) / xs.length)
    const phases = [...new Set(xs.flatMap((x) => Object.keys(x.catch_up.phases)))]
    const sources = [...new Set(xs.flatMap((x) => Object.keys(x.catch_up.documents)))]
    return {
      n: xs.length, findable_ms: mean((x) => x.ms), catch_up_ms: mean((x) => x.catch_up.ms),
      catch_ups: mean((x) => x.catch_up.count),
      phases_ms: Object.fromEntries(phases.map((k) => [k, mean((x) => x.catch_up.phases[k] ?? 0)])),
      rest_ms: mean((x) => x.ms - x.catch_up.ms),
      documents: Object.fromEntries(sources.map((k) => [k, xs.reduce((t, x) => t + (x.catch_up.documents[k] ?? 0), 0)]))
    }
  }
  return { all: of(samples), over_50_ms: of(samples.filter((x) => x.ms > 50)) }
}

interface Reader { name: string; follows: boolean; server: ServerProcess }

/**
 * Writes through A, each then looked for on one reader, the readers in turn (two writes each: one polled at once
 * without min_generation, one sending the write's generation): B follows the writes (CATALOG_FOLLOW_WRITES=true, the
 * default) and C does not, so the two are measured side by side over the same stores and load.
 */
async function writesPart(a: ServerProcess, readers: readonly Reader[], namespace: string, count: number, sentences: readonly string[]) {
  // the steady state: each reader has read the namespace once (a first read of a large namespace holds its reads)
  const firstReadWaitMs: Record<string, number> = {}
  for (const r of readers) {
    const warmStarted = performance.now()
    await catalogRead(r.server.url, namespace)
    firstReadWaitMs[r.name] = r2(performance.now() - warmStarted)
    await retrieve(r.server.url, '预热', `&legs=lexical&namespace=${namespace}`)
  }
  const catchUpsBefore = Object.fromEntries(await Promise.all(readers.map(async (r) => [r.name, await catchUps(r.server)] as const)))
  const runs = new Map(readers.map((r) => [r.name, {
    with: [] as number[], without: [] as number[], polls: [] as number[], samples: [] as { write: number; min_generation: boolean; ms: number; catch_up: CatchUpSample }[]
  }]))
  const ingestMs: number[] = []
  const tag = `w${Date.now().toString(36)}`
  let refused = 0
  for (let i = 0; i < count; i++) {
    const token = `${tag}x${i}`
    const id = `write-${token}`
    const body = { namespace, documents: [{ id, text: `# 写入 ${token}\n\n${sentences[i % sentences.length]}` }] }
    const reader = readers[Math.floor(i / 2) % readers.length]!
    const totalsBefore = await catchUpTotals(reader.server)
    const t0 = performance.now()
    let w = await fetch(`${a.url}/ingest/documents`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
    // a 503 (the write lock not taken in time) is sent again, and counted
    for (let again = 0; w.status === 503 && again < 5; again++) {
      refused++
      w = await fetch(`${a.url}/ingest/documents`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
    }
    const answered = performance.now()
    const { generation } = await w.json() as { generation?: number }
    if (w.status !== 200 || generation === undefined) throw new Error(`ingest through A answered ${w.status} without a generation`)
    ingestMs.push(answered - t0)
    const useGeneration = i % 2 === 1
    const extra = `&legs=lexical&namespace=${namespace}${useGeneration ? `&min_generation=${generation}` : ''}`
    let polls = 0
    for (;;) {
      polls++
      const r = await retrieve(reader.server.url, token, extra)
      if (r.status === 200 && r.body.recall_bundle.some((h) => h.id.startsWith(`${id}#`))) break
      if (polls > 10_000) throw new Error(`${reader.name} never found ${id}`)
    }
    const ms = performance.now() - answered
    const run = runs.get(reader.name)!
    ;(useGeneration ? run.with : run.without).push(ms)
    // a catch-up may still be recording its metrics as the answer leaves: a moment for it
    await sleep(5)
    run.samples.push({ write: i, min_generation: useGeneration, ms: r2(ms), catch_up: catchUpDelta(totalsBefore, await catchUpTotals(reader.server)) })
    run.polls.push(polls)
    if (i % 50 === 49) log(`writes (${namespace}): ${i + 1}/${count}`)
  }
  const summary = (xs: number[]) => ({ n: xs.length, p50: pct(xs, 50), p99: pct(xs, 99), max: pct(xs, 100) })
  const byReader: Record<string, unknown> = {}
  for (const r of readers) {
    const run = runs.get(r.name)!
    const after = await catchUps(r.server)
    byReader[r.name] = {
      follows_writes: r.follows, first_read_wait_ms: firstReadWaitMs[r.name],
      findable_ms_without_min_generation: summary(run.without),
      findable_ms_with_min_generation: summary(run.with),
      // the reader's first write of the part, and the rest: a one-time cost (a new namespace, cold code) apart
      first_write: run.samples[0],
      findable_ms_after_the_first: summary(run.samples.slice(1).map((x) => x.ms)),
      slowest: [...run.samples].sort((x, y) => y.ms - x.ms).slice(0, 5).map(({ write, ms }) => ({ write, ms })),
      split: split(run.samples),
      samples: run.samples,
      polls: { mean: r2(run.polls.reduce((s, x) => s + x, 0) / Math.max(1, run.polls.length)), max: Math.max(...run.polls) },
      // what the reader did to catch up during these writes (all of them: a follower catches up every write)
      catch_ups: Object.fromEntries(Object.entries(after).map(([kind, v]) => [kind, {
        count: v.count - (catchUpsBefore[r.name]![kind]?.count ?? 0), seconds: r2(v.seconds - (catchUpsBefore[r.name]![kind]?.seconds ?? 0))
      }]))
    }
  }
  return { namespace, writes: count, ingest_503_sent_again: refused, ingest_call_ms: summary(ingestMs), readers: byReader }
}

/**
 * `count` documents ingested through A (batches of 50) and read by both, then each deleted through B and A asked until
 * a lexical retrieve of its token no longer finds it: polled at once, or with the delete's generation as min_generation
 * (alternating). From B's answer to A's first answer without it; with A's catch-up work per sample.
 */
async function deletesPart(a: ServerProcess, b: ServerProcess, namespace: string, count: number, sentences: readonly string[]) {
  const tag = `d${Date.now().toString(36)}`
  const docs = Array.from({ length: count }, (_, i) => ({ id: `delete-${tag}x${i}`, token: `${tag}x${i}`, text: `# 删除 ${tag}x${i}\n\n${sentences[i % sentences.length]}` }))
  for (let i = 0; i < docs.length; i += 50) {
    const w = await fetch(`${a.url}/ingest/documents`, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ namespace, documents: docs.slice(i, i + 50).map(({ id, text }) => ({ id, text })) })
    })
    if (w.status !== 200) throw new Error(`ingest through A answered ${w.status}: ${await w.text()}`)
  }
  const found = async (s: ServerProcess, d: { id: string; token: string }, extra = '') => {
    const r = await retrieve(s.url, d.token, `&legs=lexical&namespace=${namespace}${extra}`)
    return { status: r.status, found: r.status === 200 && r.body.recall_bundle.some((h) => h.id.startsWith(`${d.id}#`)) }
  }
  // both have read the namespace and hold every document (each catch-up done)
  for (const s of [a, b]) {
    await catalogRead(s.url, namespace)
    for (const d of docs) {
      for (let tries = 0; !(await found(s, d)).found; tries++) {
        if (tries > 500) throw new Error(`${d.id} never found before its delete`)
        await sleep(20)
      }
    }
  }
  const samples: { delete: number; min_generation: boolean; ms: number; catch_up: CatchUpSample }[] = []
  const polls: number[] = []
  for (const [i, d] of docs.entries()) {
    const totalsBefore = await catchUpTotals(a)
    const w = await fetch(`${b.url}/documents/${encodeURIComponent(d.id)}?namespace=${namespace}`, { method: 'DELETE' })
    const answered = performance.now()
    const { generation } = await w.json() as { generation?: number }
    if (w.status !== 200 || generation === undefined) throw new Error(`delete through B answered ${w.status} without a generation`)
    const useGeneration = i % 2 === 1
    let n = 0
    for (;;) {
      n++
      const r = await found(a, d, useGeneration ? `&min_generation=${generation}` : '')
      if (r.status === 200 && !r.found) break
      if (n > 10_000) throw new Error(`A still finds ${d.id}`)
    }
    const ms = performance.now() - answered
    polls.push(n)
    await sleep(5)
    samples.push({ delete: i, min_generation: useGeneration, ms: r2(ms), catch_up: catchUpDelta(totalsBefore, await catchUpTotals(a)) })
    if (i % 50 === 49) log(`deletes (${namespace}): ${i + 1}/${count}`)
  }
  const summary = (xs: number[]) => ({ n: xs.length, p50: pct(xs, 50), p99: pct(xs, 99), max: pct(xs, 100) })
  return {
    namespace, deletes: count,
    gone_ms_without_min_generation: summary(samples.filter((x) => !x.min_generation).map((x) => x.ms)),
    gone_ms_with_min_generation: summary(samples.filter((x) => x.min_generation).map((x) => x.ms)),
    gone_ms_both: summary(samples.map((x) => x.ms)),
    polls: { mean: r2(polls.reduce((t, x) => t + x, 0) / Math.max(1, polls.length)), max: Math.max(...polls) },
    slowest: [...samples].sort((x, y) => y.ms - x.ms).slice(0, 5).map(({ delete: n, ms }) => ({ delete: n, ms })),
    split: split(samples),
    samples
  }
}

/** `recall_lexical_searches_total` of a replica: path -> count. */
async function lexicalPaths(s: ServerProcess): Promise<Record<string, number>> {
  const text = await (await fetch(`${s.url}/metrics`)).text()
  return Object.fromEntries([...text.matchAll(/^recall_lexical_searches_total\{path="([\w:-]+)"\} (\d+)$/gm)].map((m) => [m[1]!, Number(m[2])] as const))
}

/** Ms until a lexical retrieve of `namespace` on `s` is answered by its local copy (its build done). */
async function untilCopyAnswers(s: ServerProcess, namespace: string): Promise<number> {
  const started = performance.now()
  for (;;) {
    const before = (await lexicalPaths(s))['local-copy'] ?? 0
    await retrieve(s.url, '预热', `&legs=lexical&namespace=${namespace}`)
    if (((await lexicalPaths(s))['local-copy'] ?? 0) > before) return performance.now() - started
    if (performance.now() - started > 600_000) throw new Error(`the local copy of ${namespace} never answered`)
    await sleep(200)
  }
}

/** Hybrid retrieves answered without waiting for a first catalog read (`recall_store_view_reads_total`). */
async function storeViewReads(s: ServerProcess): Promise<number> {
  const text = await (await fetch(`${s.url}/metrics`)).text()
  return Number(/^recall_store_view_reads_total (\d+)$/m.exec(text)?.[1] ?? 0)
}

const countOf = (xs: readonly string[]) => Object.fromEntries([...new Set(xs)].map((x) => [x, xs.filter((y) => y === x).length]))

const answerKey = (body: RetrieveAnswer) => JSON.stringify(body.recall_bundle.map((h) => [h.id, h.score]))

/**
 * A replica D started over the filled stores: from its readiness until its first read of the corpus namespace's
 * catalog is done, unfiltered hybrid retrieves one at a time (answered from the stores meanwhile), and one filtered
 * retrieve sent at once (it waits for the read, as every retrieve did before). Each answer during the read is
 * compared with A's (catalog read) to the same question; then the same questions on D once its copy answers.
 */
async function firstReadPart(env: Record<string, string>, a: ServerProcess, questions: readonly string[]) {
  const asked = questions.slice(0, 300)
  const expected = new Map<string, string>()
  for (const q of asked) expected.set(q, answerKey((await retrieve(a.url, q)).body))
  const started = performance.now()
  const d = await startServer(env, { timeoutMs: 600_000 })
  const readyMs = performance.now() - started
  let readMs: number | undefined
  const probeStarted = performance.now()
  const probe = catalogRead(d.url, 'default').then(() => { readMs = performance.now() - probeStarted })
  const during: number[] = []
  const differing: { query: string; legs: string[]; a: unknown; d: unknown }[] = []
  // answers with a leg that failed or timed out (a degraded answer is not A's) and whole answers that still differ
  const degraded: string[] = []
  let differingWhole = 0
  let identical = 0
  let failed = 0
  for (const q of asked) {
    const t0 = performance.now()
    const r = await retrieve(d.url, q)
    if (readMs !== undefined) break // answered once the read was done: not a store view's answer for sure
    if (r.status !== 200) { failed++; continue }
    during.push(performance.now() - t0)
    const failedLegs = r.body.legs.filter((l) => l.status !== 'ok' && l.status !== 'skipped').map((l) => `${l.name}: ${l.status}`)
    if (failedLegs.length > 0) degraded.push(failedLegs.join(', '))
    if (answerKey(r.body) === expected.get(q)) identical++
    else if (failedLegs.length === 0) differingWhole++
    if (answerKey(r.body) !== expected.get(q) && differing.length < 5) {
      differing.push({ query: q, legs: failedLegs, a: JSON.parse(expected.get(q)!), d: JSON.parse(answerKey(r.body)) })
    }
  }
  await probe
  const views = await storeViewReads(d)
  const copyMs = await untilCopyAnswers(d, 'default')
  const after: number[] = []
  let identicalAfter = 0
  for (const q of asked.slice(0, Math.max(during.length, 50))) {
    const t0 = performance.now()
    const r = await retrieve(d.url, q)
    after.push(performance.now() - t0)
    if (answerKey(r.body) === expected.get(q)) identicalAfter++
  }
  await d.kill()
  const summary = (xs: number[]) => ({ n: xs.length, p50: r2(pct(xs, 50)), p99: r2(pct(xs, 99)), max: r2(Math.max(...xs)) })
  return {
    ready_ms: r2(readyMs), filtered_retrieve_ms: r2(readMs!), copy_answered_after_read_ms: r2(copyMs),
    during_read: {
      ...summary(during), failed, identical_to_a: r2(identical / Math.max(1, during.length)),
      degraded: degraded.length, degraded_legs: countOf(degraded), whole_answers_differing: differingWhole, differing
    },
    store_view_reads: views,
    after_copy: { ...summary(after), identical_to_a: r2(identicalAfter / Math.max(1, after.length)) }
  }
}

async function throughputPart(
  targets: readonly ServerProcess[], questions: readonly string[], pids: Record<string, number | undefined>,
  /** Runs beside the clients until `done()` says the window is over; answers what it did (e.g. writes made). */
  beside?: (done: () => boolean) => Promise<number>
) {
  let next = 0
  let ok = 0
  let other = 0
  const statuses: Record<string, number> = {}
  const latencies: number[] = []
  const legs: Record<string, number[]> = {}
  const before = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, pid ? cpuSeconds(pid) : NaN]))
  const started = performance.now()
  const deadline = started + SECONDS * 1000
  const besideDone = beside?.(() => performance.now() >= deadline)
  await Promise.all(Array.from({ length: CLIENTS }, async () => {
    while (performance.now() < deadline) {
      const n = next++
      const t = performance.now()
      const r = await retrieve(targets[n % targets.length]!.url, questions[n % questions.length]!)
      if (r.status !== 200) {
        other++
        const code = `${r.status} ${(r.body as unknown as { code?: string }).code ?? ''}`.trim()
        statuses[code] = (statuses[code] ?? 0) + 1
        continue
      }
      ok++
      latencies.push(performance.now() - t)
      for (const leg of r.body.legs) (legs[leg.name] ??= []).push(leg.took_ms)
    }
  }))
  const besideCount = await besideDone
  const wall = (performance.now() - started) / 1000
  const cpu = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, pid ? r2((cpuSeconds(pid) - before[k]!) / wall) : null]))
  return {
    replicas: targets.length, clients: CLIENTS, seconds: r2(wall),
    answers_per_s: r2(ok / wall), non_200: other, non_200_by_code: statuses,
    latency_ms: { p50: pct(latencies, 50), p99: pct(latencies, 99) },
    legs_median_ms: Object.fromEntries(Object.entries(legs).map(([k, v]) => [k, pct(v, 50)])),
    legs_p99_ms: Object.fromEntries(Object.entries(legs).map(([k, v]) => [k, pct(v, 99)])),
    ...(besideCount !== undefined ? { beside: besideCount } : {}),
    cores_used: cpu
  }
}

function markdown(result: Record<string, any>): string {
  const [start, end] = result.load_average_1_5_15 as number[][]
  const lines = [`# Replicas over HTTP (bench/replicas-service.ts, ${result.at})`, '',
    `${result.chunks} CMRC-derived chunks, stand-in passage vectors, the real model embedding every query; machine: ${result.machine.cpus} cores shared with other work, load average (1/5/15 min) ${start!.join(' / ')} at the start, ${end!.join(' / ')} at the end.`, '']
  const h = result.hybrid
  if (h) {
    lines.push('## Hybrid end to end, Qdrant (vector + lexical) against embedded', '',
      '| | median ms | p99 ms |', '|---|---|---|',
      `| embedded | ${h.took_ms_embedded.median} | ${h.took_ms_embedded.p99} |`,
      `| Qdrant | ${h.took_ms_qdrant.median} | ${h.took_ms_qdrant.p99} |`,
      `| ratio | ${h.ratio.median} | ${h.ratio.p99} |`, '',
      `${h.questions} questions; top-10 identical (ids in order) ${h.top10_identical}, mean top-10 overlap ${h.top10_overlap_mean}. Leg medians (ms, embedded / Qdrant): ${Object.entries(h.legs_median_ms as Record<string, { embedded: number; qdrant: number }>).map(([k, v]) => `${k} ${v.embedded} / ${v.qdrant}`).join(', ')}.`, '')
  }
  if (result.corpus_first_read_wait_ms) {
    const built = result.corpus_copy_built_wait_ms as Record<string, number> | undefined
    lines.push(`Before the writes, each reader's first read of the corpus namespace (started in the background at its start-up) held a retrieve for ${Object.entries(result.corpus_first_read_wait_ms as Record<string, number>).map(([k, v]) => `${k} ${v} ms`).join(', ')}` +
      (built ? `; its local copy of the postings first answered ${Object.entries(built).map(([k, v]) => `${k} ${v} ms`).join(', ')} after that.` : ' (the run did not wait for the local copies to be built).'), '')
  }
  const f = result.first_read
  if (f) {
    lines.push('## A replica\'s first read of the corpus namespace', '',
      `D started over the filled stores and was ready in ${f.ready_ms} ms. A filtered retrieve sent then waited ${f.filtered_retrieve_ms} ms for D's first read of the namespace's catalog (every retrieve waited so before); its local copy of the postings answered ${f.copy_answered_after_read_ms} ms after that.`, '',
      '| unfiltered hybrid retrieves on D, one at a time | n | p50 ms | p99 ms | max ms | identical to A\'s answer |', '|---|---|---|---|---|---|',
      `| during the read (answered from the stores) | ${f.during_read.n} | ${f.during_read.p50} | ${f.during_read.p99} | ${f.during_read.max} | ${f.during_read.identical_to_a} |`,
      `| the same questions once the copy answers | ${f.after_copy.n} | ${f.after_copy.p50} | ${f.after_copy.p99} | ${f.after_copy.max} | ${f.after_copy.identical_to_a} |`, '',
      `D counted ${f.store_view_reads} retrieves that did not wait (recall_store_view_reads_total); ${f.during_read.failed} failed during the read` +
      (f.during_read.degraded === undefined ? '.' : `, ${f.during_read.degraded} answered with a leg that failed or timed out (${Object.entries(f.during_read.degraded_legs as Record<string, number>).map(([k, v]) => `${k} ${v}`).join('; ') || 'none'}), and ${f.during_read.whole_answers_differing} answers with every leg ok differed from A's.`), '')
  }
  const passes: [string, Record<string, any>][] = [['', result], ...(result.base ? [[` — base (${result.setup.base_tree}, the pass before)`, result.base] as [string, Record<string, any>]] : [])]
  for (const [label, pass] of passes) for (const w of pass.writes ?? []) {
    lines.push(`## Write on A, findable on the other replica (namespace \`${w.namespace}\`, ${w.writes} writes)${label}`, '',
      '| reader | follows writes | n without / with | p50 ms without / with min_generation | p99 ms without / with | max ms without / with |', '|---|---|---|---|---|---|')
    for (const [name, r] of Object.entries(w.readers as Record<string, any>)) {
      const [x, y] = [r.findable_ms_without_min_generation, r.findable_ms_with_min_generation]
      lines.push(`| ${name} | ${r.follows_writes ? 'yes' : 'no'} | ${x.n} / ${y.n} | ${x.p50} / ${y.p50} | ${x.p99} / ${y.p99} | ${x.max} / ${y.max} |`)
    }
    lines.push('', `The ingest call through A (real model): p50 ${w.ingest_call_ms.p50} ms, p99 ${w.ingest_call_ms.p99} ms.`)
    for (const [name, r] of Object.entries(w.readers as Record<string, any>)) {
      if (r.first_write) {
        const after = r.findable_ms_after_the_first
        lines.push(`${name}: its first write of the part (${r.first_write.min_generation ? 'with' : 'without'} min_generation) was found in ${r.first_write.ms} ms; the ${after.n} after it, both ways: p50 ${r2(after.p50)}, p99 ${r2(after.p99)}, max ${r2(after.max)} ms; slowest writes ${(r.slowest as { write: number; ms: number }[]).map((x) => `#${x.write} ${x.ms} ms`).join(', ')}.`)
      }
      if (r.split) lines.push(`${name}: ${splitLine(r.split)}`)
      lines.push(`${name}: first read of the namespace before the writes ${r.first_read_wait_ms} ms; polls per write ${r.polls.mean} mean (max ${r.polls.max}); catch-ups meanwhile: ${Object.entries(r.catch_ups as Record<string, { count: number; seconds: number }>).map(([k, v]) => `${k} ${v.count} (${v.seconds} s)`).join(', ') || 'none'}.`)
    }
    lines.push('')
  }
  for (const [label, pass] of passes) for (const d of pass.deletes ?? []) {
    const [x, y, z] = [d.gone_ms_without_min_generation, d.gone_ms_with_min_generation, d.gone_ms_both]
    lines.push(`## Delete on B, gone on A (namespace \`${d.namespace}\`, ${d.deletes} deletes)${label}`, '',
      '| polled | n | p50 ms | p99 ms | max ms |', '|---|---|---|---|---|',
      `| at once | ${x.n} | ${x.p50} | ${x.p99} | ${x.max} |`,
      `| with min_generation | ${y.n} | ${y.p50} | ${y.p99} | ${y.max} |`,
      `| both | ${z.n} | ${z.p50} | ${z.p99} | ${z.max} |`, '',
      `A: ${splitLine(d.split)}; slowest deletes ${(d.slowest as { delete: number; ms: number }[]).map((s) => `#${s.delete} ${s.ms} ms`).join(', ')}; polls per delete ${d.polls.mean} mean (max ${d.polls.max}).`, '')
  }
  if (result.reads_during_writes) {
    lines.push('## B answering while A writes (B follows the writes)', '',
      '| writes through A | writes made | answers/s on B | p50 ms | p99 ms | lexical leg p50 / p99 ms | lexical searches from the local copy | paths |',
      '|---|---|---|---|---|---|---|---|')
    for (const r of result.reads_during_writes.runs) {
      lines.push(`| ${r.write_every_ms === null ? 'none' : `one every ${r.write_every_ms} ms`} | ${r.beside ?? 0} | ${r.answers_per_s} | ${r.latency_ms.p50} | ${r.latency_ms.p99} | ${r.legs_median_ms.lexical} / ${r.legs_p99_ms.lexical} | ${r.local_copy_share} | ${Object.entries(r.lexical_paths as Record<string, number>).map(([k, v]) => `${k} ${v}`).join(', ')} |`)
    }
    lines.push('')
  }
  if (result.throughput) {
    lines.push('## Answers per second, one replica and two', '', '| replicas | answers/s | p50 ms | p99 ms | cores used (A, B, Qdrant, Redis, bench client) |', '|---|---|---|---|---|')
    for (const t of result.throughput.runs) {
      lines.push(`| ${t.replicas} | ${t.answers_per_s} | ${t.latency_ms.p50} | ${t.latency_ms.p99} | ${['A', 'B', 'qdrant', 'redis', 'client'].map((k) => t.cores_used[k] ?? '–').join(', ')} |`)
    }
    lines.push('', `Ratio two / one: ${result.throughput.ratio}.`, '')
  }
  return `${lines.join('\n')}\n`
}

/** The split of a part's samples (`split`) in words. */
function splitLine(sp: { all: Record<string, any>; over_50_ms: Record<string, any> }): string {
  const part = (x: Record<string, any>) => x.n === 0 ? 'none' :
    `n ${x.n}, mean ${x.findable_ms} ms = catch-up ${x.catch_up_ms} ms (${x.catch_ups} a sample; ${Object.entries(x.phases_ms as Record<string, number>).map(([k, v]) => `${k} ${v}`).join(', ')}) + the rest ${x.rest_ms} ms; documents ${Object.entries(x.documents as Record<string, number>).map(([k, v]) => `${k} ${v}`).join(', ') || 'none counted'}`
  return `all samples: ${part(sp.all)}. Over 50 ms: ${part(sp.over_50_ms)}`
}

async function main(): Promise<void> {
  if (!canStartQdrant()) throw new Error('needs ../shared/qdrant/')
  const loadStart = loadavg().map(r2)
  const qdrant = await startQdrant()
  const redis = await startRedis()
  const dir = await mkdtemp(join(tmpdir(), 'recall-bench-replicas-service-'))
  const prefix = `bench${process.pid}_`
  const common = {
    DEMO_DATA: 'false', LOG_LEVEL: 'warn', RATE_LIMIT_MAX: '0', CACHE_TTL_SECONDS: '0', EMBEDDING_CACHE_TTL_SECONDS: '0',
    MODEL_DIR: modelDir(), COLLECTION_PREFIX: prefix, MAX_EMBEDDING_WAIT_MS: '0', MAX_IN_FLIGHT: '0'
  }
  // a Redis round trip may take longer than the default 50 ms on the loaded machine (as in test/scale-out/)
  const shared = { ...common, VECTOR_BACKEND: 'qdrant', QDRANT_URL: qdrant.url, REDIS_URL: redis.url, REPLICAS: '2', REDIS_COMMAND_TIMEOUT_MS: '1000' }
  const servers: ServerProcess[] = []
  // an interrupted run still stops what it started
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => { void cleanup().finally(() => process.exit(130)) })
  let cleaned = false
  async function cleanup() {
    if (cleaned) return
    cleaned = true
    if (values['server-output']) {
      for (const [i, s] of servers.entries()) await writeFile(join(values['server-output'], `server-${i}.log`), `${s.url}\n${s.output()}`)
    }
    await Promise.all(servers.map((s) => s.kill()))
    await redis.stop()
    await qdrant.stop('SIGTERM', true)
    await rm(dir, { recursive: true, force: true })
  }
  try {
    const { documents, queries } = await loadCmrc()
    const corpus = syntheticDocuments(documents.map((d) => d.text), CHUNKS).map((d) => ({ id: d.id, text: d.text }))
    const questions = [...new Set(queries.map((q) => q.query))].filter((q) => q.trim() !== '')
    log(`preload: ${corpus.length} chunks into the embedded stores and into Qdrant`)
    // E (the embedded default) is only the hybrid part's reference
    const loadEmbedded = PARTS.has('hybrid') ? await preload({ ...common, DATA_DIR: join(dir, 'e') }, corpus) : 0
    const loadQdrant = await preload({ ...shared, DATA_DIR: join(dir, 'preload') }, corpus)
    log(`preloaded (embedded ${r2(loadEmbedded)} s, Qdrant ${r2(loadQdrant)} s)`)
    // after a bulk load Qdrant builds its indexes in the background for a while: measure the steady state
    const optimized = values['qdrant-green'] === 'false' ? 0 : await untilCollectionsGreen(qdrant.url)
    log(`Qdrant's collections green ${r2(optimized)} s after the preload`)
    const base: Record<string, any> = {}
    if (BASE) {
      log(`base pass: A and B from ${BASE}`)
      const a0 = await startServer({ ...shared, DATA_DIR: join(dir, 'a0') }, optionsFor(BASE))
      servers.push(a0)
      const b0 = await startServer({ ...shared, DATA_DIR: join(dir, 'b0') }, optionsFor(BASE))
      servers.push(b0)
      const sentences = documents.map((d) => d.text.slice(0, 120))
      await catalogRead(b0.url, 'default')
      await untilCopyAnswers(b0, 'default')
      const readers: Reader[] = [{ name: 'B', follows: true, server: b0 }]
      if (PARTS.has('writes')) {
        base.writes = []
        if (WRITES > 0) base.writes.push(await writesPart(a0, readers, 'writes-base', WRITES, sentences))
        if (WRITES_CORPUS > 0) base.writes.push(await writesPart(a0, readers, 'default', WRITES_CORPUS, sentences))
      }
      if (PARTS.has('deletes')) {
        for (const s of [a0, b0]) await catalogRead(s.url, 'default')
        base.deletes = []
        if (DELETES > 0) base.deletes.push(await deletesPart(a0, b0, 'deletes-base', DELETES, sentences))
        if (DELETES_CORPUS > 0) base.deletes.push(await deletesPart(a0, b0, 'default', DELETES_CORPUS, sentences))
      }
      base.load_average_1_5_15_at_its_end = loadavg().map(r2)
      await a0.kill()
      await b0.kill()
    }
    log('starting E, A, B')
    const e = PARTS.has('hybrid') ? await startServer({ ...common, DATA_DIR: join(dir, 'e') }, serverOptions) : undefined
    if (e) servers.push(e)
    const a = await startServer({ ...shared, DATA_DIR: join(dir, 'a') }, serverOptions)
    servers.push(a)
    const b = await startServer({ ...shared, DATA_DIR: join(dir, 'b') }, serverOptions)
    servers.push(b)
    // C: a reader as B, but catching up only when a read finds a newer version (the writes part compares the two)
    const c = PARTS.has('writes') && READERS.has('C') ? await startServer({ ...shared, DATA_DIR: join(dir, 'c'), CATALOG_FOLLOW_WRITES: 'false' }, serverOptions) : undefined
    if (c) servers.push(c)
    const result: Record<string, any> = {
      chunks: corpus.length,
      setup: {
        processes: 'E embedded; A and B REPLICAS=2 over one Qdrant and one Redis; tsx, caches and rate limit off, graphs in memory',
        passage_vectors: 'stand-in (bench/lib/synthetic.ts standIn) for the preloaded corpus; the real model for queries and for written documents',
        preload_s: { embedded: r2(loadEmbedded), qdrant: r2(loadQdrant) },
        qdrant_green_after_preload_s: r2(optimized),
        qdrant: '1.18.3 from ../shared/qdrant, fresh storage',
        recall_tree: TREE ?? 'this checkout',
        ...(BASE ? { base_tree: BASE } : {})
      }
    }
    if (BASE) result.base = base
    if (PARTS.has('hybrid')) {
      log('hybrid end to end')
      result.hybrid = await hybridPart(e!, a, questions.slice(0, QUESTIONS))
    }
    if (PARTS.has('writes')) {
      const sentences = documents.map((d) => d.text.slice(0, 120))
      result.writes = []
      // the steady state: B and C have read the corpus namespace (in the background since they started) and built
      // their local copy of its postings (meanwhile the lexical worker is busy, and every namespace's copy waits)
      result.corpus_first_read_wait_ms = {}
      if (WAIT_FOR_COPIES) result.corpus_copy_built_wait_ms = {}
      for (const [name, s] of ([['B', b], ['C', c]] as const).filter(([n]) => READERS.has(n))) {
        if (!s) continue
        const warmStarted = performance.now()
        await catalogRead(s.url, 'default')
        result.corpus_first_read_wait_ms[name] = r2(performance.now() - warmStarted)
        if (WAIT_FOR_COPIES) result.corpus_copy_built_wait_ms[name] = r2(await untilCopyAnswers(s, 'default'))
      }
      log(`B and C have read the corpus namespace (waited ${JSON.stringify(result.corpus_first_read_wait_ms)} ms); copy built: ${JSON.stringify(result.corpus_copy_built_wait_ms ?? 'not waited for')}`)
      const readers: Reader[] = [{ name: 'B', follows: true, server: b }, ...(c ? [{ name: 'C', follows: false, server: c }] : [])]
        .filter((r) => READERS.has(r.name))
      if (WRITES > 0) result.writes.push(await writesPart(a, readers, 'writes', WRITES, sentences))
      if (WRITES_CORPUS > 0) result.writes.push(await writesPart(a, readers, 'default', WRITES_CORPUS, sentences))
      // C only reads in this part
      await c?.kill()
    }
    if (PARTS.has('deletes')) {
      const sentences = documents.map((d) => d.text.slice(0, 120))
      // the corpus namespace read by both first (the steady state, as for the writes)
      for (const s of [a, b]) await catalogRead(s.url, 'default')
      result.deletes = []
      if (DELETES > 0) result.deletes.push(await deletesPart(a, b, 'deletes', DELETES, sentences))
      if (DELETES_CORPUS > 0) result.deletes.push(await deletesPart(a, b, 'default', DELETES_CORPUS, sentences))
    }
    if (PARTS.has('throughput')) {
      // E is not part of it: stop it, so that it takes no memory or timer wake-ups
      await e?.kill()
      const pids = { A: a.child.pid, B: b.child.pid, qdrant: qdrantPid(qdrant.dir), redis: redis.pid, client: process.pid }
      log('throughput: warm-up')
      for (const s of [a, b]) for (const q of questions.slice(0, 20)) await retrieve(s.url, q)
      log('throughput: one replica')
      const one = await throughputPart([a], questions, pids)
      await sleep(2000)
      log('throughput: two replicas')
      const two = await throughputPart([a, b], questions, pids)
      result.throughput = { runs: [one, two], ratio: r2(two.answers_per_s / one.answers_per_s) }
    }
    if (PARTS.has('first-read')) {
      log('first read: A and B read the corpus namespace first')
      for (const s of [a, b]) { await catalogRead(s.url, 'default'); await untilCopyAnswers(s, 'default') }
      log('first read: starting D')
      result.first_read = await firstReadPart({ ...shared, DATA_DIR: join(dir, 'd') }, a, questions)
    }
    if (PARTS.has('reads-during-writes')) {
      // B answering hybrid retrieves while A writes into the corpus namespace (B follows the writes): how often the
      // lexical leg can use its local copy then, and what the others cost. First a window with no writes.
      const sentences = documents.map((d) => d.text.slice(0, 120))
      const pids = { A: a.child.pid, B: b.child.pid, qdrant: qdrantPid(qdrant.dir), redis: redis.pid, client: process.pid }
      for (const q of questions.slice(0, 20)) await retrieve(b.url, q)
      const window = async (writeEveryMs: number | undefined) => {
        const before = await lexicalPaths(b)
        const run = await throughputPart([b], questions, pids, writeEveryMs === undefined ? undefined : async (done) => {
          let n = 0
          while (!done()) {
            const next = performance.now() + writeEveryMs
            const body = { namespace: 'default', documents: [{ id: `stream-${Date.now().toString(36)}-${n}`, text: sentences[n % sentences.length] }] }
            const w = await fetch(`${a.url}/ingest/documents`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
            if (w.status === 200) n++
            await sleep(Math.max(0, next - performance.now()))
          }
          return n
        })
        const after = await lexicalPaths(b)
        const paths: Record<string, number> = Object.fromEntries(Object.entries(after).map(([k, v]) => [k, v - (before[k] ?? 0)] as const).filter(([, v]) => v !== 0))
        const total = Object.values(paths).reduce((x, y) => x + y, 0)
        return { write_every_ms: writeEveryMs ?? null, ...run, lexical_paths: paths, local_copy_share: r2((paths['local-copy'] ?? 0) / Math.max(1, total)) }
      }
      log('reads during writes: no writes')
      const quiet = await window(undefined)
      const runs = [quiet]
      for (const every of WRITE_EVERY_MS) {
        await sleep(2000)
        log(`reads during writes: a write every ${every} ms`)
        runs.push(await window(every))
      }
      result.reads_during_writes = { runs }
    }
    result.machine = { cpus: cpus().length, cpu_model: cpus()[0]?.model, memory_gb: r2(totalmem() / 2 ** 30), node: process.version }
    // 1, 5 and 15 minute load averages at the start and at the end: the machine is shared
    result.load_average_1_5_15 = [loadStart, loadavg().map(r2)]
    result.at = new Date().toISOString()
    await writeFile(new URL(`./results/${values.out}.json`, import.meta.url), `${JSON.stringify(result, null, 2)}\n`)
    await writeFile(new URL(`./results/${values.out}.md`, import.meta.url), markdown(result))
    console.log(JSON.stringify(result, null, 2))
  } finally {
    await cleanup()
  }
}

if (values.render) {
  const json = JSON.parse(readFileSync(new URL(`./results/${values.render}.json`, import.meta.url), 'utf8')) as Record<string, any>
  await writeFile(new URL(`./results/${values.render}.md`, import.meta.url), markdown(json))
} else {
  await main()
}

/**
 * A follower replica's memory, catch-up and garbage-collection pauses at scale (issue 44, item 5): over one Qdrant
 * (../shared/qdrant/) and one Redis, a leader A (this tree) and one follower per tree (`this`, and with `--base DIR` the
 * base tree's, side by side over the same stores), `REPLICAS=2`, `CATALOG_FOLLOW_WRITES` on (the default).
 *
 *   nice -n 19 npx tsx bench/follower-memory.ts [--chunks 10000,30000] [--seconds 60] [--write-every-ms 250]
 *     [--base DIR] [--qdrant-green true|false] [--catch-up-timeout-s 1200]
 *     [--green-timeout-s 900] [--qdrant-hnsw true|false] [--out follower-memory]
 *
 * The leader and the followers run with the heap flags `npm start` gives the service (`heapFlagsFor`, from
 * `MEMORY_LIMIT` or the machine).
 *
 * For each size, in a namespace of its own (the previous size's dropped through A first):
 * 1. the followers start over it empty; each one's memory after two full collections (`empty`);
 * 2. `--chunks` one-chunk documents of CMRC 2018 text (bench/lib/synthetic.ts) are written through the write path with
 *    stand-in passage vectors (bench/lib/preload.ts: the local model embeds ~25 passages/s here);
 * 3. catch-up from empty: A first (its writes in step 6 would wait for it), then each follower in turn (the order
 *    alternating by size) reads the namespace (a filtered retrieve waits for the catalog's first read) and builds its
 *    local copy of the lexical leg (until a lexical retrieve is answered from it); wall ms of both, and the follower's
 *    own `first-read` catch-up seconds (metrics);
 * 4. `--seconds` idle (no writes): what the collector does after the catch-up (V8's memory reducer runs then);
 * 5. memory after two full collections (`caught_up`): heap + off-heap over `empty`, a chunk, is what its catalog and
 *    lexical copy hold; resident beside it;
 * 6. `--seconds` of writes: A ingests one document every `--write-every-ms` into the namespace (embedded by A's real
 *    model), which each follower catches up on as it is recorded; then memory again (`after_writes`).
 * Every collection of each follower's main thread is kept (`perf_hooks` 'gc' entries, bench/lib/gc-recorder.ts loaded
 * into its process; forced collections left out): count, p50 / p99 / max pause and their sum, in all and by kind, for
 * the catch-up, the idle window and the writes window; and each follower's CPU seconds in each window (/proc).
 * Writes bench/results/<out>.json and .md.
 */
import { existsSync, readFileSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { cpus, loadavg, tmpdir, totalmem } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { loadConfig } from '../src/config.js'
import { heapFlagsFor } from '../src/memory/limit.js'
import { canStartQdrant, startQdrant } from '../test/helpers/qdrant-server.js'
import { startRedis } from '../test/helpers/redis-server.js'
import { startServer, type ServerProcess } from '../scripts/lib/server-process.js'
import { loadCmrc } from './lib/cmrc.js'
import { modelDir } from './lib/corpus.js'
import { pausesByKind, type GcPause } from './lib/gc-pauses.js'
import { preload } from './lib/preload.js'
import { syntheticDocuments } from './lib/synthetic.js'

const { values } = parseArgs({
  options: {
    chunks: { type: 'string', default: '10000,30000' },
    seconds: { type: 'string', default: '60' },
    'write-every-ms': { type: 'string', default: '250' },
    base: { type: 'string' },
    'qdrant-green': { type: 'string', default: 'true' },
    out: { type: 'string', default: 'follower-memory' },
    'catch-up-timeout-s': { type: 'string', default: '1200' },
    'green-timeout-s': { type: 'string', default: '900' },
    'qdrant-hnsw': { type: 'string', default: 'true' }
  }
})
const SIZES = values.chunks.split(',').map(Number)
const SECONDS = Number(values.seconds)
const WRITE_EVERY_MS = Number(values['write-every-ms'])
const CATCH_UP_TIMEOUT_MS = Number(values['catch-up-timeout-s']) * 1000
const GREEN_TIMEOUT_MS = Number(values['green-timeout-s']) * 1000
const RECORDER = fileURLToPath(new URL('./lib/gc-recorder.ts', import.meta.url))
const MiB = 2 ** 20

const r2 = (x: number) => Math.round(x * 100) / 100
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const log = (line: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line} (load ${loadavg()[0]!.toFixed(1)})\n`)

interface Memory { rss: number; heapUsed: number; external: number; arrayBuffers: number }
interface Record_ { seq: number; uptime_ms: number; pauses: GcPause[]; memory: { now: Memory; after_full_gc?: Memory } }
interface Follower { name: string; tree: string; server: ServerProcess; file: string }

/** Asks a follower's recorder for its pauses since the last ask and its memory (after two full collections with `gc`). */
async function ask(f: Follower, what: 'gc' | 'pauses'): Promise<Record_> {
  const before = existsSync(f.file) ? (JSON.parse(readFileSync(f.file, 'utf8')) as Record_).seq : 0
  await writeFile(`${f.file}.ask`, what)
  f.server.child.kill('SIGUSR2')
  const deadline = Date.now() + 120_000
  for (;;) {
    await sleep(100)
    if (existsSync(f.file)) {
      const r = JSON.parse(readFileSync(f.file, 'utf8')) as Record_
      if (r.seq > before) return r
    }
    if (Date.now() > deadline) throw new Error(`${f.name}'s recorder did not answer`)
  }
}

/** CPU seconds (user + system) a process has used (/proc/<pid>/stat, ticks of 1/100 s). */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100
}

const mib = (m: Memory) => ({ rss_mib: r2(m.rss / MiB), heap_mib: r2(m.heapUsed / MiB), external_mib: r2(m.external / MiB), array_buffers_mib: r2(m.arrayBuffers / MiB) })

async function metric(s: ServerProcess, pattern: RegExp): Promise<number> {
  const text = await (await fetch(`${s.url}/metrics`)).text()
  return [...text.matchAll(pattern)].reduce((sum, m) => sum + Number(m[1]), 0)
}

async function retrieve(url: string, body: Record<string, unknown>): Promise<number> {
  const r = await fetch(`${url}/retrieve`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  await r.text()
  return r.status
}

/** Until `s` has read its catalog of `namespace` (a filtered retrieve waits for that read), then until its lexical copy answers. */
async function catchUpFromEmpty(s: ServerProcess, namespace: string): Promise<{ catalog_ms: number; copy_ms: number }> {
  const started = performance.now()
  for (;;) {
    const status = await retrieve(s.url, { mode: 'hybrid', query: '预热', legs: ['lexical'], namespace, filter: { doc_ids: ['catalog-probe'] } })
    if (status === 200) break
    if (status !== 503 || performance.now() - started > CATCH_UP_TIMEOUT_MS) throw new Error(`the catalog probe of ${namespace} answered ${status}`)
    await sleep(500)
  }
  const catalog = performance.now() - started
  const fromCopy = /^recall_lexical_searches_total\{path="local-copy"\} (\d+)$/gm
  for (;;) {
    const before = await metric(s, fromCopy)
    await retrieve(s.url, { mode: 'hybrid', query: '预热', legs: ['lexical'], namespace })
    if (await metric(s, fromCopy) > before) break
    if (performance.now() - started > CATCH_UP_TIMEOUT_MS) throw new Error(`the local copy of ${namespace} never answered`)
    await sleep(100)
  }
  return { catalog_ms: r2(catalog), copy_ms: r2(performance.now() - started) }
}

async function untilCollectionsGreen(url: string): Promise<number> {
  const started = performance.now()
  for (;;) {
    const names = ((await (await fetch(`${url}/collections`)).json()) as { result: { collections: { name: string }[] } }).result.collections.map((c) => c.name)
    const statuses = await Promise.all(names.map(async (n) => ((await (await fetch(`${url}/collections/${n}`)).json()) as { result: { status: string } }).result.status))
    if (statuses.every((s) => s === 'green')) return (performance.now() - started) / 1000
    if (performance.now() - started > GREEN_TIMEOUT_MS) throw new Error(`Qdrant's collections not green after ${GREEN_TIMEOUT_MS / 1000} s: ${statuses.join(', ')}`)
    await sleep(1000)
  }
}

/** A writes one document every WRITE_EVERY_MS for SECONDS into `namespace`: how many it wrote, and their ms. */
async function writes(a: ServerProcess, namespace: string, sentences: readonly string[], tag: string): Promise<{ written: number; failed: number; write_ms_p50: number; write_ms_p99: number }> {
  const end = performance.now() + SECONDS * 1000
  const took: number[] = []
  let failed = 0
  for (let n = 0; performance.now() < end; n++) {
    const next = performance.now() + WRITE_EVERY_MS
    const body = { namespace, documents: [{ id: `${tag}-${n}`, text: sentences[n % sentences.length] }] }
    const t = performance.now()
    const w = await fetch(`${a.url}/ingest/documents`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
    await w.text()
    if (w.status === 200) took.push(performance.now() - t)
    else failed++
    await sleep(Math.max(0, next - performance.now()))
  }
  const s = [...took].sort((x, y) => x - y)
  const at = (p: number) => s.length === 0 ? NaN : r2(s[Math.max(0, Math.ceil((p / 100) * s.length) - 1)]!)
  return { written: took.length, failed, write_ms_p50: at(50), write_ms_p99: at(99) }
}

async function main(): Promise<void> {
  if (!canStartQdrant()) throw new Error('needs ../shared/qdrant/ (RECALL_SHARED_DIR)')
  const loadStart = loadavg().map(r2)
  // no vector index built: what a follower reads (scroll, the change log) needs none, and building it kept both cores
  // busy beside the measurements (100k points still indexing 4 minutes after the preload)
  if (values['qdrant-hnsw'] === 'false') Object.assign(process.env, { QDRANT__STORAGE__HNSW_INDEX__M: '0', QDRANT__STORAGE__OPTIMIZERS__INDEXING_THRESHOLD_KB: '0' })
  const qdrant = await startQdrant()
  const redis = await startRedis()
  const dir = await mkdtemp(join(tmpdir(), 'recall-bench-follower-memory-'))
  const shared = {
    DEMO_DATA: 'false', LOG_LEVEL: 'warn', RATE_LIMIT_MAX: '0', CACHE_TTL_SECONDS: '0', EMBEDDING_CACHE_TTL_SECONDS: '0',
    MODEL_DIR: modelDir(), COLLECTION_PREFIX: `bench${process.pid}_`, MAX_EMBEDDING_WAIT_MS: '0', MAX_IN_FLIGHT: '0',
    VECTOR_BACKEND: 'qdrant', QDRANT_URL: qdrant.url, REDIS_URL: redis.url, REPLICAS: '2', REDIS_COMMAND_TIMEOUT_MS: '1000',
    // a loaded machine's Qdrant may take seconds to answer a scroll (a 100k preload gave up at the 1.5 s default)
    VECTOR_TIMEOUT_MS: '30000', LEXICAL_TIMEOUT_MS: '30000'
  }
  // as `npm start` starts the service: V8's heap limit from the memory budget (75% of the machine's memory when unset)
  const heapFlags = heapFlagsFor(loadConfig({ ...process.env, ...shared }).memory.bytes)
  const trees = [{ name: 'this', tree: resolve('.') }, ...(values.base ? [{ name: 'base', tree: resolve(values.base) }] : [])]
  const servers: ServerProcess[] = []
  let cleaned = false
  const cleanup = async () => {
    if (cleaned) return
    cleaned = true
    await Promise.all(servers.map((s) => s.kill()))
    await redis.stop()
    await qdrant.stop('SIGTERM', true)
    await rm(dir, { recursive: true, force: true })
  }
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => { void cleanup().finally(() => process.exit(130)) })
  const result: Record<string, any> = {
    setup: {
      node_flags: heapFlags,
      leader: 'A, this tree; REPLICAS=2 over one Qdrant 1.18.3 (../shared/qdrant, fresh storage) and one Redis; caches and rate limit off; vector and lexical read timeouts 30 s',
      followers: trees.map((t) => `${t.name}: ${t.tree}`),
      corpus: 'one-chunk documents of CMRC 2018 trial text, stand-in passage vectors (preload through the write path)',
      window_seconds: SECONDS, write_every_ms: WRITE_EVERY_MS, qdrant_hnsw: values['qdrant-hnsw'] !== 'false'
    },
    sizes: []
  }
  try {
    const { documents } = await loadCmrc()
    const sentences = documents.map((d) => d.text.slice(0, 120))
    const corpus = syntheticDocuments(documents.map((d) => d.text), Math.max(...SIZES)).map((d) => ({ id: d.id, text: d.text }))
    const a = await startServer({ ...shared, DATA_DIR: join(dir, 'a') }, { timeoutMs: 600_000, args: [...heapFlags, '--import', 'tsx', 'src/http/server.ts'] })
    servers.push(a)
    let previous: string | undefined
    for (const [index, size] of SIZES.entries()) {
      const namespace = `follow${size}`
      if (previous) {
        const dropped = await fetch(`${a.url}/namespaces/${previous}`, { method: 'DELETE' })
        if (dropped.status !== 200) throw new Error(`dropping ${previous} answered ${dropped.status}: ${await dropped.text()}`)
      }
      previous = namespace
      log(`${size}: starting the followers`)
      const followers: Follower[] = []
      for (const t of trees) {
        const file = join(dir, `${t.name}-${size}.gc.json`)
        const args = [...heapFlags, '--expose-gc', '--import', 'tsx', '--import', RECORDER, join(t.tree, 'src/http/server.ts')]
        const server = await startServer({ ...shared, DATA_DIR: join(dir, `${t.name}-${size}`), GC_RECORD_FILE: file }, { timeoutMs: 600_000, cwd: t.tree, args })
        servers.push(server)
        followers.push({ name: t.name, tree: t.tree, server, file })
      }
      await sleep(5000)
      const empty = new Map<string, Memory>()
      for (const f of followers) empty.set(f.name, (await ask(f, 'gc')).memory.after_full_gc!)
      log(`${size}: preload`)
      const preloadSeconds = await preload({ ...shared, DATA_DIR: join(dir, `preload-${size}`) }, corpus.slice(0, size), undefined, namespace)
      const green = values['qdrant-green'] === 'false' ? 0 : await untilCollectionsGreen(qdrant.url)
      log(`${size}: preloaded in ${r2(preloadSeconds)} s, green ${r2(green)} s later`)
      // A reads the namespace too before it writes (a first write into a namespace A has not read waits for that read:
      // 63 s at 1M), so that the writes window holds writes, not A's read
      const leader = await catchUpFromEmpty(a, namespace)
      log(`${size}: A caught up: catalog ${leader.catalog_ms} ms, copy ${leader.copy_ms} ms`)
      const arms: Record<string, any> = {}
      for (const f of index % 2 === 0 ? followers : [...followers].reverse()) {
        // its own catch-up's collections alone: those before it are set aside first
        const start = await ask(f, 'pauses')
        const cpu = cpuSeconds(f.server.child.pid!)
        const took = await catchUpFromEmpty(f.server, namespace)
        const firstRead = await metric(f.server, /^recall_catalog_catch_up_seconds_sum\{kind="namespace",reason="first-read"\} ([\d.e+-]+)$/gm)
        const during = await ask(f, 'pauses')
        arms[f.name] = {
          catch_up_from_empty: { ...took, first_read_metric_s: r2(firstRead), cpu_s: r2(cpuSeconds(f.server.child.pid!) - cpu) },
          gc_during_catch_up: pausesByKind(during.pauses),
          // when the long ones came: ms after the catch-up began (the catalog's read ends at catalog_ms, the copy's build at copy_ms)
          gc_over_10_ms_during_catch_up: during.pauses.filter((p) => p.ms > 10).map((p) => ({ after_ms: Math.round(p.at_ms - start.uptime_ms), ms: p.ms, kind: p.kind })),
          heap_now_after_catch_up_mib: mib(during.memory.now)
        }
        log(`${size}: ${f.name} caught up from empty: catalog ${took.catalog_ms} ms, copy ${took.copy_ms} ms`)
      }
      for (const f of followers) arms[f.name].cpu_mark = cpuSeconds(f.server.child.pid!)
      log(`${size}: idle ${SECONDS} s`)
      await sleep(SECONDS * 1000)
      for (const f of followers) {
        const idle = await ask(f, 'pauses')
        arms[f.name].gc_idle_after_catch_up = pausesByKind(idle.pauses)
        arms[f.name].cpu_idle_s = r2(cpuSeconds(f.server.child.pid!) - arms[f.name].cpu_mark)
        const held = await ask(f, 'gc')
        const m = held.memory.after_full_gc!
        const e = empty.get(f.name)!
        arms[f.name].memory = {
          empty: mib(e), caught_up: mib(m),
          held_bytes_a_chunk: Math.round((m.heapUsed + m.external - e.heapUsed - e.external) / size),
          heap_bytes_a_chunk: Math.round((m.heapUsed - e.heapUsed) / size),
          resident_bytes_a_chunk: Math.round((m.rss - e.rss) / size)
        }
        arms[f.name].cpu_mark = cpuSeconds(f.server.child.pid!)
      }
      log(`${size}: writes for ${SECONDS} s, one every ${WRITE_EVERY_MS} ms`)
      const written = await writes(a, namespace, sentences, `w${size}`)
      // the followers' last catch-ups land after the last write's answer
      await sleep(2000)
      for (const f of followers) {
        const w = await ask(f, 'pauses')
        arms[f.name].gc_during_writes = pausesByKind(w.pauses)
        arms[f.name].cpu_writes_s = r2(cpuSeconds(f.server.child.pid!) - arms[f.name].cpu_mark)
        delete arms[f.name].cpu_mark
        arms[f.name].catch_ups_of_documents = await metric(f.server, /^recall_catalog_catch_up_seconds_count\{kind="documents",reason="changes"\} ([\d.e+-]+)$/gm)
        const after = (await ask(f, 'gc')).memory.after_full_gc!
        arms[f.name].memory.after_writes = mib(after)
      }
      result.sizes.push({ chunks: size, namespace, preload_s: r2(preloadSeconds), qdrant_green_s: r2(green), leader_catch_up_from_empty: leader, writes: written, followers: arms, load_average_1_5_15: loadavg().map(r2) })
      for (const f of followers) await f.server.kill()
      await writeFile(join('bench/results', `${values.out}.partial.json`), `${JSON.stringify(result, null, 2)}\n`)
    }
    result.machine = { cpus: cpus().length, cpu_model: cpus()[0]?.model, memory_gb: r2(totalmem() / 2 ** 30), node: process.version }
    result.load_average_1_5_15 = [loadStart, loadavg().map(r2)]
    result.at = new Date().toISOString()
    await writeFile(join('bench/results', `${values.out}.json`), `${JSON.stringify(result, null, 2)}\n`)
    await writeFile(join('bench/results', `${values.out}.md`), markdown(result))
    await rm(join('bench/results', `${values.out}.partial.json`), { force: true })
    console.log(markdown(result))
  } finally {
    await cleanup()
  }
}

function markdown(result: Record<string, any>): string {
  const lines = [`# bench/follower-memory.ts (${result.at})`, '', `Load average (1, 5, 15 min) at start and end: ${JSON.stringify(result.load_average_1_5_15)}.`, '',
    '| chunks | follower | catch-up from empty: catalog / copy ms | held a chunk (heap + off-heap) | resident a chunk | heap / resident caught up MiB | GC during writes: n, p50 / p99 / max ms, sum | idle after catch-up: n, max ms, sum | during catch-up: n, max ms, sum |',
    '|---|---|---|---|---|---|---|---|---|']
  for (const s of result.sizes) {
    for (const [name, f] of Object.entries(s.followers as Record<string, any>)) {
      const w = f.gc_during_writes.all
      const i = f.gc_idle_after_catch_up.all
      const c = f.gc_during_catch_up.all
      lines.push(`| ${s.chunks} | ${name} | ${f.catch_up_from_empty.catalog_ms} / ${f.catch_up_from_empty.copy_ms} | ${f.memory.held_bytes_a_chunk} B | ${f.memory.resident_bytes_a_chunk} B | ${f.memory.caught_up.heap_mib} / ${f.memory.caught_up.rss_mib} | ${w.count}, ${w.p50_ms} / ${w.p99_ms} / ${w.max_ms}, ${w.sum_ms} | ${i.count}, ${i.max_ms}, ${i.sum_ms} | ${c.count}, ${c.max_ms}, ${c.sum_ms} |`)
    }
    lines.push('', `${s.chunks}: ${s.writes.written} writes through A (p50 ${s.writes.write_ms_p50} ms), load ${JSON.stringify(s.load_average_1_5_15)}.`, '')
  }
  return `${lines.join('\n')}\n`
}

await main()

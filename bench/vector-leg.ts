/**
 * The vector leg on Qdrant beside the embedded one, this tree beside a checkout of the previous main, in one run
 * (issue 29, item 4). Writes bench/results/<out>.json.
 *
 *   nice -n 10 npx tsx bench/vector-leg.ts --base ../wt-vecleg-base [--sizes 300,10000] [--questions 500] [--out vector-leg]
 *
 * `--base`: a checkout of the previous main with node_modules (a symlink will do). Per corpus size, one Qdrant
 * 1.18.3 (../shared/qdrant/, fresh storage) and one Redis, and four servers (`src/http/server.ts` under tsx,
 * caches, rate limit and overload guard off): the previous main and this tree on the embedded stores (the same
 * preloaded files, copied), and both with REPLICAS=2 over the one Qdrant (vector and lexical leg in Qdrant).
 * Corpora: `300` is the first 300 CMRC 2018 trial paragraphs, one document each, their chunks embedded by the real
 * model; `10000` is 10k one-chunk documents of CMRC text (bench/lib/synthetic.ts) with stand-in passage vectors.
 * Every query is embedded by the real model in the server that answers it.
 *
 * - service: each CMRC question, one at a time, `POST /retrieve` hybrid with `legs: ["vector"]`, then with both
 *   legs, asked of the four servers in turn (the order rotating question by question); the `vector` leg's
 *   `took_ms`, the answer's `took_ms`, each server's CPU time (/proc) per answer; and whether each tree's answers
 *   (top-10 ids and scores) are those of the previous main on the same stores.
 * - split: in this process, the same questions' vectors sent straight to Qdrant with each payload selector (every
 *   key, as the previous main asked; every key but the lexical leg's, as `search` asks now; our id alone, as `rank`
 *   asks; none), the selectors in turn: HTTP round trip, the server's own `time`, JSON.parse, decoding, bytes; and
 *   the stores' own calls (the previous main's `search`, this tree's `search` and `rank`), client library included.
 */
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { LocalEmbedder } from '../src/providers/embedder/local.js'
import type { Embedder } from '../src/providers/embedder/port.js'
import { LEXICAL_PAYLOAD_KEYS } from '../src/providers/lexical-index/lexical-point.js'
import { QdrantVectorStore } from '../src/providers/vector-store/qdrant.js'
import { canStartQdrant, startQdrant } from '../test/helpers/qdrant-server.js'
import { startRedis } from '../test/helpers/redis-server.js'
import { startServer, type ServerProcess } from '../scripts/lib/server-process.js'
import { loadCmrc } from './lib/cmrc.js'
import { modelDir } from './lib/corpus.js'
import { preload } from './lib/preload.js'
import { splitQuery, type PayloadSelector, type SplitSample } from './lib/qdrant-query-split.js'
import { cachedQueryVectors } from './lib/query-vectors.js'
import { syntheticDocuments } from './lib/synthetic.js'

const { values } = parseArgs({
  options: {
    base: { type: 'string' },
    sizes: { type: 'string', default: '300,10000' },
    questions: { type: 'string', default: '500' },
    parts: { type: 'string', default: 'service,split' },
    out: { type: 'string', default: 'vector-leg' }
  }
})
if (!values.base) throw new Error('--base <checkout of the previous main> is required')
const BASE = resolve(values.base)
const SIZES = values.sizes.split(',').map(Number)
const QUESTIONS = Number(values.questions)
const PARTS = new Set(values.parts.split(','))
const WORK = 'bench/.work'

const r2 = (x: number) => Math.round(x * 100) / 100
const r3 = (x: number) => Math.round(x * 1000) / 1000
const pct = (xs: readonly number[], p: number) => {
  if (xs.length === 0) return NaN
  const s = [...xs].sort((a, b) => a - b)
  return r3(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!)
}
const log = (line: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`)
const load = () => loadavg().map(r2)

/** CPU seconds (user + system) a process has used, from /proc/<pid>/stat (clock ticks of 1/100 s). */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100
}

interface Answer { recall_bundle: { id: string; score: number }[]; took_ms: number; legs: { name: string; took_ms: number; status: string }[] }

async function retrieve(url: string, body: Record<string, unknown>): Promise<Answer> {
  const r = await fetch(`${url}/retrieve`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  if (r.status !== 200) throw new Error(`${url} answered ${r.status}: ${(await r.text()).slice(0, 300)}`)
  return await r.json() as Answer
}

/** Resolves once `url` has read its catalog of `default` (a retrieve with a filter waits for that read). */
async function catalogRead(url: string): Promise<void> {
  await retrieve(url, { mode: 'hybrid', query: '预热', legs: ['lexical'], filter: { doc_ids: ['catalog-probe'] } })
}

const answerKey = (a: Answer) => JSON.stringify(a.recall_bundle.map((h) => [h.id, h.score]))

type Arm = 'embedded_base' | 'embedded_this' | 'qdrant_base' | 'qdrant_this'
const ARMS: Arm[] = ['embedded_base', 'embedded_this', 'qdrant_base', 'qdrant_this']

async function servicePart(servers: Record<Arm, ServerProcess>, questions: readonly string[]) {
  const requests = { vector: { legs: ['vector'] }, hybrid: {} } as const
  for (const q of questions.slice(0, 20)) for (const arm of ARMS) for (const extra of Object.values(requests)) await retrieve(servers[arm].url, { mode: 'hybrid', query: q, top_k: 10, ...extra })
  const samples = Object.fromEntries(ARMS.map((a) => [a, { vector_leg: [] as number[], vector_took: [] as number[], hybrid_took: [] as number[], embedding: [] as number[] }]))
  const answers = { vector: new Map<Arm, string[]>(), hybrid: new Map<Arm, string[]>() }
  const cpu0 = Object.fromEntries(ARMS.map((a) => [a, cpuSeconds(servers[a].child.pid!)]))
  const load0 = load()
  for (const [i, q] of questions.entries()) {
    for (let j = 0; j < ARMS.length; j++) {
      const arm = ARMS[(i + j) % ARMS.length]!
      for (const [kind, extra] of Object.entries(requests) as [keyof typeof requests, object][]) {
        const a = await retrieve(servers[arm].url, { mode: 'hybrid', query: q, top_k: 10, ...extra })
        const leg = (name: string) => a.legs.find((l) => l.name === name)
        if (kind === 'vector') {
          if (leg('vector')?.status !== 'ok') throw new Error(`${arm}: vector leg ${JSON.stringify(leg('vector'))}`)
          samples[arm]!.vector_leg.push(leg('vector')!.took_ms)
          samples[arm]!.embedding.push(leg('embedding')!.took_ms)
          samples[arm]!.vector_took.push(a.took_ms)
        } else {
          samples[arm]!.hybrid_took.push(a.took_ms)
        }
        const list = answers[kind].get(arm) ?? []
        list[i] = answerKey(a)
        answers[kind].set(arm, list)
      }
    }
    if (i % 100 === 99) log(`service: ${i + 1}/${questions.length}`)
  }
  const cpu = Object.fromEntries(ARMS.map((a) => [a, cpuSeconds(servers[a].child.pid!) - cpu0[a]!]))
  const same = (kind: 'vector' | 'hybrid', x: Arm, y: Arm) => {
    const xs = answers[kind].get(x)!
    const ys = answers[kind].get(y)!
    const differing = questions.map((q, i) => ({ q, i })).filter(({ i }) => xs[i] !== ys[i])
    return { identical: questions.length - differing.length, of: questions.length, first_differences: differing.slice(0, 3).map(({ q, i }) => ({ question: q, base: xs[i], this: ys[i] })) }
  }
  return {
    questions: questions.length,
    load_average: { before: load0, after: load() },
    per_arm: Object.fromEntries(ARMS.map((a) => [a, {
      vector_leg_ms: { p50: pct(samples[a]!.vector_leg, 50), p90: pct(samples[a]!.vector_leg, 90), p99: pct(samples[a]!.vector_leg, 99) },
      embedding_leg_ms_p50: pct(samples[a]!.embedding, 50),
      vector_only_took_ms: { p50: pct(samples[a]!.vector_took, 50), p99: pct(samples[a]!.vector_took, 99) },
      hybrid_took_ms: { p50: pct(samples[a]!.hybrid_took, 50), p99: pct(samples[a]!.hybrid_took, 99) },
      server_cpu_ms_per_answer: r3((cpu[a]! * 1000) / (2 * questions.length))
    }])),
    answers_against_previous_main: {
      embedded: { vector: same('vector', 'embedded_base', 'embedded_this'), hybrid: same('hybrid', 'embedded_base', 'embedded_this') },
      qdrant: { vector: same('vector', 'qdrant_base', 'qdrant_this'), hybrid: same('hybrid', 'qdrant_base', 'qdrant_this') }
    }
  }
}

const SELECTORS: [string, PayloadSelector][] = [
  ['every_key (previous main)', true],
  ['all_but_lex (search now)', { exclude: [...LEXICAL_PAYLOAD_KEYS] }],
  ['id_only (rank)', ['id']],
  ['none', false]
]

async function splitPart(url: string, collection: string, vectors: readonly Float32Array[]) {
  const { QdrantVectorStore: BaseStore } = await import(join(BASE, 'src/providers/vector-store/qdrant.ts')) as { QdrantVectorStore: typeof QdrantVectorStore }
  const base = new BaseStore({ url, timeoutMs: 30_000 })
  const ours = new QdrantVectorStore({ url, timeoutMs: 30_000 })
  const stores: [string, (v: Float32Array) => Promise<unknown>][] = [
    ['previous main: search', (v) => base.search(collection, 'default', v, 50)],
    ['this: search', (v) => ours.search(collection, 'default', v, 50)],
    ['this: rank', (v) => ours.rank(collection, 'default', v, 50)]
  ]
  // as the stores decode a point: a copy of its payload without our keys (rank reads the id alone)
  const decode = (p: Record<string, unknown> | undefined) => {
    if (!p) return undefined
    const { id, namespace: _n, ...rest } = p
    for (const key of Object.keys(rest)) if (key.startsWith('lex_')) delete rest[key]
    return { id, rest }
  }
  const split = new Map<string, SplitSample[]>()
  const store = new Map<string, number[]>()
  const load0 = load()
  for (const [i, v] of vectors.entries()) {
    for (let j = 0; j < SELECTORS.length; j++) {
      const [name, selector] = SELECTORS[(i + j) % SELECTORS.length]!
      // the store asks for window + 1 (50 + 1) to see a tie at the cut
      const s = await splitQuery(url, collection, 'default', v, 51, selector, decode)
      split.set(name, [...(split.get(name) ?? []), s])
    }
    for (let j = 0; j < stores.length; j++) {
      const [name, call] = stores[(i + j) % stores.length]!
      const t = performance.now()
      await call(v)
      store.set(name, [...(store.get(name) ?? []), performance.now() - t])
    }
  }
  const keys = ['total_ms', 'http_ms', 'server_ms', 'parse_ms', 'decode_ms', 'bytes'] as const
  return {
    questions: vectors.length,
    load_average: { before: load0, after: load() },
    raw_query_p50: Object.fromEntries([...split].map(([name, xs]) => [name, Object.fromEntries(keys.map((k) => [k, pct(xs.map((x) => x[k]), 50)]))])),
    store_call_ms: Object.fromEntries([...store].map(([name, xs]) => [name, { p50: pct(xs, 50), p90: pct(xs, 90), p99: pct(xs, 99) }]))
  }
}

async function runSize(size: number, cmrc: Awaited<ReturnType<typeof loadCmrc>>, questions: readonly string[], model: LocalEmbedder, queryVectors: Map<string, Float32Array>) {
  const qdrant = await startQdrant()
  const redis = await startRedis()
  const dir = await mkdtemp(join(tmpdir(), 'recall-bench-vector-leg-'))
  const servers: ServerProcess[] = []
  try {
    const prefix = `vl${size}_`
    const common = {
      DEMO_DATA: 'false', LOG_LEVEL: 'warn', RATE_LIMIT_MAX: '0', CACHE_TTL_SECONDS: '0', EMBEDDING_CACHE_TTL_SECONDS: '0',
      MODEL_DIR: modelDir(), COLLECTION_PREFIX: prefix, MAX_EMBEDDING_WAIT_MS: '0', MAX_IN_FLIGHT: '0'
    }
    const shared = { ...common, VECTOR_BACKEND: 'qdrant', QDRANT_URL: qdrant.url, REDIS_URL: redis.url, REPLICAS: '2', REDIS_COMMAND_TIMEOUT_MS: '1000' }
    const corpus = size === 300
      ? cmrc.documents.slice(0, 300).map((d) => ({ id: d.id, text: d.text }))
      : syntheticDocuments(cmrc.documents.map((d) => d.text), size).map((d) => ({ id: d.id, text: d.text }))
    // the real model for the 300 CMRC paragraphs; the stand-in at 10k (the model embeds ~25 passages/s here)
    // (the services close the embedder they were given: this one stays open for the next preload)
    const passages: Embedder | undefined = size === 300
      ? { model: model.model, dimensions: model.dimensions, embedQueries: (t, s) => model.embedQueries(t, s), embedPassages: (t) => model.embedPassages(t), health: () => model.health(), close: async () => {} }
      : undefined
    log(`${size}: preload ${corpus.length} documents (embedded, then Qdrant)`)
    const loadEmbedded = await preload({ ...common, DATA_DIR: join(dir, 'e0') }, corpus, passages)
    execFileSync('cp', ['-r', join(dir, 'e0'), join(dir, 'e1')])
    const loadQdrant = await preload({ ...shared, DATA_DIR: join(dir, 'preload') }, corpus, passages)
    const chunks = Number((await (await fetch(`${qdrant.url}/collections/${prefix}chunks`)).json() as { result: { points_count: number } }).result.points_count)
    log(`${size}: ${chunks} chunks; starting four servers`)
    const start = async (env: Record<string, string>, tree: string) => {
      const s = await startServer(env, { timeoutMs: 600_000, args: ['--import', 'tsx', join(tree, 'src/http/server.ts')] })
      servers.push(s)
      return s
    }
    const here = resolve('.')
    const byArm: Record<Arm, ServerProcess> = {
      embedded_base: await start({ ...common, DATA_DIR: join(dir, 'e0') }, BASE),
      embedded_this: await start({ ...common, DATA_DIR: join(dir, 'e1') }, here),
      qdrant_base: await start({ ...shared, DATA_DIR: join(dir, 'q0') }, BASE),
      qdrant_this: await start({ ...shared, DATA_DIR: join(dir, 'q1') }, here)
    }
    for (const s of Object.values(byArm)) await catalogRead(s.url)
    const result: Record<string, unknown> = { chunks, documents: corpus.length, passage_vectors: passages ? 'the real model' : 'stand-in', preload_s: { embedded: r2(loadEmbedded), qdrant: r2(loadQdrant) } }
    if (PARTS.has('service')) {
      log(`${size}: service part`)
      result.service = await servicePart(byArm, questions)
    }
    if (PARTS.has('split')) {
      log(`${size}: split part`)
      result.split = await splitPart(qdrant.url, `${prefix}chunks`, questions.map((q) => queryVectors.get(q)!))
    }
    return result
  } finally {
    await Promise.all(servers.map((s) => s.kill()))
    await redis.stop()
    await qdrant.stop('SIGTERM', true)
    await rm(dir, { recursive: true, force: true })
  }
}

async function main(): Promise<void> {
  if (!canStartQdrant()) throw new Error('needs ../shared/qdrant/')
  const cmrc = await loadCmrc()
  const questions = [...new Set(cmrc.queries.map((q) => q.query))].filter((q) => q.trim() !== '').slice(0, QUESTIONS)
  const model = new LocalEmbedder({ modelDir: modelDir(), modelName: 'bge-small-zh-v1.5' })
  const queryVectors = await cachedQueryVectors(model, questions, WORK)
  const commit = (tree: string) => execFileSync('git', ['-C', tree, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim()
  const result: Record<string, unknown> = {
    date: new Date().toISOString(),
    machine: { cpus: cpus().length, model: cpus()[0]?.model, node: process.version, load_average_start: load() },
    trees: { previous_main: commit(BASE), this: `${commit('.')}${execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { encoding: 'utf8' }).trim() ? ' (with uncommitted changes)' : ''}` },
    command: `npx tsx bench/vector-leg.ts ${process.argv.slice(2).join(' ')}`,
    sizes: {} as Record<string, unknown>
  }
  try {
    for (const size of SIZES) (result.sizes as Record<string, unknown>)[String(size)] = await runSize(size, cmrc, questions, model, queryVectors)
  } finally {
    await model.close()
  }
  result.load_average_end = load()
  await writeFile(join('bench/results', `${values.out}.json`), `${JSON.stringify(result, null, 2)}\n`)
  log(`wrote bench/results/${values.out}.json`)
}

await main()

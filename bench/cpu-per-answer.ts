/**
 * CPU per answer of the vector and hybrid paths, this tree beside a checkout of the previous main in one run, with a
 * CPU profile of each server and the model's own cost per query (issue 29, item 2). Writes
 * bench/results/<out>.json and the flame graphs bench/results/<out>-<tree>-<path>.svg.
 *
 *   nice -n 10 npx tsx bench/cpu-per-answer.ts --base ../wt-vecleg-base [--clients 4] [--seconds 20] [--rounds 2]
 *     [--compare 1002] [--model-runs 200] [--out cpu-per-answer]
 *
 * - model: the ONNX session's own run (`InferenceSession.run` on feeds made beforehand), then the tokenizer alone,
 *   then the embedder's whole query embedding (LocalEmbedder.embedQueries), each over the same questions in a loop
 *   in this process: wall and CPU time (every thread of the process) per query.
 * - load: two servers (`src/http/server.ts` under tsx with `node --cpu-prof`, embedded stores, the CMRC 2018 trial
 *   paragraphs as documents with stand-in passage vectors, caches, rate limit and overload guard off; every query
 *   embedded by the real model): `--clients` concurrent clients of `POST /retrieve` for `--seconds`, vector leg
 *   alone then both legs, the trees taking turns (the first alternating by round); each server's CPU time from
 *   /proc per answer, answers/s, p50/p99.
 * - profile: the samples each server's profile took inside its load windows, per path: a flame graph and the share
 *   of the CPU samples in the model, the tokenizer, the legs, HTTP and serialisation, logging, GC.
 * - answers: `--compare` CMRC questions asked of both servers one at a time, vector leg alone and both legs: the
 *   top-10 ids and scores of this tree against the previous main's.
 */
import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { LocalEmbedder } from '../src/providers/embedder/local.js'
import { startServer, type ServerProcess } from '../scripts/lib/server-process.js'
import { loadCmrc } from './lib/cmrc.js'
import { modelDir } from './lib/corpus.js'
import { callTree, flameSvg, inclusive, selfByFunction, type CpuProfile } from './lib/flamegraph.js'
import { preload } from './lib/preload.js'

const { values } = parseArgs({
  options: {
    base: { type: 'string' },
    clients: { type: 'string', default: '4' },
    seconds: { type: 'string', default: '20' },
    rounds: { type: 'string', default: '2' },
    compare: { type: 'string', default: '1002' },
    'model-runs': { type: 'string', default: '200' },
    parts: { type: 'string', default: 'model,load,answers' },
    out: { type: 'string', default: 'cpu-per-answer' }
  }
})
if (!values.base) throw new Error('--base <checkout of the previous main> is required')
const BASE = resolve(values.base)
const CLIENTS = Number(values.clients)
const SECONDS = Number(values.seconds)
const ROUNDS = Number(values.rounds)
const COMPARE = Number(values.compare)
const MODEL_RUNS = Number(values['model-runs'])
const PARTS = new Set(values.parts.split(','))

const r2 = (x: number) => Math.round(x * 100) / 100
const r3 = (x: number) => Math.round(x * 1000) / 1000
const pct = (xs: readonly number[], p: number) => {
  if (xs.length === 0) return NaN
  const s = [...xs].sort((a, b) => a - b)
  return r2(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!)
}
const log = (line: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`)
const load = () => loadavg().map(r2)
const nowUs = () => Number(process.hrtime.bigint() / 1000n)

/** CPU seconds (user + system) a process has used, from /proc/<pid>/stat (clock ticks of 1/100 s). */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100
}
const clientCpuMs = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000 }

interface Answer { recall_bundle: { id: string; score: number }[]; took_ms: number }
const PATHS = { vector: { legs: ['vector'] }, hybrid: {} } as const
type Path = keyof typeof PATHS
type Tree = 'previous_main' | 'this'

async function retrieve(url: string, query: string, path: Path): Promise<Answer> {
  const r = await fetch(`${url}/retrieve`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ mode: 'hybrid', query, top_k: 10, ...PATHS[path] })
  })
  if (r.status !== 200) throw new Error(`${url} answered ${r.status}: ${(await r.text()).slice(0, 300)}`)
  return await r.json() as Answer
}

/** The model alone, the tokenizer alone and the whole query embedding, each over `questions` in a loop. */
async function modelPart(questions: readonly string[]) {
  const folder = join(modelDir(), 'bge-small-zh-v1.5')
  const { AutoModel, AutoTokenizer } = await import('@huggingface/transformers')
  const tokenizer = await AutoTokenizer.from_pretrained(folder, { local_files_only: true })
  const model = await AutoModel.from_pretrained(folder, { local_files_only: true, dtype: 'q8', device: 'cpu' })
  const session = (model as unknown as { sessions: { model: { run(feeds: Record<string, unknown>): Promise<Record<string, unknown>>; inputNames: string[] } } }).sessions.model
  const prefix = '为这个句子生成表示以用于检索相关文章：'
  const texts = questions.slice(0, MODEL_RUNS).map((q) => prefix + q)
  const feeds = texts.map((t) => {
    const inputs = tokenizer([t], { padding: true, truncation: true, max_length: 512 }) as Record<string, { ort_tensor: unknown }>
    return Object.fromEntries(session.inputNames.map((name) => [name, inputs[name]!.ort_tensor]))
  })
  const timed = async (run: (i: number) => Promise<unknown> | unknown) => {
    for (let i = 0; i < Math.min(20, texts.length); i++) await run(i)
    const wall: number[] = []
    const cpu0 = clientCpuMs()
    const t0 = performance.now()
    for (let i = 0; i < texts.length; i++) {
      const t = performance.now()
      await run(i)
      wall.push(performance.now() - t)
    }
    return { runs: texts.length, wall_ms_p50: pct(wall, 50), wall_ms_mean: r3((performance.now() - t0) / texts.length), cpu_ms_per_query: r3((clientCpuMs() - cpu0) / texts.length) }
  }
  const load0 = load()
  const onnx = await timed((i) => session.run(feeds[i]!))
  const tokens = await timed((i) => tokenizer([texts[i]!], { padding: true, truncation: true, max_length: 512 }))
  await model.dispose()
  const embedder = new LocalEmbedder({ modelDir: modelDir(), modelName: 'bge-small-zh-v1.5' })
  const whole = await timed((i) => embedder.embedQueries([questions[i]!]))
  await embedder.close()
  return { load_average: { before: load0, after: load() }, onnx_session_run: onnx, tokenizer: tokens, embed_query_whole: whole }
}

interface Window { tree: Tree; path: Path; fromUs: number; toUs: number }

/** `CLIENTS` clients asking `path` of `server` for `SECONDS`, questions in turn. */
async function loadWindow(server: ServerProcess, path: Path, questions: readonly string[], offset: number) {
  const pid = server.child.pid!
  const latencies: number[] = []
  let next = offset
  const cpu0 = cpuSeconds(pid)
  const client0 = clientCpuMs()
  const fromUs = nowUs()
  const started = performance.now()
  const until = started + SECONDS * 1000
  await Promise.all(Array.from({ length: CLIENTS }, async () => {
    while (performance.now() < until) {
      const q = questions[next++ % questions.length]!
      const t = performance.now()
      await retrieve(server.url, q, path)
      latencies.push(performance.now() - t)
    }
  }))
  const seconds = (performance.now() - started) / 1000
  const toUs = nowUs()
  const cpu = cpuSeconds(pid) - cpu0
  return {
    window: { fromUs, toUs },
    answers: latencies.length,
    answers_per_s: r2(latencies.length / seconds),
    p50_ms: pct(latencies, 50), p99_ms: pct(latencies, 99),
    server_cpu_ms_per_answer: r3((cpu * 1000) / latencies.length),
    client_cpu_ms_per_answer: r3((clientCpuMs() - client0) / latencies.length)
  }
}

/** Where a profile's CPU samples went, as shares of those samples. */
function shares(tree: ReturnType<typeof callTree>) {
  const share = (match: (label: string) => boolean) => r3(inclusive(tree.root, match) / Math.max(1, tree.samples))
  return {
    samples: tree.samples,
    // onnxruntime-node 1.21 runs the model on the main thread: its native run is a frame of the binding
    onnx_run: share((l) => / onnxruntime-(node|common):/.test(l)),
    embedder_whole: share((l) => / src\/providers\/embedder\//.test(l)),
    transformers_js: share((l) => / @huggingface\/transformers:/.test(l)),
    vector_store: share((l) => / src\/providers\/vector-store\//.test(l)),
    lexical_index: share((l) => / src\/providers\/lexical-index\//.test(l)),
    fusion: share((l) => / adapters\/hybrid\/fusion/.test(l)),
    http_and_sockets: share((l) => /fastify|find-my-way|light-my-request|^writev|^writeGeneric|^onStreamRead|_http_|node:http/.test(l)),
    serialisation: share((l) => /fast-json-stringify|^serialize|^stringify |^\(anonymous\) .*fast-json/.test(l)),
    logging: share((l) => /pino|sonic-boom/.test(l)),
    garbage_collector: share((l) => l === '(garbage collector)'),
    program: share((l) => l === '(program)')
  }
}

async function main(): Promise<void> {
  const cmrc = await loadCmrc()
  const questions = [...new Set(cmrc.queries.map((q) => q.query))].filter((q) => q.trim() !== '')
  const commit = (tree: string) => execFileSync('git', ['-C', tree, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim()
  const result: Record<string, unknown> = {
    date: new Date().toISOString(),
    machine: { cpus: cpus().length, model: cpus()[0]?.model, node: process.version, load_average_start: load() },
    trees: { previous_main: commit(BASE), this: `${commit('.')}${execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { encoding: 'utf8' }).trim() ? ' (with uncommitted changes)' : ''}` },
    command: `npx tsx bench/cpu-per-answer.ts ${process.argv.slice(2).join(' ')}`,
    settings: { clients: CLIENTS, seconds: SECONDS, rounds: ROUNDS, documents: cmrc.documents.length, passage_vectors: 'stand-in' }
  }
  const out = `bench/results/${values.out}`
  if (PARTS.has('model')) {
    log('model alone')
    result.model = await modelPart(questions)
    log(JSON.stringify(result.model))
  }
  if (!PARTS.has('load') && !PARTS.has('answers')) {
    await writeFile(`${out}.json`, `${JSON.stringify(result, null, 2)}\n`)
    return
  }
  const dir = await mkdtemp(join(tmpdir(), 'recall-bench-cpu-'))
  const servers = new Map<Tree, ServerProcess>()
  try {
    const env = {
      DEMO_DATA: 'false', LOG_LEVEL: 'warn', RATE_LIMIT_MAX: '0', CACHE_TTL_SECONDS: '0', EMBEDDING_CACHE_TTL_SECONDS: '0',
      MODEL_DIR: modelDir(), MAX_EMBEDDING_WAIT_MS: '0', MAX_IN_FLIGHT: '0'
    }
    log(`preload ${cmrc.documents.length} documents`)
    await preload({ ...env, DATA_DIR: join(dir, 'd0') }, cmrc.documents)
    execFileSync('cp', ['-r', join(dir, 'd0'), join(dir, 'd1')])
    const trees: [Tree, string, string][] = [['previous_main', BASE, 'd0'], ['this', resolve('.'), 'd1']]
    for (const [name, tree, data] of trees) {
      const args = [`--cpu-prof`, `--cpu-prof-dir=${join(dir, `prof-${name}`)}`, '--import', 'tsx', join(tree, 'src/http/server.ts')]
      servers.set(name, await startServer({ ...env, DATA_DIR: join(dir, data) }, { timeoutMs: 600_000, args }))
    }
    log('warm-up')
    for (const q of questions.slice(0, 30)) for (const s of servers.values()) for (const p of Object.keys(PATHS) as Path[]) await retrieve(s.url, q, p)
    const windows: Window[] = []
    if (PARTS.has('load')) {
      const runs: Record<string, unknown>[] = []
      for (let round = 0; round < ROUNDS; round++) {
        for (const path of Object.keys(PATHS) as Path[]) {
          const order: Tree[] = round % 2 === 0 ? ['previous_main', 'this'] : ['this', 'previous_main']
          for (const tree of order) {
            const load0 = load()
            const w = await loadWindow(servers.get(tree)!, path, questions, round * 997)
            windows.push({ tree, path, ...w.window })
            const { window: _w, ...figures } = w
            runs.push({ round, path, tree, ...figures, load_average: { before: load0, after: load() } })
            log(`${path} ${tree}: ${JSON.stringify(figures)}`)
          }
        }
      }
      const summary = Object.fromEntries((Object.keys(PATHS) as Path[]).map((path) => [path, Object.fromEntries((['previous_main', 'this'] as Tree[]).map((tree) => {
        const rs = runs.filter((r) => r.path === path && r.tree === tree) as { answers_per_s: number; server_cpu_ms_per_answer: number; client_cpu_ms_per_answer: number; p50_ms: number }[]
        const mean = (k: keyof typeof rs[number]) => r3(rs.reduce((s, r) => s + r[k], 0) / rs.length)
        return [tree, { answers_per_s: mean('answers_per_s'), server_cpu_ms_per_answer: mean('server_cpu_ms_per_answer'), client_cpu_ms_per_answer: mean('client_cpu_ms_per_answer'), p50_ms: mean('p50_ms') }]
      }))]))
      result.load = { runs, summary }
    }
    if (PARTS.has('answers')) {
      log(`answers: ${Math.min(COMPARE, questions.length)} questions`)
      const compared: Record<Path, { identical: number; of: number; first_differences: unknown[] }> = {
        vector: { identical: 0, of: 0, first_differences: [] }, hybrid: { identical: 0, of: 0, first_differences: [] }
      }
      for (const q of questions.slice(0, COMPARE)) {
        for (const path of Object.keys(PATHS) as Path[]) {
          const key = (a: Answer) => JSON.stringify(a.recall_bundle.map((h) => [h.id, h.score]))
          const before = key(await retrieve(servers.get('previous_main')!.url, q, path))
          const now = key(await retrieve(servers.get('this')!.url, q, path))
          compared[path].of++
          if (before === now) compared[path].identical++
          else if (compared[path].first_differences.length < 3) compared[path].first_differences.push({ question: q, previous_main: before, this: now })
        }
      }
      result.answers_against_previous_main = compared
      log(JSON.stringify(compared))
    }
    const killedAtUs = nowUs()
    await Promise.all([...servers.values()].map((s) => s.kill()))
    servers.clear()
    if (windows.length > 0) {
      const profiles: Record<string, unknown> = {}
      for (const tree of ['previous_main', 'this'] as Tree[]) {
        const pdir = join(dir, `prof-${tree}`)
        const file = readdirSync(pdir).find((f) => f.endsWith('.cpuprofile'))
        if (!file) throw new Error(`no profile in ${pdir}`)
        const profile = JSON.parse(readFileSync(join(pdir, file), 'utf8')) as CpuProfile
        for (const path of Object.keys(PATHS) as Path[]) {
          // the profile's clock is the monotonic one process.hrtime reads: the windows map onto it as they are
          const mine = windows.filter((w) => w.tree === tree && w.path === path)
          const merged = mergeTrees(profile, mine.map((w) => [w.fromUs - profile.startTime, w.toUs - profile.startTime] as [number, number]))
          const svg = `${out}-${tree === 'this' ? 'this' : 'base'}-${path}.svg`
          await writeFile(svg, flameSvg(merged, `CPU profile of the server, ${path === 'vector' ? 'vector leg alone' : 'hybrid (both legs)'}: ${tree === 'this' ? 'this tree' : 'previous main'} (${result.trees && (result.trees as Record<string, string>)[tree]})`,
            `node --cpu-prof, main thread, ${merged.samples} samples in ${mine.length} windows of ${SECONDS} s at ${CLIENTS} clients (idle left out); width = share of samples; ${new Date().toISOString().slice(0, 10)}, load average ${load().join(' ')}`))
          profiles[`${tree}/${path}`] = { ...shares(merged), top_self: selfByFunction(merged.root).slice(0, 25).map(([name, n]) => [name, r3(n / merged.samples)]), svg }
        }
        profiles[`${tree}/clock_check_us`] = { profile_end_after_kill: profile.endTime - killedAtUs }
      }
      result.profile = profiles
    }
  } finally {
    await Promise.all([...servers.values()].map((s) => s.kill()))
    await rm(dir, { recursive: true, force: true })
  }
  result.load_average_end = load()
  await writeFile(`${out}.json`, `${JSON.stringify(result, null, 2)}\n`)
  log(`wrote ${out}.json`)
}

/** One call tree of the samples inside any of the windows (µs from the profile's start). */
function mergeTrees(profile: CpuProfile, windows: [number, number][]) {
  const trees = windows.map(([from, to]) => callTree(profile, from, to))
  const first = trees[0] ?? callTree(profile, 0, 0)
  type F = typeof first.root
  const add = (into: F, from: F) => {
    into.total += from.total
    into.self += from.self
    for (const [name, c] of from.children) {
      let target = into.children.get(name)
      if (!target) into.children.set(name, (target = { name, total: 0, self: 0, children: new Map() }))
      add(target, c)
    }
  }
  const root: F = { name: 'all', total: 0, self: 0, children: new Map() }
  for (const t of trees) add(root, t.root)
  return { root, samples: trees.reduce((n, t) => n + t.samples, 0), sampleUs: first.sampleUs }
}

await main()

/**
 * int8 vectors with float rescoring beside float32, in the embedded vector store (issue 44, item 1). One run:
 *
 *   nice -n 19 npx tsx bench/int8-vectors.ts --cmrc /tmp/threads-data/cmrc2018_dev.json --kuake /tmp/text-data/KUAKE-QTR \
 *     [--titles 30000] [--sets cmrc,kuake,cmrc-trial,locomo,cmrc-crowded] [--cmrc-trial FILE] [--distractors 100000]
 *     [--oversample 1,2,4] [--rows 100000]
 *     [--queries 300] [--parts quality,scan,costs] [--base DIR]
 *     [--out bench/results/int8-vectors.json]          (default parts: quality,scan; run under node --expose-gc for bytes)
 *
 * - quality: two judged Chinese sets embedded by the real model (bge-small-zh-v1.5, in this process, passages 16 a run,
 *   questions one at a time as a request embeds them; vectors kept in bench/.work/int8-vectors/ across runs):
 *   CMRC 2018 dev (every paragraph a document, chunked by the service's plain-text chunker, every question a query,
 *   relevant: its paragraph) and KUAKE-QTR (every title of dev, then of test and train up to `--titles`, one chunk each;
 *   every dev query with a title labelled 2 or 3, relevant: those titles); with `--sets`, also the CMRC 2018 trial split
 *   (`RECALL_SHARED_DIR/data/cmrc2018_trial.json`, as dev) and LoCoMo-10 conversations 2-9 in English (bench/lib/locomo.ts,
 *   `LOCOMO_JSON`; bge-small-en-v1.5, 384 dimensions; every turn one document, the eight conversations in one store so
 *   that a question competes with every turn; each category 1-4 question with evidence, relevant: its evidence turns);
 *   `cmrc-crowded`: CMRC dev with `--distractors` stand-in rows (as `scan` makes them) in the same store, so that more
 *   rows crowd the top as at a larger corpus.
 *   The same vectors go into a float32 store and
 *   into int8 stores with each oversampling; every query is ranked by each (limit 10 and the hybrid window, 50):
 *   Recall@10 and MRR@10 of documents, and the share of queries whose top 10 (and top 50) ids and scores are float32's.
 * - scan: `--rows` stand-in vectors drawn from the real model's per-dimension mean and spread (fitted on the CMRC
 *   chunks' vectors, as bench/memory.ts does), in a float32 store and an int8 one (oversample 4) in this process; real
 *   CMRC question vectors ranked (limit 10 and 50) by both in turn, the order alternating query by query: time per
 *   search, p50 and p99, and int8 ÷ float32. Bytes a row: the growth of the process's off-heap memory (WebAssembly
 *   memory) while each store took the rows, divided by the rows (after full collections when run with
 *   `node --expose-gc --import tsx bench/int8-vectors.ts …`; it includes the pool's room to grow, up to a quarter).
 *   With `--base DIR` (another tree's sources), that tree's float32 store opened on the same files is a third arm, in
 *   the same rotation: this tree's float32 search ÷ the base's.
 * - costs (`--parts costs`): the same stand-ins written 100 a write into both stores, the order alternating write by
 *   write (time a write, compactions included), then each store opened again until its first search, three times.
 */
import { readFile, rm, writeFile } from 'node:fs/promises'
import { cpus, loadavg, tmpdir, totalmem } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { chunkPlainText } from '../src/corpus/chunker.js'
import { createEmbedder } from '../src/providers/embedder/index.js'
import type { Embedder } from '../src/providers/embedder/port.js'
import { EmbeddedVectorStore } from '../src/providers/vector-store/embedded.js'
import type { VectorRank } from '../src/providers/vector-store/port.js'
import { evaluate, foldToDocuments } from './lib/metrics.js'
import { loadLocomo } from './lib/locomo.js'
import { rng } from './lib/synthetic.js'
import { cachedVectorFile } from './lib/query-vectors.js'

const { values } = parseArgs({
  options: {
    cmrc: { type: 'string', default: process.env['CMRC_DEV_PATH'] ?? '/tmp/threads-data/cmrc2018_dev.json' },
    kuake: { type: 'string', default: process.env['KUAKE_QTR_DIR'] ?? '/tmp/text-data/KUAKE-QTR' },
    titles: { type: 'string', default: '30000' },
    sets: { type: 'string', default: 'cmrc,kuake' },
    distractors: { type: 'string', default: '100000' },
    'cmrc-trial': { type: 'string', default: join(process.env['RECALL_SHARED_DIR'] ?? '../shared', 'data', 'cmrc2018_trial.json') },
    oversample: { type: 'string', default: '1,2,4' },
    rows: { type: 'string', default: '100000' },
    queries: { type: 'string', default: '300' },
    parts: { type: 'string', default: 'quality,scan' },
    base: { type: 'string' },
    out: { type: 'string', default: 'bench/results/int8-vectors.json' }
  }
})
const OVERSAMPLES = values.oversample.split(',').map(Number)
const PARTS = new Set(values.parts.split(','))
const WORK = join('bench', '.work', 'int8-vectors')
const DIMS = 512
const log = (line: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} load ${loadavg()[0]!.toFixed(1)} ${line}\n`)
const r4 = (x: number) => Math.round(x * 1e4) / 1e4

interface JudgedSet {
  name: string
  dims?: number
  chunks: { id: string; text: string }[]
  queries: { query: string; relevant: string[] }[]
}

async function loadCmrcDev(path: string, name = 'CMRC 2018 dev'): Promise<JudgedSet> {
  const squad = JSON.parse(await readFile(path, 'utf8')) as { data: { paragraphs: { id: string; context: string; qas: { question: string }[] }[] }[] }
  const chunks: JudgedSet['chunks'] = []
  const queries: JudgedSet['queries'] = []
  for (const article of squad.data) {
    for (const p of article.paragraphs) {
      chunkPlainText(p.context, false).forEach((chunk, i) => chunks.push({ id: `${p.id}#${i}`, text: chunk.text }))
      for (const qa of p.qas) queries.push({ query: qa.question, relevant: [p.id] })
    }
  }
  return { name, chunks, queries }
}

async function loadLocomoSet(): Promise<JudgedSet> {
  const chunks: JudgedSet['chunks'] = []
  const queries: JudgedSet['queries'] = []
  for (const c of await loadLocomo()) {
    for (const t of c.turns) chunks.push({ id: `c${c.index}/${t.id}#0`, text: t.text })
    for (const q of c.questions) queries.push({ query: q.question, relevant: q.evidence.map((e) => `c${c.index}/${e}`) })
  }
  return { name: 'LoCoMo-10 conversations 2-9 (one store)', dims: 384, chunks, queries }
}

async function loadKuake(dir: string, limit: number): Promise<JudgedSet> {
  const read = async (split: string) => JSON.parse(await readFile(join(dir, `KUAKE-QTR_${split}.json`), 'utf8')) as { query: string; title: string; label: string }[]
  const dev = await read('dev')
  const idOf = new Map<string, string>()
  const add = (title: string) => {
    if (!idOf.has(title) && idOf.size < limit) idOf.set(title, `t${idOf.size}`)
  }
  for (const row of dev) add(row.title)
  for (const split of ['test', 'train']) for (const row of await read(split)) add(row.title)
  const relevant = new Map<string, Set<string>>()
  for (const row of dev) {
    if (Number(row.label) < 2) continue
    let set = relevant.get(row.query)
    if (!set) relevant.set(row.query, (set = new Set()))
    set.add(idOf.get(row.title)!)
  }
  return {
    name: `KUAKE-QTR (dev queries, ${idOf.size} titles)`,
    chunks: [...idOf].map(([text, id]) => ({ id: `${id}#0`, text })),
    queries: [...relevant].map(([query, ids]) => ({ query, relevant: [...ids] }))
  }
}

/** The model's vectors of `texts`, kept in `WORK/<name>.f32` across runs (a file of another length is made again). */
async function cachedVectors(model: Embedder, name: string, texts: readonly string[], as: 'passages' | 'queries', dims = DIMS): Promise<Float32Array[]> {
  const flat = await cachedVectorFile(join(WORK, `${name}-${texts.length}.f32`), texts.length, dims, async (out) => {
    const batch = as === 'passages' ? 16 : 1
    for (let at = 0; at < texts.length; at += batch) {
      const part = texts.slice(at, at + batch)
      const vectors = as === 'passages' ? await model.embedPassages(part) : await model.embedQueries(part)
      vectors.forEach((v, i) => out.set(v, (at + i) * dims))
      if ((at / batch) % 500 === 0) log(`${name}: ${at} of ${texts.length} embedded`)
    }
  })
  return Array.from({ length: texts.length }, (_, i) => flat.subarray(i * dims, (i + 1) * dims))
}

async function storeOf(dir: string, precision: 'float32' | 'int8', oversample: number, ids: readonly string[], vectors: readonly Float32Array[]): Promise<EmbeddedVectorStore> {
  await rm(dir, { recursive: true, force: true })
  const store = new EmbeddedVectorStore({ dir, precision, oversample, compactionFloorBytes: 1 << 30 })
  await store.ensureCollection('c', vectors[0]!.length)
  for (let at = 0; at < ids.length; at += 2000) {
    await store.write('c', 'default', {
      upsert: ids.slice(at, at + 2000).map((id, i) => ({ id, vector: vectors[at + i]!, payload: { doc_id: id.split('#')[0]!, text: '' } }))
    })
  }
  return store
}

const same = (a: VectorRank[], b: VectorRank[]) => a.length === b.length && a.every((h, i) => h.id === b[i]!.id && h.score === b[i]!.score)

async function quality(set: JudgedSet, chunkVectors: Float32Array[], queryVectors: Float32Array[]): Promise<Record<string, unknown>> {
  const ids = set.chunks.map((c) => c.id)
  const arms: { name: string; precision: 'float32' | 'int8'; oversample: number }[] = [
    { name: 'float32', precision: 'float32', oversample: 1 },
    ...OVERSAMPLES.map((o) => ({ name: `int8 x${o}`, precision: 'int8' as const, oversample: o }))
  ]
  const answers = new Map<string, { top10: VectorRank[]; top50: VectorRank[] }[]>()
  for (const arm of arms) {
    const store = await storeOf(join(tmpdir(), `int8-bench-${process.pid}`), arm.precision, arm.oversample, ids, chunkVectors)
    const out: { top10: VectorRank[]; top50: VectorRank[] }[] = []
    for (const q of queryVectors) out.push({ top10: await store.rank('c', 'default', q, 10), top50: await store.rank('c', 'default', q, 50) })
    answers.set(arm.name, out)
    await store.close()
  }
  const reference = answers.get('float32')!
  const figures = arms.map((arm) => {
    const got = answers.get(arm.name)!
    const runs = got.map((a, i) => ({ ranked: foldToDocuments(a.top50.map((h) => h.id)).slice(0, 10), relevant: set.queries[i]!.relevant }))
    const q = evaluate(runs)
    const ref = evaluate(reference.map((a, i) => ({ ranked: foldToDocuments(a.top50.map((h) => h.id)).slice(0, 10), relevant: set.queries[i]!.relevant })))
    const perQuery = (r: typeof runs[number]) => evaluate([r]).recall_at_10
    const changed = runs.filter((r, i) => perQuery(r) !== perQuery({ ranked: foldToDocuments(reference[i]!.top50.map((h) => h.id)).slice(0, 10), relevant: r.relevant })).length
    return {
      arm: arm.name,
      recall_at_10: r4(q.recall_at_10), mrr_at_10: r4(q.mrr_at_10),
      recall_at_10_minus_float32: r4(q.recall_at_10 - ref.recall_at_10), mrr_at_10_minus_float32: r4(q.mrr_at_10 - ref.mrr_at_10),
      queries_whose_recall_at_10_changed: changed,
      top10_identical_share: r4(got.filter((a, i) => same(a.top10, reference[i]!.top10)).length / got.length),
      top50_identical_share: r4(got.filter((a, i) => same(a.top50, reference[i]!.top50)).length / got.length)
    }
  })
  for (const f of figures) log(`${set.name} ${JSON.stringify(f)}`)
  return { set: set.name, dims: chunkVectors[0]!.length, chunks: ids.length, queries: set.queries.length, relevant: 'documents (chunks folded to their document, first place kept, from the top 50 chunks)', arms: figures }
}

/** Stand-in vectors with the per-dimension mean and spread of `sample` (the real model's), normalised. */
function standIns(sample: readonly Float32Array[], count: number): Float32Array[] {
  const mean = new Float64Array(DIMS)
  const spread = new Float64Array(DIMS)
  for (const v of sample) for (let d = 0; d < DIMS; d++) mean[d]! += v[d]! / sample.length
  for (const v of sample) for (let d = 0; d < DIMS; d++) spread[d]! += (v[d]! - mean[d]!) ** 2 / sample.length
  const random = rng(44)
  return Array.from({ length: count }, () => {
    const v = new Float32Array(DIMS)
    let norm = 0
    for (let d = 0; d < DIMS; d++) {
      const z = Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random())
      v[d] = mean[d]! + Math.sqrt(spread[d]!) * z
      norm += v[d]! * v[d]!
    }
    for (let d = 0; d < DIMS; d++) v[d]! /= Math.sqrt(norm)
    return v
  })
}

/** Off-heap bytes (WebAssembly memory, array buffers) after two full collections when node runs with --expose-gc. */
function offHeap(): number {
  const gc = (globalThis as { gc?: () => void }).gc
  gc?.()
  gc?.()
  return process.memoryUsage().external
}

const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!

async function scan(sample: Float32Array[], queries: Float32Array[], rows: number): Promise<Record<string, unknown>> {
  const vectors = standIns(sample, rows)
  const ids = vectors.map((_, i) => `s${i}#0`)
  type Arm = { store: { rank: EmbeddedVectorStore['rank']; close(): Promise<void> }; bytesPerRow: number; ms10: number[]; ms50: number[] }
  const stores: Record<string, Arm> = {}
  for (const precision of ['float32', 'int8'] as const) {
    const before = offHeap()
    const store = await storeOf(join(tmpdir(), `int8-scan-${precision}-${process.pid}`), precision, 4, ids, vectors)
    await store.rank('c', 'default', queries[0]!, 10)
    stores[precision] = { store, bytesPerRow: (offHeap() - before) / rows, ms10: [], ms50: [] }
    log(`scan: ${precision} store holds ${rows} rows, ${stores[precision].bytesPerRow.toFixed(0)} bytes a row off-heap`)
  }
  if (values.base) {
    // the float32 store of another tree (--base DIR), opened on the files this tree's float32 store wrote
    const { EmbeddedVectorStore: BaseStore } = (await import(join(values.base, 'src/providers/vector-store/embedded.ts'))) as { EmbeddedVectorStore: typeof EmbeddedVectorStore }
    const store = new BaseStore({ dir: join(tmpdir(), `int8-scan-float32-${process.pid}`) })
    await store.rank('c', 'default', queries[0]!, 10)
    stores['base float32'] = { store, bytesPerRow: Number.NaN, ms10: [], ms50: [] }
  }
  const names = Object.keys(stores)
  const loads: number[] = [loadavg()[0]!]
  for (let round = 0; round < 2; round++) {
    for (let i = 0; i < queries.length; i++) {
      const shift = (i + round) % names.length
      for (const name of [...names.slice(shift), ...names.slice(0, shift)]) {
        for (const limit of [10, 50] as const) {
          const started = performance.now()
          await stores[name]!.store.rank('c', 'default', queries[i]!, limit)
          const ms = performance.now() - started
          if (round > 0) stores[name]![limit === 10 ? 'ms10' : 'ms50'].push(ms)
        }
      }
    }
    loads.push(loadavg()[0]!)
  }
  const summary = (xs: number[]) => ({ p50_ms: r4(percentile(xs, 50)), p99_ms: r4(percentile(xs, 99)) })
  const ratio = (a: Arm, b: Arm) => ({
    p50_limit_10: r4(percentile(a.ms10, 50) / percentile(b.ms10, 50)), p50_limit_50: r4(percentile(a.ms50, 50) / percentile(b.ms50, 50)),
    p99_limit_10: r4(percentile(a.ms10, 99) / percentile(b.ms10, 99)), p99_limit_50: r4(percentile(a.ms50, 99) / percentile(b.ms50, 99))
  })
  const f = stores['float32']!
  const q = stores['int8']!
  const base = stores['base float32']
  for (const s of Object.values(stores)) await s.store.close()
  return {
    rows, dims: DIMS, queries: queries.length, oversample: 4,
    vectors: 'stand-in: per-dimension Gaussian with the mean and spread of the real model over the CMRC dev chunks, normalised',
    load_1min: loads.map((l) => Math.round(l * 10) / 10),
    bytes_a_row_off_heap: { float32: Math.round(f.bytesPerRow), int8: Math.round(q.bytesPerRow), int8_float_file_on_disk: DIMS * 4 },
    float32: { limit_10: summary(f.ms10), limit_50: summary(f.ms50) },
    int8: { limit_10: summary(q.ms10), limit_50: summary(q.ms50) },
    int8_over_float32: ratio(q, f),
    ...(base ? { base: values.base, base_float32: { limit_10: summary(base.ms10), limit_50: summary(base.ms50) }, float32_over_base_float32: ratio(f, base) } : {})
  }
}

/**
 * Writing `rows` stand-ins 100 a write into a float32 store and an int8 one (default compaction: a write may wait for
 * the compaction queued behind the one before), the order alternating write by write; then closing both and opening
 * each again (until its first search answers) three times, the order alternating.
 */
async function costs(sample: Float32Array[], query: Float32Array, rows: number): Promise<Record<string, unknown>> {
  const vectors = standIns(sample, rows)
  const arms = (['float32', 'int8'] as const).map((precision) => ({ precision, dir: join(tmpdir(), `int8-costs-${precision}-${process.pid}`), writes: [] as number[], opens: [] as number[] }))
  const stores = new Map<string, EmbeddedVectorStore>()
  for (const arm of arms) {
    await rm(arm.dir, { recursive: true, force: true })
    const store = new EmbeddedVectorStore({ dir: arm.dir, precision: arm.precision })
    await store.ensureCollection('c', DIMS)
    stores.set(arm.precision, store)
  }
  const loads = [loadavg()[0]!]
  for (let at = 0, n = 0; at < rows; at += 100, n++) {
    const upsert = vectors.slice(at, at + 100).map((vector, i) => ({ id: `s${at + i}#0`, vector, payload: { doc_id: `s${at + i}`, text: '' } }))
    for (const arm of n % 2 === 0 ? arms : [...arms].reverse()) {
      const started = performance.now()
      await stores.get(arm.precision)!.write('c', 'default', { upsert })
      arm.writes.push(performance.now() - started)
    }
  }
  loads.push(loadavg()[0]!)
  for (const store of stores.values()) await store.close()
  for (let round = 0; round < 3; round++) {
    for (const arm of round % 2 === 0 ? arms : [...arms].reverse()) {
      const started = performance.now()
      const store = new EmbeddedVectorStore({ dir: arm.dir, precision: arm.precision })
      await store.rank('c', 'default', query, 10)
      arm.opens.push(performance.now() - started)
      await store.close()
    }
  }
  loads.push(loadavg()[0]!)
  for (const arm of arms) await rm(arm.dir, { recursive: true, force: true })
  const [f, q] = arms as [typeof arms[0], typeof arms[0]]
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0)
  const figures = (arm: typeof f) => ({
    write_100_rows: { p50_ms: r4(percentile(arm.writes, 50)), p99_ms: r4(percentile(arm.writes, 99)), total_s: r4(sum(arm.writes) / 1000) },
    open_ms: arm.opens.map((ms) => Math.round(ms))
  })
  log(`costs: float32 ${JSON.stringify(figures(f))}, int8 ${JSON.stringify(figures(q))}`)
  return {
    rows, writes_of: 100, load_1min: loads.map((l) => Math.round(l * 10) / 10),
    float32: figures(f), int8: figures(q),
    int8_over_float32: {
      write_p50: r4(percentile(q.writes, 50) / percentile(f.writes, 50)), write_total: r4(sum(q.writes) / sum(f.writes)),
      open_median: r4(percentile(q.opens, 50) / percentile(f.opens, 50))
    }
  }
}

async function main(): Promise<void> {
  const started = new Date().toISOString()
  const model = createEmbedder({ backend: 'local', modelDir: process.env['MODEL_DIR'] ?? './models', modelName: 'bge-small-zh-v1.5', threads: 1, sessions: 0 })
  const cmrc = await loadCmrcDev(values.cmrc)
  log(`CMRC dev: ${cmrc.chunks.length} chunks, ${cmrc.queries.length} queries`)
  const cmrcChunks = await cachedVectors(model, 'cmrc-dev-chunks', cmrc.chunks.map((c) => c.text), 'passages')
  const cmrcQueries = await cachedVectors(model, 'cmrc-dev-queries', cmrc.queries.map((q) => q.query), 'queries')
  const results: Record<string, unknown>[] = []
  const sets = new Set(values.sets.split(','))
  if (PARTS.has('quality')) {
    if (sets.has('cmrc')) results.push(await quality(cmrc, cmrcChunks, cmrcQueries))
    if (sets.has('cmrc-crowded')) {
      const extra = standIns(cmrcChunks, Number(values.distractors))
      const crowded: JudgedSet = { ...cmrc, name: `CMRC 2018 dev + ${extra.length} stand-in rows`, chunks: [...cmrc.chunks, ...extra.map((_, i) => ({ id: `x${i}#0`, text: '' }))] }
      results.push(await quality(crowded, [...cmrcChunks, ...extra], cmrcQueries))
    }
    if (sets.has('kuake')) {
      const kuake = await loadKuake(values.kuake, Number(values.titles))
      log(`${kuake.name}: ${kuake.chunks.length} chunks, ${kuake.queries.length} queries`)
      const kuakeChunks = await cachedVectors(model, 'kuake-titles', kuake.chunks.map((c) => c.text), 'passages')
      const kuakeQueries = await cachedVectors(model, 'kuake-dev-queries', kuake.queries.map((q) => q.query), 'queries')
      results.push(await quality(kuake, kuakeChunks, kuakeQueries))
    }
    if (sets.has('cmrc-trial')) {
      const trial = await loadCmrcDev(values['cmrc-trial'], 'CMRC 2018 trial')
      log(`${trial.name}: ${trial.chunks.length} chunks, ${trial.queries.length} queries`)
      const trialChunks = await cachedVectors(model, 'cmrc-trial-chunks', trial.chunks.map((c) => c.text), 'passages')
      const trialQueries = await cachedVectors(model, 'cmrc-trial-queries', trial.queries.map((q) => q.query), 'queries')
      results.push(await quality(trial, trialChunks, trialQueries))
    }
  }
  await model.close()
  if (PARTS.has('quality') && sets.has('locomo')) {
    const english = createEmbedder({ backend: 'local', modelDir: process.env['MODEL_DIR'] ?? './models', modelName: 'bge-small-en-v1.5', threads: 1, sessions: 0 })
    const locomo = await loadLocomoSet()
    log(`${locomo.name}: ${locomo.chunks.length} chunks, ${locomo.queries.length} queries`)
    const turnVectors = await cachedVectors(english, 'locomo-2-9-turns', locomo.chunks.map((c) => c.text), 'passages', locomo.dims)
    const questionVectors = await cachedVectors(english, 'locomo-2-9-questions', locomo.queries.map((q) => q.query), 'queries', locomo.dims)
    await english.close()
    results.push(await quality(locomo, turnVectors, questionVectors))
  }
  const scanFigures = PARTS.has('scan') ? await scan(cmrcChunks, cmrcQueries.slice(0, Number(values.queries)), Number(values.rows)) : undefined
  const costFigures = PARTS.has('costs') ? await costs(cmrcChunks, cmrcQueries[0]!, Number(values.rows)) : undefined
  const out = {
    bench: 'int8-vectors', started, finished: new Date().toISOString(),
    machine: { cpus: cpus().length, memory_gib: Math.round(totalmem() / 2 ** 30) },
    command: `${(globalThis as { gc?: unknown }).gc ? 'node --expose-gc --import tsx' : 'npx tsx'} bench/int8-vectors.ts ${process.argv.slice(2).join(' ')}`.trim(),
    model: 'bge-small-zh-v1.5 (bge-small-en-v1.5 for LoCoMo; q8 ONNX, in process): passages 16 a run, queries one at a time',
    quality: results,
    ...(scanFigures ? { scan: scanFigures } : {}),
    ...(costFigures ? { costs: costFigures } : {})
  }
  await writeFile(values.out, `${JSON.stringify(out, null, 2)}\n`)
  log(`wrote ${values.out}`)
}

await main()

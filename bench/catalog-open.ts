/**
 * The start-up step `documents` alone (issue 44, item 1): every namespace's document library opened over a copy of a
 * kept DATA_DIR's chunk collection and lexical index (`vectors/recall_chunks.*`, `bm25/`), in a process of its own per
 * run, this tree beside `--base`, interleaved round by round (base first in odd rounds). Three arms: `base` (its
 * scroll of the vector store), `this` (the catalog read from the checkpoint file this tree's clean close wrote, with the
 * lexical index as kept), `this-scroll` (this tree without the file: the fallback). Each arm first folds its own copy's
 * vector log into its own snapshot form; `this` then opens once and closes cleanly, which writes the file.
 *
 * Reported per run: CPU and wall of `DocumentLibraries.open()` (the vector partition's load included), heap and
 * off-heap held after it (after full collections), where each catalog came from, and a digest of what the library
 * answers (every document listed, every chunk record, 8 lexical searches), which must be equal across arms.
 *
 *   node --expose-gc --import tsx bench/catalog-open.ts --from DIR --base TREE [--rounds 3] [--out FILE]
 */
import { createHash } from 'node:crypto'
import { execFileSync } from 'node:child_process'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { foldVectorsWith } from './lib/fold-graph.js'
import { loadTree, measureInChild, type Tree } from './lib/tree.js'
import { median } from './lib/median.js'

const { values } = parseArgs({
  options: {
    from: { type: 'string' },
    base: { type: 'string' },
    rounds: { type: 'string', default: '3' },
    out: { type: 'string', default: 'bench/results/catalog-open.json' },
    worker: { type: 'string' },
    name: { type: 'string' },
    dir: { type: 'string' },
    checkpoints: { type: 'string' },
    prime: { type: 'boolean', default: false }
  }
})
const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d
const MiB = 2 ** 20
const log = (line: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`)
const gc = (globalThis as { gc?: () => void }).gc!
const COLLECTION = 'recall_chunks'
const QUERIES = ['范廷颂是什么时候被任为主教的？', '北京大学', '历史 文化', '音乐 专辑', '战争', '公司 成立', '足球 比赛', '植物 分布']

if (values.worker) {
  const tree = loadTree(values.name!, values.worker)
  const [{ EmbeddedVectorStore }, { EmbeddedLexicalIndexes }, { DocumentLibraries }, { LocalEmbedder }, { modelDir }] = await Promise.all([
    tree.module('src/providers/vector-store/embedded.ts'), tree.module('src/providers/lexical-index/indexes.ts'),
    tree.module('src/corpus/libraries.ts'), tree.module('src/providers/embedder/local.ts'), tree.module('bench/lib/corpus.ts')
  ])
  const dir = values.dir!
  // the model is named for its dimension only: opening a catalog embeds nothing
  const embedder = new LocalEmbedder({ modelDir: modelDir(), modelName: 'bge-small-zh-v1.5' })
  gc()
  const before = process.memoryUsage()
  const cpu = process.cpuUsage()
  const started = performance.now()
  const vectors = new EmbeddedVectorStore({ dir: join(dir, 'vectors') })
  const lexical = new EmbeddedLexicalIndexes({ dir: join(dir, 'bm25'), name: 'chunks' })
  const libraries = new DocumentLibraries({ vectors, embedder, lexical }, {
    collection: COLLECTION, ...(values.checkpoints === 'true' ? { checkpointDir: join(dir, 'catalog') } : {})
  })
  await libraries.open()
  const wallMs = performance.now() - started
  const used = process.cpuUsage(cpu)
  gc()
  await new Promise((r) => setTimeout(r, 50))
  gc()
  const after = process.memoryUsage()
  const digest = createHash('sha256')
  for (const namespace of libraries.namespaces()) {
    const library = libraries.get(namespace)
    for (const d of library.list()) {
      digest.update(JSON.stringify(d))
      for (const id of library.storedChunks(d.id).keys()) digest.update(JSON.stringify(library.chunk(id)))
    }
    for (const q of QUERIES) digest.update(JSON.stringify(await lexical.get(namespace).search(q, 10)))
  }
  const wrote = values.prime ? await libraries.checkpoint?.() : undefined
  await lexical.close()
  await vectors.close()
  process.send!({
    arm: values.name, chunks: libraries.chunkCount, opened_from: Object.fromEntries(libraries.openedFrom ?? []),
    cpu_seconds: round((used.user + used.system) / 1e6, 2), wall_seconds: round(wallMs / 1000, 2),
    heap_mib: round((after.heapUsed - before.heapUsed) / MiB), off_heap_mib: round((after.external - before.external) / MiB),
    answers_sha256: digest.digest('hex'), ...(wrote !== undefined ? { checkpoints_written: wrote } : {})
  })
  process.exit(0)
}

if (!values.from || !values.base) throw new Error('--from DIR (a DATA_DIR kept by bench/memory.ts --keep) and --base TREE')
const script = fileURLToPath(import.meta.url)
const here = loadTree('this', '.')
const base = loadTree('base', values.base)
const arms: Array<{ name: string; tree: Tree; checkpoints: boolean }> = [
  { name: 'base', tree: base, checkpoints: false }, { name: 'this', tree: here, checkpoints: true }, { name: 'this-scroll', tree: here, checkpoints: false }
]
const dirs = new Map<string, string>()
const runs: Record<string, unknown>[] = []
const measure = (arm: (typeof arms)[number], extra: string[] = []) =>
  measureInChild(script, { ...arm.tree, name: arm.name }, ['--dir', dirs.get(arm.name)!, '--checkpoints', String(arm.checkpoints), ...extra])
try {
  for (const arm of arms) {
    const data = await mkdtemp(join(tmpdir(), `recall-catalog-open-${arm.name}-`))
    await mkdir(join(data, 'vectors'))
    execFileSync('sh', ['-c', `cp -a "$1"/vectors/recall_chunks.* "$2"/vectors/ && cp -a "$1"/bm25 "$2"/`, 'sh', resolve(values.from), data])
    await foldVectorsWith(arm.tree.dir, data)
    dirs.set(arm.name, data)
    // this arm's clean close writes the catalog's file (and syncs the lexical index the folder kept, as any open does)
    if (arm.checkpoints) log(`${arm.name}: primed ${JSON.stringify(await measure(arm, ['--prime']))}`)
  }
  for (let r = 1; r <= Number(values.rounds); r++) {
    for (const arm of r % 2 === 1 ? arms : [...arms].reverse()) {
      const run = { round: r, load_1m_at_start: round(loadavg()[0]!), ...(await measure(arm)) }
      log(JSON.stringify(run))
      runs.push(run)
    }
  }
} finally {
  for (const dir of dirs.values()) await rm(dir, { recursive: true, force: true })
}
const of = (arm: string, key: string) => median(runs.filter((r) => r['arm'] === arm).map((r) => r[key] as number))
const keys = ['cpu_seconds', 'wall_seconds', 'heap_mib', 'off_heap_mib']
const figures = (arm: string) => Object.fromEntries(keys.map((k) => [k, of(arm, k)]))
const summary = {
  ...Object.fromEntries(arms.map((a) => [a.name, figures(a.name)])),
  this_over_base: Object.fromEntries(keys.map((k) => [k, round(of('this', k) / of('base', k), 3)])),
  this_scroll_over_base: Object.fromEntries(keys.map((k) => [k, round(of('this-scroll', k) / of('base', k), 3)])),
  answers_identical: new Set(runs.map((r) => r['answers_sha256'])).size === 1
}
log(JSON.stringify(summary))
await writeFile(values.out, `${JSON.stringify({
  generated_by: 'bench/catalog-open.ts', at: new Date().toISOString(), from: resolve(values.from),
  commits: { this: here.commit, base: base.commit }, machine: { cpus: cpus().length, node: process.version, note: 'shared machine, every process at nice 19' },
  load_average_at_end: loadavg().map((x) => round(x)), summary, runs
}, null, 2)}\n`)
log(`wrote ${values.out}`)

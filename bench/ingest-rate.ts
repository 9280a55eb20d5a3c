/**
 * End-to-end ingestion rate with the real local model (chunking, embedding, vector write, lexical write),
 * on the synthetic CMRC chunks of bench/hybrid.ts, through the service's write path (`services.writePath.write`, embedded
 * stores, 100 documents per write, no derived graph or Episodes). Writes bench/results/ingest-rate.json.
 *
 *   npx tsx bench/ingest-rate.ts [--chunks 600]
 *   npx tsx bench/ingest-rate.ts --chunks 10000 --base ../wt-base [--titled] [--rounds 1]
 *
 * With `--base DIR` (a checkout of another tree, node_modules and models linked) it runs this tree and that one side
 * by side in one run, each ingest in a child process of its own that imports the tree's own services, stores and
 * embedder, in the order base, this, this, base per round (drift on a busy machine falls on both). With `--titled`
 * the same corpus is ingested a second time with a title on every document: this tree embeds and indexes it as the
 * chunk's contextual header (docs/chunking.md), a tree before the header did not, so the two rates give its cost.
 */
import { execFile } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'
import { parseArgs } from 'node:util'
import { loadCmrc } from './lib/cmrc.js'
import { benchEnv, modelDir } from './lib/corpus.js'
import { syntheticDocuments } from './lib/synthetic.js'
import { loadTree } from './lib/tree.js'

const { values } = parseArgs({
  options: {
    chunks: { type: 'string', default: '600' }, base: { type: 'string' }, titled: { type: 'boolean', default: false },
    rounds: { type: 'string', default: '1' },
    // the child's part: ingest with the library of this tree, print one JSON line
    tree: { type: 'string' }, title: { type: 'boolean', default: false }
  }
})
const count = Number(values.chunks)

interface Run {
  tree: string
  titled: boolean
  chunks: number
  mean_chunk_chars: number
  seconds: number
  chunks_per_second: number
  /** Tokens (the model's tokenizer, [CLS] and [SEP] included) of the texts the tree embedded, per text. */
  mean_tokens_embedded: number
  load_before: number
  load_after: number
}

/** A document title per synthetic document, of the length titles of real documents have (10 to 16 characters). */
const titleOf = (i: number) => `中文阅读理解资料第${i}篇：段落摘录`

/** Ingests the synthetic corpus through the write path of `tree`'s services, in a fresh folder. */
async function ingestWith(tree: string, titled: boolean): Promise<Run> {
  const checkout = loadTree('tree', tree)
  const { LocalEmbedder } = await checkout.module('src/providers/embedder/local.ts')
  const { documents } = await loadCmrc()
  const docs = syntheticDocuments(documents.map((d) => d.text), count).map((d, i) => (titled ? { ...d, title: titleOf(i) } : d))
  const dir = await mkdtemp(join(tmpdir(), 'recall-ingest-'))
  const embedder = new LocalEmbedder({ modelDir: modelDir(), modelName: 'bge-small-zh-v1.5' })
  await embedder.init()
  // the texts the tree embeds (the chunk, after its contextual header where the tree has one), counted after the timing
  const embeddedTexts: string[] = []
  const embedPassages = embedder.embedPassages.bind(embedder)
  embedder.embedPassages = (texts: readonly string[]) => {
    embeddedTexts.push(...texts)
    return embedPassages(texts)
  }
  const services = await checkout.openServices(await checkout.loadConfig(benchEnv(dir)), (base: object) => ({ ...base, embedder }))
  embeddedTexts.length = 0 // what start-up embedded is not the ingest's
  const loadBefore = loadavg()[0]!
  const started = performance.now()
  for (let i = 0; i < docs.length; i += 100) await checkout.write(services, 'default', { kind: 'documents', op: 'upsert', documents: docs.slice(i, i + 100) })
  const seconds = (performance.now() - started) / 1000
  const loadAfter = loadavg()[0]!
  const library = services.documents.get('default')
  const chars = docs.reduce((n, d) => n + [...d.text].length, 0)
  const { AutoTokenizer } = await import('@huggingface/transformers')
  const tokenizer = await AutoTokenizer.from_pretrained(join(modelDir(), 'bge-small-zh-v1.5'), { local_files_only: true })
  const tokens = embeddedTexts.reduce((n, text) => n + tokenizer.encode(text).length, 0)
  const run: Run = {
    tree, titled, chunks: library.chunkCount, mean_chunk_chars: Math.round(chars / docs.length),
    seconds: Math.round(seconds * 10) / 10, chunks_per_second: Math.round((library.chunkCount / seconds) * 10) / 10,
    mean_tokens_embedded: Math.round((tokens / Math.max(1, embeddedTexts.length)) * 10) / 10,
    load_before: loadBefore, load_after: loadAfter
  }
  await services.close()
  await rm(dir, { recursive: true, force: true })
  return run
}

const exec = promisify(execFile)

/** One ingest in a child process of its own (the tree's modules, a fresh heap and model). */
async function child(tree: string, titled: boolean): Promise<Run> {
  const args = ['--import', 'tsx', 'bench/ingest-rate.ts', '--tree', tree, '--chunks', String(count), ...(titled ? ['--title'] : [])]
  const { stdout } = await exec(process.execPath, args, { maxBuffer: 1 << 24 })
  const run = JSON.parse(stdout.trim().split('\n').at(-1)!) as Run
  console.error(JSON.stringify(run))
  return run
}

if (values.tree) {
  console.log(JSON.stringify(await ingestWith(resolve(values.tree), values.title)))
} else if (!values.base) {
  const run = await ingestWith(resolve('.'), false)
  const result = {
    date: new Date().toISOString(), chunks: run.chunks, mean_chunk_chars: run.mean_chunk_chars, seconds: run.seconds,
    chunks_per_second: run.chunks_per_second, load_average: [run.load_before, run.load_after],
    batch: '100 documents per write (the write path), local model with batchSize 1'
  }
  console.log(JSON.stringify(result))
  await writeFile('bench/results/ingest-rate.json', `${JSON.stringify(result, null, 2)}\n`)
} else {
  const trees = { base: resolve(values.base), this: resolve('.') }
  const runs: (Run & { name: string })[] = []
  for (let r = 0; r < Number(values.rounds); r++) {
    for (const titled of values.titled ? [false, true] : [false]) {
      const order = (r + (titled ? 1 : 0)) % 2 === 0 ? (['base', 'this'] as const) : (['this', 'base'] as const)
      for (const name of order) runs.push({ name, ...await child(trees[name], titled) })
    }
  }
  const rate = (name: string, titled: boolean) => {
    const own = runs.filter((x) => x.name === name && x.titled === titled)
    return own.reduce((n, x) => n + x.chunks_per_second, 0) / own.length
  }
  const compare = (titled: boolean) => ({
    base_chunks_per_second: rate('base', titled), this_chunks_per_second: rate('this', titled),
    this_over_base: Math.round((rate('this', titled) / rate('base', titled)) * 1000) / 1000
  })
  const result = {
    date: new Date().toISOString(), chunks: count, base: values.base,
    plain: compare(false), ...(values.titled ? { titled: compare(true) } : {}),
    runs: runs.map(({ tree: _, ...x }) => x),
    batch: '100 documents per write (the write path), local model with batchSize 1, each ingest in its own process, embedded stores'
  }
  console.log(JSON.stringify(result, null, 2))
  await writeFile(`bench/results/ingest-rate-${count}-side-by-side.json`, `${JSON.stringify(result, null, 2)}\n`)
}
